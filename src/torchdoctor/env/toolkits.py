"""Finding the CUDA toolkits on a machine, their versions, and the one an extension build would use.

Everything is read through arguments: ``environ`` (``CUDA_HOME``, ``PATH``, …), ``root`` (where ``/usr/local``
and ``/opt`` are looked for) and ``run`` (how ``nvcc --version`` is run), so tests build fake trees.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from torchdoctor.runner import CommandResult, run_command

Runner = Callable[..., CommandResult]

_NVCC_RELEASE = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_VERSION_TXT = re.compile(r"CUDA Version (\d+\.\d+(?:\.\d+)?)")


@dataclass
class Toolkit:
    """One CUDA toolkit directory and what is (not) in it."""

    home: str  # the path as it was found, e.g. /usr/local/cuda
    real_home: str  # symlinks resolved, e.g. /usr/local/cuda-11.8
    found_as: list[str] = field(default_factory=list)  # "CUDA_HOME", "nvcc on PATH", "/usr/local/cuda-*", …
    version: str | None = None  # release, e.g. "11.8"
    full_version: str | None = None  # nvcc's own version when known, e.g. "11.8.89"
    version_from: str = ""  # version.json | version.txt | nvcc --version
    nvcc: str | None = None  # bin/nvcc when it exists
    lib_dir: str | None = None  # lib64 (or lib) holding libcudart.so*
    libcudart: list[str] = field(default_factory=list)

    @property
    def missing(self) -> list[str]:
        """What a build needs from this toolkit and does not find: ``bin/nvcc``, ``lib64/libcudart.so``."""
        gone = []
        if not self.nvcc:
            gone.append("bin/nvcc")
        if not self.libcudart:
            gone.append("lib64/libcudart.so")
        if not self.version:
            gone.append("a version (version.json, version.txt or nvcc --version)")
        return gone

    @property
    def bin_dir(self) -> str:
        return os.path.join(self.home, "bin")

    @property
    def lib64_dir(self) -> str:
        return self.lib_dir or os.path.join(self.home, "lib64")

    def to_dict(self) -> dict:
        return asdict(self) | {"missing": self.missing}

    def describe(self) -> str:
        """``/usr/local/cuda-11.8 (CUDA 11.8)``, with what is missing when something is."""
        where = self.home if self.real_home == self.home else f"{self.home} -> {self.real_home}"
        text = f"{where} (CUDA {self.version or '?'})"
        return text + (f" — missing {', '.join(self.missing)}" if self.missing else "")


def path_dirs(environ: Mapping[str, str], name: str = "PATH") -> list[str]:
    """The non-empty entries of a ``:``-separated variable such as ``PATH`` or ``LD_LIBRARY_PATH``."""
    return [part for part in environ.get(name, "").split(os.pathsep) if part]


def which(program: str, environ: Mapping[str, str]) -> str | None:
    """``program`` as the shell would find it on ``environ``'s ``PATH``."""
    return shutil.which(program, path=environ.get("PATH", ""))


def release_of(version: str | None) -> str | None:
    """``"11.8.89"`` -> ``"11.8"``."""
    if not version:
        return None
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else None


def nvcc_release(text: str) -> tuple[str, str] | None:
    """``("11.8", "11.8.89")`` from ``nvcc --version``'s output, or None."""
    match = _NVCC_RELEASE.search(text)
    if match:
        return match.group(1), match.group(2)
    release = re.search(r"release (\d+\.\d+)", text)
    return (release.group(1), release.group(1)) if release else None


def read_version(home: str, run: Runner = run_command, environ: Mapping[str, str] | None = None):
    """``(release, full version, where it came from)`` for a toolkit directory.

    ``version.json`` (CUDA 11.1+) first, then ``version.txt`` (older), then ``bin/nvcc --version``.
    """
    version_json = Path(home, "version.json")
    if version_json.is_file():
        try:
            data = json.loads(version_json.read_text(errors="replace"))
            full = data.get("cuda_nvcc", {}).get("version") or data["cuda"]["version"]
            return release_of(data["cuda"]["version"]), full, "version.json"
        except (ValueError, KeyError, TypeError, AttributeError):
            pass  # a damaged file: fall through to the other sources
    version_txt = Path(home, "version.txt")
    if version_txt.is_file():
        match = _VERSION_TXT.search(version_txt.read_text(errors="replace"))
        if match:
            return release_of(match.group(1)), match.group(1), "version.txt"
    nvcc = Path(home, "bin", "nvcc")
    if nvcc.is_file():
        result = run([str(nvcc), "--version"], env=environ)
        parsed = nvcc_release(result.stdout + result.stderr)
        if parsed:
            return parsed[0], parsed[1], "nvcc --version"
    return None, None, ""


def inspect_toolkit(
    home: str, found_as: str, run: Runner = run_command, environ: Mapping[str, str] | None = None
) -> Toolkit:
    """What is in the toolkit directory ``home``: version, ``bin/nvcc``, ``lib64/libcudart.so*``."""
    release, full, source = read_version(home, run, environ)
    nvcc = os.path.join(home, "bin", "nvcc")
    lib_dir, libs = None, []
    for sub in ("lib64", "lib", os.path.join("targets", "x86_64-linux", "lib")):
        found = sorted(glob.glob(os.path.join(home, sub, "libcudart.so*")))
        if found:
            lib_dir, libs = os.path.join(home, sub), found
            break
    return Toolkit(
        home=home,
        real_home=os.path.realpath(home),
        found_as=[found_as],
        version=release,
        full_version=full,
        version_from=source,
        nvcc=nvcc if os.path.isfile(nvcc) else None,
        lib_dir=lib_dir,
        libcudart=libs,
    )


