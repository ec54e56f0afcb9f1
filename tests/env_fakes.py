"""Fake CUDA toolkits, compilers and nvidia-smi for the env tests: real directories and real executable
scripts that print what the real programs printed (tests/fixtures/cuda), found through PATH and friends.

The env tests import them from here (``from env_fakes import toolkit``; pytest puts ``tests/`` on
``sys.path``); tests/test_env_fakes.py checks the fakes themselves.
"""

import json
import os
import re
import shlex
import stat
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def script(path: Path, body: str) -> Path:
    """An executable ``/bin/sh`` script at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def printing(path: Path, fixture_name: str, extra_cases: str = "") -> Path:
    """A program that prints a recorded output (``extra_cases``: more ``case "$*"`` arms before it)."""
    recorded = shlex.quote(str(FIXTURES / fixture_name))
    return script(path, f'case "$*" in\n{extra_cases}  *) exec /bin/cat {recorded} ;;\nesac')


def gcc_guard_header(error_fixture: str) -> str:
    """A host_config.h holding the guard line quoted in a real 'unsupported GNU version' error."""
    text = fixture(error_fixture)
    message = re.search(r"#error -- unsupported GNU version!.*", text).group(0)
    newest = int(re.search(r"later than (\d+)", message).group(1))
    return f"#if __GNUC__ > {newest}\n{message}\n#endif\n"


def toolkit(
    home: Path,
    nvcc: str | None = None,
    version_json: str | None = None,
    version_txt: str | None = None,
    libcudart: bool = True,
    gcc_error: str | None = None,
    gpu_codes: list[str] | None = None,
) -> Path:
    """A fake toolkit directory: ``bin/nvcc`` printing ``nvcc`` (a fixture), version files, lib64/libcudart."""
    home.mkdir(parents=True, exist_ok=True)
    if nvcc:
        cases = ""
        if gpu_codes is not None:  # what `nvcc --list-gpu-code` prints, one per line
            cases = f"  --list-gpu-code) printf '%s\\n' {' '.join(gpu_codes)} ;;\n"
        printing(home / "bin" / "nvcc", nvcc, cases)
    if version_json:
        release = ".".join(version_json.split(".")[:3])
        data = {"cuda": {"name": "CUDA SDK", "version": release}, "cuda_nvcc": {"version": version_json}}
        (home / "version.json").write_text(json.dumps(data))
    if version_txt:
        (home / "version.txt").write_text(f"CUDA Version {version_txt}\n")
    if libcudart:
        (home / "lib64").mkdir(exist_ok=True)
        major = (version_json or version_txt or "12").split(".")[0]
        (home / "lib64" / f"libcudart.so.{major}").write_bytes(b"")
        (home / "lib64" / "libcudart.so").symlink_to(f"libcudart.so.{major}")
    if gcc_error:
        (home / "include" / "crt").mkdir(parents=True, exist_ok=True)
        (home / "include" / "crt" / "host_config.h").write_text(gcc_guard_header(gcc_error))
    return home


def nvidia_smi(bin_dir: Path, driver: str = "535.104.05", gpus=(("NVIDIA A100-SXM4-80GB", "8.0"),)) -> Path:
    """A fake nvidia-smi answering the two queries torchdoctor makes."""
    rows = "\\n".join(f"{name}, {capability}" for name, capability in gpus)
    drivers = "\\n".join(driver for _ in gpus)
    return script(
        bin_dir / "nvidia-smi",
        f'case "$*" in\n'
        f"  *compute_cap*) printf '{rows}\\n' ;;\n"
        f"  *driver_version*) printf '{drivers}\\n' ;;\n"
        f"  *) exit 2 ;;\nesac",
    )


def environ(*bin_dirs: Path, **variables: str) -> dict:
    """An environment whose PATH holds only ``bin_dirs`` (plus variables such as CUDA_HOME)."""
    return {"PATH": os.pathsep.join(str(d) for d in bin_dirs), **{k: str(v) for k, v in variables.items()}}
