"""A file or folder of the user's named as a module the run imports (./torch.py, ./random.py, a transformers/
folder on PYTHONPATH) was read as "the installed release is older than the code" (dependency_version), with an
upgrade for a fix (USER10's trial, session 41). Read as the shadowing it is, only likely, naming the file; never
where the file CPython names is an install's. The tracebacks are recorded (fixtures/shadowing/), and two are made
here by real Pythons."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from explaining import explained

FIXTURES = Path(__file__).parent / "fixtures" / "shadowing"


@pytest.mark.parametrize(
    "name, module, path",
    [
        ("u10_torch_py_circular.txt", "torch", "/tmp/u10/ex/a/torch.py"),
        ("u10_random_py_import.txt", "random", "/tmp/u10/ex/b/random.py"),
        ("u10_transformers_folder.txt", "transformers", "/tmp/u10/pp/transformers/__init__.py"),
        ("numpy_py_py313.txt", "numpy", "/tmp/s6/c/numpy.py"),
        ("random_py_py313.txt", "random", "/tmp/s6/d/random.py"),
        ("torch_py_cuda_py311.txt", "torch", ""),
    ],
)
def test_a_local_copy_of_a_module_is_read_as_shadowing_it_naming_the_file(name, module, path):
    found = explained((FIXTURES / name).read_text())
    assert (found.id, found.details["confidence"]) == ("log.module_shadowed", "likely"), found.summary
    assert f"the {module} imported is likely a local file or folder" in found.summary, found.summary
    assert "likely older" not in found.summary and "pip install -U" not in found.fix, found.fix
    if path:
        assert f"Python imported {path} as {module}" in found.fix, found.fix
    else:
        assert f"A {module}.py or a {module}/ folder" in found.fix, found.fix


@pytest.mark.parametrize("name", ["installed_json_stdlib.txt", "installed_torch_site_packages.txt"])
def test_a_name_missing_from_the_installed_module_is_not_read_as_shadowing(name):
    found = explained((FIXTURES / name).read_text())
    assert found.id != "log.module_shadowed", found.summary


def _traceback(folder: Path, script: str, pythonpath: str = "") -> str:
    (folder / "train.py").write_text(script)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": pythonpath} if pythonpath else {"PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "train.py"], cwd=folder, capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode != 0, done.stdout
    return done.stderr


def test_a_json_py_beside_the_script_run_for_real_is_named(tmp_path):
    (tmp_path / "json.py").write_text("x = 1\n")
    found = explained(_traceback(tmp_path, "from json import loads\n"))
    assert found.id == "log.module_shadowed", found.summary
    assert f"Python imported {tmp_path / 'json.py'} as json" in found.fix, found.fix


def test_a_packages_own_circular_import_in_site_packages_is_not_read_as_shadowing(tmp_path):
    # a package of an install importing itself before it is done (a release's own circular import) prints the
    # same "partially initialized module" line: its file is in site-packages, so no local copy is named
    package = tmp_path / "site-packages" / "torchvision"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("import torchvision\ntorchvision.extension\n")
    output = _traceback(tmp_path, "import torchvision\n", pythonpath=str(tmp_path / "site-packages"))
    assert "partially initialized module 'torchvision' has no attribute 'extension'" in output, output
    found = explained(output)
    assert found.id != "log.module_shadowed", found.summary
