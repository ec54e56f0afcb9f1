"""``env.*`` checks: CUDA toolkits, host compiler, GPU architecture, DeepSpeed, driver.

Each check takes one `Machine`: the look at the machine `scan` takes once (the environment, the root where
``/usr/local/cuda-*`` and ``/opt/cuda*`` are looked for, how ``nvcc``/``gcc``/``nvidia-smi`` are run, what
torch was built for, the toolkits, the build toolkit, the GPUs, the driver). Tests scan a fake tree.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from packaging.version import Version

from torchdoctor.checks import verdict_of
from torchdoctor.env import arch, compiler, deepspeed, driver, toolkits
from torchdoctor.env.machine import Machine, scan  # noqa: F401  scan: this area's one look (checks.discover)
from torchdoctor.env.toolkits import Toolkit
from torchdoctor.env.wheels import (
    TORCH_WHEEL_CUDA,
    cuda_torch_install,
    newest_wheel_for_driver,
    torch_index_url,
    torch_wheel_for_toolkit,
)
from torchdoctor.findings import Finding

AREA = "env"

NO_EXTENSIONS = "no CUDA extension (DeepSpeed ops, flash-attn, apex, …) can be built with it"


def _install_toolkit_hint(cuda: str) -> str:
    return (
        f"# install the CUDA {cuda} toolkit: https://developer.nvidia.com/cuda-toolkit-archive, or into a conda env:\n"
        f"conda install -c nvidia cuda-toolkit={cuda}"
    )


def _matching_toolkit(found: Iterable[Toolkit], cuda: str) -> Toolkit | None:
    """An installed, complete toolkit of release ``cuda``, else one of the same major."""
    complete = [t for t in found if not t.missing]
    return next((t for t in complete if t.version == cuda), None) or next(
        (t for t in complete if t.version and t.version.split(".")[0] == cuda.split(".")[0]), None
    )


def check_toolkits(machine: Machine) -> Finding:
    """Every CUDA toolkit on the machine, with its version and whether bin/, lib64/ and libcudart exist."""
    verdict = verdict_of(check_toolkits)
    facts = machine.torch
    found = machine.toolkits
    details = {"toolkits": [t.to_dict() for t in found]}
    if not found:
        if facts.cuda:
            return verdict(
                "warn",
                f"no CUDA toolkit found: torch (CUDA {facts.cuda}) runs, but {NO_EXTENSIONS}",
                details,
                _install_toolkit_hint(facts.cuda),
            )
        return verdict("skip", "no CUDA toolkit found", details)
    listed = "; ".join(t.describe() for t in found)
    return verdict("ok", f"{len(found)} CUDA toolkit(s): {listed}", details)


def check_build_toolkit(machine: Machine) -> Finding:
    """The toolkit an extension build would use (torch's order: CUDA_HOME, CUDA_PATH, nvcc on PATH,
    /usr/local/cuda), and whether CUDA_HOME, PATH and LD_LIBRARY_PATH agree on it."""
    verdict = verdict_of(check_build_toolkit)
    environ, facts = machine.environ, machine.torch
    found = machine.toolkits
    set_home = next((name for name in ("CUDA_HOME", "CUDA_PATH") if environ.get(name)), None)
    if set_home and not os.path.isdir(environ[set_home]):
        best = (
            _matching_toolkit(found, facts.cuda)
            if facts.cuda
            else next((t for t in found if not t.missing), None)
        )
        return verdict(
            "fail",
            f"{set_home}={environ[set_home]} does not exist",
            {"variable": set_home, "value": environ[set_home]},
            toolkits.prepend_lines(best) if best else f"unset {set_home}",
        )
    chosen = machine.build_toolkit
    if chosen is None:
        return verdict("skip", "no CUDA toolkit for an extension build to use", {})
    how = next(
        h for h in chosen.found_as if h in ("CUDA_HOME", "CUDA_PATH", "nvcc on PATH", "/usr/local/cuda")
    )
    details = {"toolkit": chosen.to_dict(), "chosen_by": how}
    replacement = next(
        (t for t in found if not t.missing and t.version == chosen.version and t is not chosen), None
    ) or (_matching_toolkit(found, facts.cuda) if facts.cuda else None)
    if chosen.missing:
        status = "fail" if facts.cuda and not chosen.nvcc else "warn"
        fix = (
            toolkits.prepend_lines(replacement)
            if replacement
            else _install_toolkit_hint(chosen.version or facts.cuda or "12.8")
        )
        return verdict(
            status,
            f"builds would use {chosen.home} (by {how}), which lacks {', '.join(chosen.missing)}",
            details,
            fix,
        )
    # Another toolkit first on PATH or LD_LIBRARY_PATH bites only when its version differs.
    disagreements = []
    nvcc_on_path = toolkits.which("nvcc", environ)
    owner = toolkits.toolkit_owning(nvcc_on_path, found) if nvcc_on_path else None
    if owner is not None and owner.version != chosen.version:
        disagreements.append(f"nvcc on PATH is {nvcc_on_path} (CUDA {owner.version or '?'})")
    cudart = toolkits.first_libcudart(environ)
    if cudart:
        owner = toolkits.toolkit_owning(cudart, found)
        version = owner.version if owner else toolkits.libcudart_version(cudart)
        if not (version and chosen.version and chosen.version.startswith(version)):
            disagreements.append(f"LD_LIBRARY_PATH finds {cudart} first (CUDA {version or '?'})")
    details |= {"nvcc_on_path": nvcc_on_path, "first_libcudart": cudart, "disagreements": disagreements}
    summary = f"builds use {chosen.home} (CUDA {chosen.version}, by {how})"
    if disagreements:
        return verdict(
            "warn",
            f"{summary}, but {'; '.join(disagreements)}",
            details,
            toolkits.prepend_lines(chosen),
        )
    return verdict("ok", f"{summary}; PATH and LD_LIBRARY_PATH agree", details)


def check_toolkit_mismatch(machine: Machine) -> Finding:
    """torch's CUDA against the toolkit a build would use: a major mismatch fails, a minor one warns
    (as torch's cpp_extension does); a CPU-only torch is said plainly."""
    verdict = verdict_of(check_toolkit_mismatch)
    facts = machine.torch
    if facts.hip:
        return verdict(
            "skip",
            f"torch {facts.version} is a ROCm build; CUDA toolkits do not apply",
        )
    found, chosen = machine.toolkits, machine.build_toolkit
    details = {
        "torch": facts.version,
        "torch_cuda": facts.cuda,
        "toolkit": chosen.to_dict() if chosen else None,
    }
    if not facts.cuda:
        summary = f"torch {facts.version} is a CPU-only build: {NO_EXTENSIONS}"
        gpus = machine.gpus
        if not gpus:
            return verdict("skip", summary, details)
        version = machine.driver
        return verdict(
            "warn",
            f"{summary}, and it cannot use the {len(gpus)} GPU(s) nvidia-smi lists",
            details | {"gpus": [list(g) for g in gpus], "driver": version},
            cuda_torch_install(version, (chosen.version if chosen else None) or "12.8"),
        )
    if chosen is None or not chosen.version:
        return verdict(
            "skip",
            f"torch is built with CUDA {facts.cuda}; no toolkit to compare",
            details,
        )
    torch_cuda, toolkit_cuda = Version(facts.cuda), Version(chosen.version)
    if torch_cuda.release[:2] == toolkit_cuda.release[:2]:
        return verdict(
            "ok",
            f"torch is built with CUDA {facts.cuda}, the toolkit at {chosen.home} is {chosen.version}",
            details,
        )
    status = "fail" if torch_cuda.major != toolkit_cuda.major else "warn"
    match = _matching_toolkit([t for t in found if t is not chosen], facts.cuda)
    if match:
        fix = f"# use the installed CUDA {match.version} toolkit:\n{toolkits.prepend_lines(match)}"
    else:
        fix = _install_toolkit_hint(facts.cuda)
        wheel = torch_wheel_for_toolkit(chosen.version)
        if wheel:
            fix += f"\n# or a torch built for your CUDA {chosen.version} toolkit:\npip install --force-reinstall torch --index-url {torch_index_url(wheel)}"
    kind = "major" if status == "fail" else "minor"
    effect = (
        "extension builds stop with 'The detected CUDA version … mismatches'"
        if status == "fail"
        else "torch builds extensions but warns"
    )
    return verdict(
        status,
        f"CUDA {kind} version mismatch: toolkit {chosen.home} is {chosen.version}, torch is built with {facts.cuda} ({effect})",
        details,
        fix,
    )


def check_host_compiler(machine: Machine) -> Finding:
    """The gcc nvcc will use (CC, else gcc/g++ in the toolkit's bin/ or on PATH), the CXX (or c++) torch
    checks, and CUDAHOSTCXX, against the newest gcc that toolkit's nvcc accepts."""
    verdict = verdict_of(check_host_compiler)
    environ = machine.environ
    chosen = machine.build_toolkit
    if chosen is None or not chosen.version:
        return verdict("skip", "no CUDA toolkit, so no nvcc host compiler to check")
    newest, source = compiler.newest_gcc(chosen)
    compilers = compiler.host_compilers(chosen, environ, machine.run)
    details = {
        "toolkit": chosen.home,
        "cuda": chosen.version,
        "newest_gcc": newest,
        "newest_gcc_from": source,
        "compilers": [c.__dict__ for c in compilers],
    }
    if not compilers:
        return verdict(
            "warn",
            "no gcc found on PATH: nvcc needs a host compiler",
            details,
            compiler.compiler_fix(chosen, newest, environ, machine.root)
            if newest
            else "sudo apt install build-essential",
        )
    too_new = [c for c in compilers if c.kind == "gcc" and c.major and newest and c.major > newest]
    if too_new:
        described = ", ".join(f"gcc {c.version} ({c.path}, {c.chosen_by})" for c in too_new)
        fix = compiler.compiler_fix(chosen, newest, environ, machine.root)
        if any(c.chosen_by in ("CC", "CXX", "c++ on PATH", "CUDAHOSTCXX") for c in too_new):
            # symlinks in the toolkit's bin/ do not reach these: set the variables
            lines = fix.splitlines()
            install = [line for line in lines if line.startswith("sudo apt")]
            fix = "\n".join([*install, lines[-1]])
        return verdict(
            "fail",
            f"{described} is newer than CUDA {chosen.version}'s nvcc accepts (gcc {newest} at most): "
            "'#error -- unsupported GNU version!'",
            details,
            fix,
        )
    unknown = [c for c in compilers if c.kind == "unknown" or not c.version]
    described = ", ".join(f"{c.kind} {c.version or '?'} ({c.path}, {c.chosen_by})" for c in compilers)
    if unknown:
        return verdict(
            "warn",
            f"cannot tell what {', '.join(c.path for c in unknown)} is (`--version` gave no version)",
            details,
            f"Check it runs: {unknown[0].path} --version",
        )
    if any(c.kind == "clang" for c in compilers):
        return verdict("skip", f"{described}: torchdoctor checks gcc's limits only", details)
    limit = f"gcc ≤ {newest}" if newest else "no known gcc limit"
    return verdict("ok", f"{described}: accepted by CUDA {chosen.version}'s nvcc ({limit})", details)


def check_gpu_arch(machine: Machine) -> Finding:
    """Each GPU's compute capability: whether torch has a kernel for it ("no kernel image is available"
    otherwise) and whether the build toolkit's nvcc can compile for it."""
    verdict = verdict_of(check_gpu_arch)
    facts = machine.torch
    gpus, seen_by = machine.gpus, machine.gpus_seen_by
    if not gpus:
        why = "torch sees none" if facts.cuda else "a CPU torch sees none"
        return verdict("skip", f"no NVIDIA GPU visible ({why}; nvidia-smi lists none)")
    found, chosen = machine.toolkits, machine.build_toolkit
    listed = machine.nvcc_targets
    problems, fixes, rows = [], [], []
    for index, (name, capability) in enumerate(gpus):
        row = {"index": index, "name": name, "capability": capability, "sm": arch.sm(capability)}
        if facts.cuda and facts.arch_list:
            row["torch_kernel"] = arch.has_kernel(capability, facts.arch_list)
            if not row["torch_kernel"]:
                first = arch.CUDA_FOR_ARCH.get(capability, ("99",))[0]
                wheel = next((c for c in TORCH_WHEEL_CUDA if Version(c) >= Version(first)), None)
                problems.append(
                    f"GPU {index} {name} ({row['sm']}): torch {facts.version} has kernels for "
                    f"{' '.join(facts.arch_list)} only — 'no kernel image is available for execution on the device'"
                )
                fixes.append(
                    f"pip install --upgrade torch --index-url {torch_index_url(wheel)}"
                    if wheel
                    else "pip install --upgrade torch  # a release that lists this GPU: https://pytorch.org/get-started/locally/"
                )
        if chosen and chosen.version:
            row["nvcc_can_target"] = arch.nvcc_can_target(capability, chosen.version, listed)
            if row["nvcc_can_target"] is False:
                first, last = arch.CUDA_FOR_ARCH.get(capability, (None, None))
                span = f"CUDA {first}" + (f" to {last}" if last else " or newer") if first else "another CUDA"
                problems.append(
                    f"CUDA {chosen.version}'s nvcc at {chosen.home} cannot compile for {row['sm']} (needs {span})"
                )
                other = next(
                    (
                        t
                        for t in found
                        if t.version and not t.missing and arch.nvcc_can_target(capability, t.version)
                    ),
                    None,
                )
                fixes.append(
                    toolkits.prepend_lines(other) if other else _install_toolkit_hint(first or "12.8")
                )
        rows.append(row)
    details = {
        "gpus": rows,
        "seen_by": seen_by,
        "torch_arch_list": list(facts.arch_list),
        "nvcc_targets": None if listed is None else list(listed),
    }
    if problems:
        return verdict("fail", "; ".join(problems), details, "\n".join(dict.fromkeys(fixes)))
    names = ", ".join(f"{r['index']}: {r['name']} ({r['sm']})" for r in rows)
    note = "torch has kernels" if facts.cuda else "torch is CPU-only"
    if chosen and chosen.version:
        note += f", CUDA {chosen.version}'s nvcc can compile for them"
    return verdict("ok", f"{names}: {note}", details)


def check_arch_list(machine: Machine) -> Finding:
    """``TORCH_CUDA_ARCH_LIST``: well-formed, covering every GPU here, compilable by the build toolkit;
    a warning with the value to use when it is unset."""
    verdict = verdict_of(check_arch_list)
    environ, facts = machine.environ, machine.torch
    value = environ.get("TORCH_CUDA_ARCH_LIST", "").strip()
    gpus = machine.gpus
    recommended = arch.recommended_arch_list(c for _, c in gpus) if gpus else None
    export = f'export TORCH_CUDA_ARCH_LIST="{recommended}"' if recommended else ""
    details = {"TORCH_CUDA_ARCH_LIST": value or None, "recommended": recommended}
    if not value:
        if not facts.cuda:
            hint = f' (this machine\'s GPUs: "{recommended}")' if recommended else ""
            return verdict("skip", f"TORCH_CUDA_ARCH_LIST not needed: torch is CPU-only{hint}", details)
        if not gpus:
            return verdict(
                "skip",
                "TORCH_CUDA_ARCH_LIST unset and no GPU here: set it to the capabilities of the GPUs that will run what you build",
                details,
            )
        return verdict(
            "warn",
            "TORCH_CUDA_ARCH_LIST is unset: an extension build guesses the architectures "
            "(every one it knows when it sees no GPU, as in `docker build`)",
            details,
            export,
        )
    if value == "native":
        return verdict(
            "ok",
            "TORCH_CUDA_ARCH_LIST=native: builds for the GPUs visible at build time",
            details,
        )
    try:
        entries = arch.parse_arch_list(value)
    except ValueError as error:
        return verdict("fail", str(error), details, export or 'export TORCH_CUDA_ARCH_LIST="8.6"')
    details["entries"] = entries
    problems = []
    chosen = machine.build_toolkit
    if chosen and chosen.version:
        listed = machine.nvcc_targets
        cannot = [
            e
            for e in entries
            if arch.nvcc_can_target(arch.entry_capability(e), chosen.version, listed) is False
        ]
        if cannot:
            problems.append(
                f"CUDA {chosen.version}'s nvcc cannot compile for {', '.join(cannot)} ('Unsupported gpu architecture')"
            )
    uncovered = [f"{name} ({arch.sm(c)})" for name, c in gpus if not arch.covers(c, entries)]
    if uncovered:
        problems.append(f"no kernel for {', '.join(uncovered)}")
    if problems:
        return verdict(
            "fail",
            f'TORCH_CUDA_ARCH_LIST="{value}": {"; ".join(problems)}',
            details,
            export or 'export TORCH_CUDA_ARCH_LIST="8.6"',
        )
    return verdict("ok", f'TORCH_CUDA_ARCH_LIST="{value}" covers the GPUs here', details)


def check_deepspeed(machine: Machine, search_path: Iterable[str] | None = None) -> Finding:
    """Whether DeepSpeed is installed, which ops were prebuilt (what ``ds_report`` shows), and whether they
    were built against the torch and CUDA installed now."""
    verdict = verdict_of(check_deepspeed)
    package = deepspeed.find_deepspeed(search_path)
    if package is None:
        return verdict(
            "skip",
            "DeepSpeed is not installed (`torchdoctor env --deepspeed-build` prints how to prebuild its ops)",
        )
    facts = machine.torch
    install = deepspeed.read_install(package)
    details = {
        "path": package,
        "version": install.version,
        "prebuilt": install.prebuilt,
        "incompatible": install.incompatible,
        "torch_info": install.torch_info,
    }
    name = f"DeepSpeed {install.version or '?'}"
    if not install.has_build_record:
        return verdict("ok", f"{name}: no build record; its ops compile on first use (JIT)", details)
    total = len(install.installed_ops)
    summary = f"{name}: {len(install.prebuilt)} of {total} ops prebuilt" + (
        f" ({', '.join(install.prebuilt)})" if install.prebuilt else "; the others compile on first use (JIT)"
    )
    if install.incompatible:
        summary += f"; not buildable where it was installed: {', '.join(install.incompatible)}"
    built_torch = str(install.torch_info.get("version", "0.0"))
    built_cuda = str(install.torch_info.get("cuda_version", "0.0"))
    now_torch = ".".join(Version(facts.version).base_version.split(".")[:2])
    stale = []
    if install.prebuilt and built_torch not in ("0.0", now_torch):
        stale.append(f"torch {built_torch} (now {now_torch})")
    if install.prebuilt and built_cuda not in ("0.0", facts.cuda or "none"):
        stale.append(f"CUDA {built_cuda} (now {facts.cuda or 'none: CPU torch'})")
    if stale:
        return verdict(
            "fail",
            f"{name}: its prebuilt ops were built against {' and '.join(stale)} and will not load",
            details,
            "pip uninstall -y deepspeed\n# then rebuild them for this torch; `torchdoctor env --deepspeed-build` prints the command",
        )
    return verdict("ok", summary, details)


def check_driver(machine: Machine) -> Finding:
    """The NVIDIA driver against the minimum torch's CUDA and the build toolkit need."""
    verdict = verdict_of(check_driver)
    facts = machine.torch
    version, why = machine.driver, machine.no_driver_because
    if version is None:
        return verdict("skip", f"no NVIDIA driver to check ({why})", {"why": why})
    chosen = machine.build_toolkit
    details = {
        "driver": version,
        "torch_cuda": facts.cuda,
        "toolkit_cuda": chosen.version if chosen else None,
    }
    for label, cuda, status in (
        ("torch's", facts.cuda, "fail"),
        ("the toolkit's", details["toolkit_cuda"], "warn"),
    ):
        if cuda and driver.driver_too_old(version, cuda):
            needed = driver.minimum_driver(cuda)
            older = newest_wheel_for_driver(version)
            fix = f"# install NVIDIA driver {needed} or newer: https://www.nvidia.com/drivers"
            if older and label == "torch's":
                fix += f"\n# or a torch built for CUDA {older}, which this driver runs:\npip install --force-reinstall torch --index-url {torch_index_url(older)}"
            return verdict(
                status,
                f"driver {version} is older than {label} CUDA {cuda} needs ({needed} or newer)",
                details,
                fix,
            )
    return verdict(
        "ok",
        f"driver {version} runs CUDA {facts.cuda or details['toolkit_cuda'] or '?'}",
        details,
    )


def check_nccl(machine: Machine) -> Finding:
    """The NCCL version torch ships (CUDA builds)."""
    verdict = verdict_of(check_nccl)
    facts = machine.torch
    if not facts.cuda:
        return verdict("skip", f"torch {facts.version} is not a CUDA build: no NCCL (gloo is used)")
    if not facts.nccl:
        return verdict(
            "warn",
            f"torch {facts.version} (CUDA {facts.cuda}) has no usable NCCL: multi-GPU runs fall back to gloo",
            {"torch": facts.version},
            f"pip install --force-reinstall torch --index-url {torch_index_url(facts.cuda)}",
        )
    details = {"nccl": facts.nccl}
    stray = toolkits.first_libnccl(machine.environ)
    if stray and stray[1] != facts.nccl and os.path.join("nvidia", "nccl") not in stray[0]:
        path, version = stray
        folder = os.path.dirname(path)
        kept = [d for d in toolkits.path_dirs(machine.environ, "LD_LIBRARY_PATH") if d != folder]
        return verdict(
            "warn",
            f"torch ships NCCL {facts.nccl}, but LD_LIBRARY_PATH finds {path} (NCCL {version or '?'}) first: "
            "the loader may take that one ('undefined symbol: nccl...', or NCCL errors torch's own would not give)",
            details | {"libnccl_on_ld_library_path": path, "its_version": version},
            f"export LD_LIBRARY_PATH={os.pathsep.join(kept)}   # without {folder}"
            if kept
            else "unset LD_LIBRARY_PATH",
        )
    return verdict("ok", f"torch ships NCCL {facts.nccl}", details)