def _home_of_nvcc(nvcc: str) -> str:
    # torch's cpp_extension takes dirname(dirname(which("nvcc"))) without resolving symlinks
    return os.path.dirname(os.path.dirname(nvcc))


def candidate_homes(environ: Mapping[str, str], root: str | Path = "/") -> list[tuple[str, str]]:
    """``(directory, how it was found)`` for every place a CUDA toolkit may be, in torch's order first."""
    root = Path(root)
    found: list[tuple[str, str]] = []
    for name in ("CUDA_HOME", "CUDA_PATH"):
        if environ.get(name):
            found.append((environ[name], name))
    nvcc = which("nvcc", environ)
    if nvcc:
        found.append((_home_of_nvcc(nvcc), "nvcc on PATH"))
    found.append((str(root / "usr/local/cuda"), "/usr/local/cuda"))
    for pattern, label in (("usr/local/cuda-*", "/usr/local/cuda-*"), ("opt/cuda*", "/opt/cuda*")):
        found += [(path, label) for path in sorted(glob.glob(str(root / pattern)))]
    if environ.get("CONDA_PREFIX"):
        found.append((environ["CONDA_PREFIX"], "conda env"))
    return found


def find_toolkits(
    environ: Mapping[str, str] | None = None, root: str | Path = "/", run: Runner = run_command
) -> list[Toolkit]:
    """Every CUDA toolkit that can be found, one entry per real directory, in torch's search order.

    >>> [t.home for t in find_toolkits({"PATH": ""}, root="/nonexistent")]
    []
    """
    environ = os.environ if environ is None else environ
    toolkits: dict[str, Toolkit] = {}
    for home, how in candidate_homes(environ, root):
        if not os.path.isdir(home):
            continue
        if how == "conda env" and not os.path.isfile(os.path.join(home, "bin", "nvcc")):
            continue  # most conda envs hold no toolkit
        real = os.path.realpath(home)
        if real in toolkits:
            toolkits[real].found_as.append(how)
            continue
        toolkits[real] = inspect_toolkit(home, how, run, environ)
    return list(toolkits.values())


def build_toolkit(toolkits: list[Toolkit], environ: Mapping[str, str]) -> Toolkit | None:
    """The toolkit torch's ``cpp_extension`` would build with: ``CUDA_HOME``/``CUDA_PATH``, then ``nvcc`` on
    ``PATH``, then ``/usr/local/cuda`` (the order of ``torch.utils.cpp_extension._find_cuda_home``)."""
    for how in ("CUDA_HOME", "CUDA_PATH"):
        if environ.get(how):
            return next((t for t in toolkits if how in t.found_as), None)
    for how in ("nvcc on PATH", "/usr/local/cuda"):
        chosen = next((t for t in toolkits if how in t.found_as), None)
        if chosen:
            return chosen
    return None


def toolkit_owning(path: str, toolkits: list[Toolkit]) -> Toolkit | None:
    """The toolkit a file or directory belongs to (symlinks resolved), if any."""
    real = os.path.realpath(path)
    # deepest first: a toolkit "home" may be /usr/local (nvcc wrapper) and contain /usr/local/cuda-*
    for toolkit in sorted(toolkits, key=lambda t: len(t.real_home), reverse=True):
        if real == toolkit.real_home or real.startswith(toolkit.real_home.rstrip(os.sep) + os.sep):
            return toolkit
    return None


def first_libcudart(environ: Mapping[str, str]) -> str | None:
    """The first ``libcudart.so*`` the dynamic loader would meet through ``LD_LIBRARY_PATH``."""
    for directory in path_dirs(environ, "LD_LIBRARY_PATH"):
        found = sorted(glob.glob(os.path.join(directory, "libcudart.so*")))
        if found:
            return found[0]
    return None


def first_libnccl(environ: Mapping[str, str]) -> tuple[str, str | None] | None:
    """The first ``libnccl.so*`` the dynamic loader would meet through ``LD_LIBRARY_PATH``, and its version
    from the file it points to (``"2.18.1"`` for ``libnccl.so.2.18.1``; None when the name has no full one)."""
    for directory in path_dirs(environ, "LD_LIBRARY_PATH"):
        found = sorted(glob.glob(os.path.join(directory, "libnccl.so*")))
        if found:
            match = re.search(r"libnccl\.so\.(\d+\.\d+\.\d+)", os.path.basename(os.path.realpath(found[0])))
            return found[0], match.group(1) if match else None
    return None


def libcudart_version(path: str) -> str | None:
    """``"12.1"`` for ``libcudart.so.12.1.105`` (symlinks followed), ``"12"`` for ``libcudart.so.12``."""
    match = re.search(r"libcudart\.so\.(\d+(?:\.\d+)?)", os.path.basename(os.path.realpath(path)))
    return match.group(1) if match else None


def prepend_lines(toolkit: Toolkit) -> str:
    """The shell lines that make ``toolkit`` the one builds, ``PATH`` and the loader use."""
    return "\n".join(
        [
            f"export CUDA_HOME={toolkit.home}",
            f"export PATH={toolkit.bin_dir}:$PATH",
            f"export LD_LIBRARY_PATH={toolkit.lib64_dir}:$LD_LIBRARY_PATH",
        ]
    )
