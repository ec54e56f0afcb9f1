"""The host compiler nvcc will use, and whether that toolkit's nvcc accepts it.

nvcc refuses a gcc newer than the one its toolkit was released for
(``#error -- unsupported GNU version! gcc versions later than 8 are not supported!``).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from torchdoctor.env.toolkits import Runner, Toolkit, path_dirs, which
from torchdoctor.runner import run_command

# The newest gcc major each CUDA release's nvcc accepts: (first release of the row, newest gcc).
# Source: the `#if __GNUC__ > N` / "gcc versions later than N are not supported" guard in each toolkit's
# include/crt/host_config.h, as summarised in NVIDIA's CUDA Installation Guide for Linux (supported
# compilers table) and torch.utils.cpp_extension.CUDA_GCC_VERSIONS. 11.4.0 (nvcc V11.4.48) still has
# the 11.1 guard; 12.3 changed it in an update, so None = read that toolkit's own host_config.h.
NEWEST_GCC_FOR_CUDA: tuple[tuple[str, int | None], ...] = (
    ("9.0", 6),
    ("9.2", 7),
    ("10.1", 8),
    ("11.0", 9),
    ("11.1", 10),
    ("11.4.1", 11),
    ("12.0", 12),
    ("12.3", None),
    ("12.4", 13),
    ("12.8", 14),
    ("13.0", 15),
)
UNKNOWN_ROW_FALLBACK = 12  # 12.3 without a readable host_config.h: assume the stricter neighbour

_GUARD = re.compile(r"gcc versions later than (\d+) are not supported")
_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class Compiler:
    """A host compiler: where it is, how it was chosen, what it says it is."""

    path: str
    chosen_by: str  # "CC", "CXX", "CUDAHOSTCXX", "in the toolkit's bin/", "on PATH", "c++ on PATH"
    kind: str  # gcc | clang | unknown
    version: str | None  # "13.1.0"

    @property
    def major(self) -> int | None:
        return int(self.version.split(".")[0]) if self.version else None


def newest_gcc_from_host_config(toolkit: Toolkit) -> int | None:
    """The newest gcc major the toolkit's own ``include/crt/host_config.h`` lets through, if readable."""
    patterns = [
        os.path.join(toolkit.home, "include", "crt", "host_config.h"),
        os.path.join(toolkit.home, "targets", "*", "include", "crt", "host_config.h"),
    ]
    for pattern in patterns:
        for header in sorted(glob.glob(pattern)):
            match = _GUARD.search(Path(header).read_text(errors="replace"))
            if match:
                return int(match.group(1))
    return None


def newest_gcc_from_table(version: str, full_version: str | None = None) -> int | None:
    """The newest gcc major from `NEWEST_GCC_FOR_CUDA` for a CUDA release (None for the 12.3 row)."""
    exact = Version(full_version) if full_version and full_version.startswith(version) else Version(version)
    if str(exact) == "11.4.48" or (full_version or "").startswith("11.4.0"):
        exact = Version("11.4.0")  # nvcc V11.4.48 is CUDA 11.4.0, which kept 11.1's guard
    elif exact.release[:2] == (11, 4) and len(exact.release) == 3 and exact.release[2] > 0:
        exact = Version("11.4.1")  # nvcc's own version (11.4.100, …) of an 11.4 update
    newest: int | None = None
    for first, gcc in NEWEST_GCC_FOR_CUDA:
        if exact >= Version(first):
            newest = gcc
    return newest


def newest_gcc(toolkit: Toolkit) -> tuple[int | None, str]:
    """``(newest gcc major, where that came from)`` for a toolkit: its host_config.h, else the table."""
    from_header = newest_gcc_from_host_config(toolkit)
    if from_header is not None:
        return from_header, "host_config.h"
    if not toolkit.version:
        return None, ""
    from_table = newest_gcc_from_table(toolkit.version, toolkit.full_version)
    if from_table is None and Version(toolkit.version) >= Version("12.3"):
        return UNKNOWN_ROW_FALLBACK, "assumed (no host_config.h to read for this release)"
    return from_table, "table"


def compiler_version(path: str, run: Runner = run_command, environ: Mapping[str, str] | None = None):
    """``(kind, version)`` from ``path --version``: ``("gcc", "13.1.0")``, ``("clang", "17.0.6")``."""
    result = run([path, "--version"], env=environ)
    lines = (result.stdout or result.stderr).strip().splitlines()
    if not result.ok or not lines:
        return "unknown", None
    first = lines[0]
    if "clang" in first:
        kind = "clang"
    elif re.search(r"gcc|g\+\+|GCC", first) or "Free Software Foundation" in result.stdout:
        kind = "gcc"
    else:
        kind = "unknown"
    if kind == "clang":
        match = re.search(r"clang version (\d+\.\d+(?:\.\d+)?)", first)
        return kind, match.group(1) if match else None
    versions = _VERSION.findall(first)  # "gcc (Ubuntu 13.1.0-8ubuntu1~22.04) 13.1.0": the last one
    return kind, versions[-1] if versions else None


