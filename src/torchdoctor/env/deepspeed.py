"""DeepSpeed: whether it is installed, which ops were prebuilt, and the command that prebuilds them.

DeepSpeed's ``setup.py`` records what it built in ``deepspeed/git_version_info_installed.py``
(``installed_ops``, ``compatible_ops``, ``torch_info``); ``ds_report`` reads that file. So do we, as text,
without importing DeepSpeed (which would import its op builders and accelerator probing).
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class DeepSpeedInstall:
    """An installed DeepSpeed and its build record."""

    path: str  # the package directory
    version: str | None = None
    installed_ops: dict[str, bool] = field(default_factory=dict)  # prebuilt into the install
    compatible_ops: dict[str, bool] = field(default_factory=dict)  # buildable where it was installed
    torch_info: dict = field(default_factory=dict)  # torch/CUDA the ops were built against
    has_build_record: bool = False

    @property
    def prebuilt(self) -> list[str]:
        return sorted(op for op, built in self.installed_ops.items() if built)

    @property
    def incompatible(self) -> list[str]:
        return sorted(
            op for op, ok in self.compatible_ops.items() if not ok and op != "deepspeed_not_implemented"
        )


def find_deepspeed(search_path: Iterable[str] | None = None) -> str | None:
    """The ``deepspeed`` package directory on ``search_path`` (default ``sys.path``), without importing it."""
    for entry in sys.path if search_path is None else search_path:
        candidate = Path(entry or ".", "deepspeed")
        if (candidate / "__init__.py").is_file():
            return str(candidate)
    return None


def literal_assignments(text: str) -> dict:
    """``name = <literal>`` lines of a Python file as a dict (other statements ignored)."""
    values = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return values


def read_install(package_dir: str) -> DeepSpeedInstall:
    """What DeepSpeed's build left in ``package_dir`` (its ``git_version_info_installed.py``)."""
    install = DeepSpeedInstall(path=package_dir)
    record = Path(package_dir, "git_version_info_installed.py")
    if record.is_file():
        try:
            values = literal_assignments(record.read_text(errors="replace"))
        except SyntaxError:
            values = {}
        install.has_build_record = bool(values)
        install.version = str(values["version"]).strip() if "version" in values else None
        install.installed_ops = dict(values.get("installed_ops") or {})
        install.compatible_ops = dict(values.get("compatible_ops") or {})
        install.torch_info = dict(values.get("torch_info") or {})
    if install.version is None:
        version_file = Path(package_dir).parent / "version.txt"  # a source checkout
        if version_file.is_file():
            install.version = version_file.read_text().strip()
    return install


def libaio_headers(root: str | Path = "/", environ: Mapping[str, str] | None = None) -> str | None:
    """Where ``libaio.h`` is (needed for ``DS_BUILD_AIO=1``), or None."""
    environ = os.environ if environ is None else environ
    places = [Path(root, "usr/include"), Path(root, "usr/local/include")]
    if environ.get("CONDA_PREFIX"):
        places.append(Path(environ["CONDA_PREFIX"], "include"))
    places += [Path(p) for p in environ.get("CPATH", "").split(os.pathsep) if p]
    for place in places:
        if (place / "libaio.h").is_file():
            return str(place / "libaio.h")
    return None


def prebuild_command(arch_list: str | None, with_aio: bool, jobs: int, wheel: bool = False) -> str:
    """The shell command that builds DeepSpeed's ops ahead of time.

    >>> print(prebuild_command("8.6", False, 8))
    TORCH_CUDA_ARCH_LIST="8.6" DS_BUILD_CPU_ADAM=1 DS_BUILD_UTILS=1 MAX_JOBS=8 \\
        pip install deepspeed --no-build-isolation --no-cache-dir -v 2>&1 | tee build.log
    """
    variables = [f'TORCH_CUDA_ARCH_LIST="{arch_list}"'] if arch_list else []
    variables += ["DS_BUILD_CPU_ADAM=1", "DS_BUILD_UTILS=1"] + (["DS_BUILD_AIO=1"] if with_aio else [])
    if wheel:
        return "\n".join(
            [
                "git clone https://github.com/deepspeedai/DeepSpeed",
                "cd DeepSpeed",
                "rm -rf build",
                f"{' '.join(variables)} \\",
                f"    python setup.py build_ext -j{jobs} bdist_wheel",
                "pip install dist/deepspeed-*.whl   # on every machine with the same torch, CUDA and Python",
            ]
        )
    # MAX_JOBS sets torch's ninja parallelism; no build isolation so the ops build against this torch
    return (
        f"{' '.join(variables)} MAX_JOBS={jobs} \\\n"
        "    pip install deepspeed --no-build-isolation --no-cache-dir -v 2>&1 | tee build.log"
    )
