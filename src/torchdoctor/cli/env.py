"""`torchdoctor env`: CUDA toolkits, host compiler, GPU architecture, DeepSpeed, driver — and the exact
command that prebuilds DeepSpeed's ops for this machine."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from torchdoctor.cli.app import JSON, ROOT, VERBOSE, app, exit_with_findings
from torchdoctor.errors import BadInput, require_folder


@app.command()
def env(
    as_json: bool = JSON,
    verbose: bool = VERBOSE,
    deepspeed_build: bool = typer.Option(
        False, "--deepspeed-build", help="Print the command that prebuilds DeepSpeed's ops for this machine."
    ),
    wheel: bool = typer.Option(
        False, "--wheel", help="With --deepspeed-build: build a binary wheel to install on many machines."
    ),
    arch: str | None = typer.Option(
        None,
        "--arch",
        metavar="LIST",
        help='With --deepspeed-build: TORCH_CUDA_ARCH_LIST to use, e.g. "8.0;9.0".',
    ),
    root: str = ROOT,
) -> None:
    """Diagnose the CUDA build set-up: toolkits, gcc, GPU architectures, DeepSpeed, driver, NCCL."""
    require_folder("--root", root)
    root = Path(root)
    if (wheel or arch is not None) and not deepspeed_build:  # --arch "" is given too
        raise BadInput(f"{'--wheel' if wheel else '--arch'} only goes with --deepspeed-build")
    if deepspeed_build:
        _print_deepspeed_build(wheel, arch, root, as_json)
        raise typer.Exit(0)
    from torchdoctor.checks import discover, run_checks
    from torchdoctor.system import check_torch
    from torchdoctor.torch_import import import_failure

    findings = run_checks(discover(["torchdoctor.env.checks"], root=root))
    if import_failure() is not None:  # the facts above come from torch's version file: say why
        findings.insert(0, check_torch())
    exit_with_findings(findings, as_json, verbose)


def _print_deepspeed_build(wheel: bool, arch_value: str | None, root: Path, as_json: bool) -> None:
    import os

    from torchdoctor.env import arch, deepspeed
    from torchdoctor.env.checks import NO_EXTENSIONS
    from torchdoctor.env.machine import scan

    arch_list = None
    if arch_value is not None:  # checked before the scan, which imports torch: a typo is refused at once
        try:
            entries = arch.parse_arch_list(arch_value, any_case=True)
        except ValueError as error:
            raise BadInput(f"--arch {arch_value!r}: {error}") from None
        if not entries:  # "" or ";": the build would silently target whatever torch guesses
            raise BadInput(
                f'--arch {arch_value!r}: no compute capability in it; give one or more, e.g. --arch "8.0;9.0"'
            )
        arch_list = ";".join(entries)  # "8.0;;9.0" -> "8.0;9.0", names expanded
    machine = scan(root=root)
    facts = machine.torch
    notes = []
    if arch_value is None:
        gpus = machine.gpus
        arch_list = arch.recommended_arch_list(c for _, c in gpus) if gpus else None
        if not arch_list:
            notes.append(
                "no GPU found here: add TORCH_CUDA_ARCH_LIST with the compute capabilities of the GPUs that "
                'will run it (--arch "8.0;9.0" fills it in)'
            )
    headers = deepspeed.libaio_headers(root, machine.environ)
    if headers is None:
        notes.append(
            f"DS_BUILD_AIO=1 left out: libaio headers not found ({root / 'usr/include/libaio.h'}); "
            "for the async_io op: sudo apt install libaio-dev"
        )
    if not facts.cuda:
        notes.insert(
            0, f"torch {facts.version} is a CPU-only build: {NO_EXTENSIONS}; install a CUDA torch first"
        )
    jobs = os.cpu_count() or 1
    command = deepspeed.prebuild_command(arch_list, headers is not None, jobs, wheel)
    if as_json:
        data = {"command": command, "notes": notes, "arch_list": arch_list, "libaio": headers, "jobs": jobs}
        print(json.dumps(data, indent=2))
        return
    for note in notes:
        print(f"# {note}")
    print(command)