def nvcc_host_compilers(toolkit: Toolkit | None, environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """``[(path, why), …]``: the compilers nvcc hands host code to when torch builds an extension.

    torch passes ``-ccbin $CC`` when ``CC`` is set; otherwise nvcc finds ``gcc``/``g++`` in its own
    ``bin/`` first (the ``ln -s /usr/bin/gcc-7 /usr/local/cuda-10.2/bin/gcc`` trick), then on ``PATH``.
    """
    if environ.get("CC"):
        return [(_resolve(environ["CC"], environ), "CC")]
    chosen = []
    for program in ("gcc", "g++"):
        own = os.path.join(toolkit.bin_dir, program) if toolkit is not None else ""
        if own and os.path.isfile(own):
            chosen.append((own, "in the toolkit's bin/"))
        elif which(program, environ):
            chosen.append((which(program, environ), "on PATH"))
    return chosen


def _resolve(program: str, environ: Mapping[str, str]) -> str:
    return program if os.sep in program else which(program, environ) or program


def host_compilers(
    toolkit: Toolkit | None, environ: Mapping[str, str], run: Runner = run_command
) -> list[Compiler]:
    """The compilers a CUDA extension build here would use: nvcc's host compilers, ``CXX`` (or ``c++``) that
    torch checks, and ``CUDAHOSTCXX`` when set."""
    chosen = nvcc_host_compilers(toolkit, environ)
    # torch's BuildExtension holds CXX (default c++) to the same gcc bounds before it builds CUDA code
    if environ.get("CXX"):
        chosen.append((_resolve(environ["CXX"], environ), "CXX"))
    elif which("c++", environ):
        chosen.append((which("c++", environ), "c++ on PATH"))
    if environ.get("CUDAHOSTCXX"):  # CMake-based builds hand this one to nvcc
        chosen.append((_resolve(environ["CUDAHOSTCXX"], environ), "CUDAHOSTCXX"))
    compilers, seen = [], set()
    for path, why in chosen:
        if os.path.realpath(path) in seen:
            continue  # c++ is usually a link to g++
        seen.add(os.path.realpath(path))
        kind, version = compiler_version(path, run, environ)
        compilers.append(Compiler(path, why, kind, version))
    return compilers


def older_gccs(environ: Mapping[str, str], root: str | Path = "/") -> dict[int, tuple[str, str | None]]:
    """Versioned compilers on the machine: ``{11: ("/usr/bin/gcc-11", "/usr/bin/g++-11"), …}``."""
    found: dict[int, tuple[str, str | None]] = {}
    directories = [*path_dirs(environ), str(Path(root) / "usr/bin")]
    for directory in directories:
        for gcc in sorted(glob.glob(os.path.join(directory, "gcc-[0-9]*"))):
            match = re.fullmatch(r"gcc-(\d+)", os.path.basename(gcc))
            if not match or not os.access(gcc, os.X_OK) or int(match.group(1)) in found:
                continue
            gxx = os.path.join(directory, f"g++-{match.group(1)}")
            found[int(match.group(1))] = (gcc, gxx if os.access(gxx, os.X_OK) else None)
    return found


def compiler_fix(toolkit: Toolkit, newest: int, environ: Mapping[str, str], root: str | Path = "/") -> str:
    """Shell lines that give ``toolkit``'s nvcc a gcc it accepts: the newest ``gcc-N`` ≤ ``newest`` here."""
    usable = {n: paths for n, paths in older_gccs(environ, root).items() if n <= newest}
    if usable:
        major = max(usable)
        gcc, gxx = usable[major]
        install = []
    else:
        major = newest
        gcc, gxx = f"/usr/bin/gcc-{major}", f"/usr/bin/g++-{major}"
        install = [f"sudo apt install gcc-{major} g++-{major}   # no gcc-{newest} or older found here"]
    gxx = gxx or os.path.join(os.path.dirname(gcc), f"g++-{major}")
    return "\n".join(
        [
            *install,
            f"ln -s {gcc} {toolkit.bin_dir}/gcc",
            f"ln -s {gxx} {toolkit.bin_dir}/g++",
            "# or, leaving the toolkit alone (CC for torch extensions, CUDAHOSTCXX for CMake builds):",
            f"export CC={gcc} CXX={gxx} CUDAHOSTCXX={gxx}",
        ]
    )
