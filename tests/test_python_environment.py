"""The Python environment users break: a local copy import takes first (sys.shadowed_modules), pip or torchrun
from another environment, what a stopped pip left, torch hidden in the user site, a CPU torch beside GPUs."""

import json
import sys
import sysconfig

import pytest

from torchdoctor.shadowing import shadows
from torchdoctor.system import check_shadowed_modules


def _package(folder, name, init="") -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text(init)


def _layout(tmp_path):
    """A run folder, a PYTHONPATH entry and an environment's site-packages, as real folders."""
    run, extra, site = tmp_path / "run", tmp_path / "extra", tmp_path / "site-packages"
    for name in ("torch", "transformers", "accelerate", "requests"):
        _package(site, name)
    run.mkdir()
    _package(extra, "transformers", "__version__ = '4.0.0'")
    return run, extra, site


def _shadows(run, extra, site, **environ):
    stdlib = sysconfig.get_paths()["stdlib"]
    return shadows(
        cwd=str(run),
        search_path=[str(extra), stdlib, str(site)],
        environ={"PYTHONPATH": str(extra), **environ},
        installed=[str(site), stdlib],
    )


def test_a_local_file_a_pythonpath_copy_and_a_leftover_pyc_each_hide_the_installed_package(tmp_path):
    run, extra, site = _layout(tmp_path)
    (run / "torch.py").write_text("print('my helpers')\n")
    (run / "requests.cpython-311.pyc").write_bytes(b"")  # an extension-less leftover is still imported
    (run / "utils.py").write_text("")  # nothing installed is called utils: hides nothing
    (run / "accelerate").mkdir()  # no __init__.py: a namespace portion, the installed package wins
    found = {s.name: s for s in _shadows(run, extra, site)}
    assert set(found) == {"torch", "transformers"}, found
    assert found["torch"].where == "this folder" and found["torch"].found == str(run / "torch.py")
    assert found["torch"].installed == str(site / "torch")
    assert found["transformers"].where == "PYTHONPATH" and found["transformers"].found == str(
        extra / "transformers"
    )


def test_a_sourceless_pyc_in_the_folder_is_imported_and_reported(tmp_path):
    run, extra, site = _layout(tmp_path)
    (run / "accelerate.pyc").write_bytes(b"")
    found = {s.name: s.found for s in _shadows(run, extra, site)}
    assert found["accelerate"] == str(run / "accelerate.pyc")


def test_pythonsafepath_keeps_the_folder_off_the_path(tmp_path):
    run, extra, site = _layout(tmp_path)
    (run / "torch.py").write_text("")
    assert [s.name for s in _shadows(run, extra, site, PYTHONSAFEPATH="1")] == ["transformers"]


def test_a_standard_module_counts_only_when_a_run_imports_it(tmp_path):
    run, extra, site = _layout(tmp_path)
    (run / "random.py").write_text("")  # tempfile, which torch imports, takes `from random import Random`
    (run / "test.py").write_text("")  # the standard `test` package: nothing a run imports
    names = [s.name for s in _shadows(run, extra, site)]
    assert "random" in names and "test" not in names


def test_the_check_fails_on_the_training_stack_warns_on_the_rest_and_gives_each_command(
    tmp_path, monkeypatch
):
    run, extra, site = _layout(tmp_path)
    (run / "torch.py").write_text("")
    (run / "random.py").write_text("")
    (run / "accelerate.pyc").write_bytes(b"")
    monkeypatch.setenv("PYTHONPATH", f"/opt/keep:{extra}")
    finding = check_shadowed_modules(_shadows(run, extra, site))
    assert finding.id == "sys.shadowed_modules" and finding.status == "fail"
    assert f"{run / 'torch.py'} (this folder) hides the installed torch ({site / 'torch'})" in finding.summary
    assert f"mv {run / 'torch.py'} {run / 'my_torch.py'}" in finding.fix
    assert f"rm {run / 'accelerate.pyc'}" in finding.fix
    assert "export PYTHONPATH=/opt/keep\n" in finding.fix + "\n"
    only_stdlib = check_shadowed_modules([s for s in _shadows(run, extra, site) if s.name == "random"])
    assert only_stdlib.status == "warn"
    assert check_shadowed_modules([]).status == "ok"


def test_check_run_beside_a_torch_py_names_it_instead_of_crashing(cli, tmp_path):
    (tmp_path / "torch.py").write_text("value = 1\n")
    result = cli(
        "check",
        "--json",
        *("--only", "sys.shadowed_modules", "--only", "sys.torch", "--only", "sys.accelerators"),
        cwd=tmp_path,
        timeout=180,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    assert result.stderr == ""
    findings = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    assert findings["sys.shadowed_modules"]["status"] == "fail"
    assert findings["sys.torch"]["status"] == "fail"
    assert findings["sys.torch"]["summary"].startswith(
        f"import torch took {tmp_path / 'torch.py'}, not the installed"
    )
    assert findings["sys.accelerators"]["status"] == "skip"
    assert not any("crashed" in f["summary"] for f in findings.values())


def _environment(root, *commands, shebang=None):
    """A virtual environment's bin/ with a python and pip-made scripts naming it on their first line."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (bin_dir / "python").write_text("")
    (bin_dir / "python").chmod(0o755)
    (bin_dir / "activate").write_text("")
    for command in commands:
        (bin_dir / command).write_text(f"{shebang or '#!' + str(bin_dir / 'python')}\nimport sys\n")
        (bin_dir / command).chmod(0o755)
    return bin_dir


def test_pip_and_torchrun_from_another_environment_than_python_warn_with_the_module_form(tmp_path):
    from torchdoctor.system import check_python_commands

    mine = _environment(tmp_path / "mine")
    other = _environment(tmp_path / "other", "pip", "torchrun")
    finding = check_python_commands({"PATH": f"{mine}:{other}"})
    assert finding.id == "sys.python_commands" and finding.status == "warn"
    assert f"pip on PATH ({other / 'pip'}) runs {other / 'python'}" in finding.summary
    assert f"not python on PATH ({mine / 'python'})" in finding.summary
    assert "python -m pip ...   # instead of pip" in finding.fix
    assert (
        f"python -m torch.distributed.run ...   # instead of torchrun: the python on PATH; or: source {other / 'activate'}"
        in finding.fix
    )
    same = check_python_commands({"PATH": f"{other}:{mine}"})
    assert same.status == "ok" and "pip, torchrun: none from another environment" in same.summary


@pytest.mark.parametrize("folder", ["other", "my envs/other"])
def test_pips_sh_launcher_for_long_paths_and_env_shebangs_are_read_right(tmp_path, folder):
    from torchdoctor.system import check_python_commands

    mine = _environment(tmp_path / "mine")
    other = _environment(tmp_path / folder)  # a path with a space: pip's sh launcher quotes it
    long_form = f"#!/bin/sh\n'''exec' \"{other / 'python'}\" \"$0\" \"$@\"\n' '''"
    (mine / "torchrun").write_text(f"{long_form}\nimport sys\n")
    (mine / "pip").write_text("#!/usr/bin/env python3\nimport sys\n")  # whatever python is on PATH: the same
    for command in ("torchrun", "pip"):
        (mine / command).chmod(0o755)
    finding = check_python_commands({"PATH": str(mine)})
    assert (
        finding.status == "warn"
        and "torchrun on PATH" in finding.summary
        and "pip on PATH" not in finding.summary
    )


def _dist(site, folder, metadata):
    (site / folder).mkdir(parents=True)
    (site / folder / "METADATA").write_text(metadata)


def test_what_a_stopped_pip_left_is_named_and_its_version_is_not_read_as_installed(tmp_path):
    import importlib.metadata

    from torchdoctor.package_conflicts import installed
    from torchdoctor.system import check_package_leftovers

    site, user = tmp_path / "site-packages", tmp_path / "user-site"  # the user site is read first
    _dist(user, "~orch-2.5.1.dist-info", "Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\n")
    _dist(site, "torch-2.13.0.dist-info", "Metadata-Version: 2.1\nName: torch\nVersion: 2.13.0\n")
    _dist(site, "foo-1.0.dist-info", "Metadata-Version: 2.1\n\nName: not a header\n")
    (site / "~orch").mkdir()
    assert installed(importlib.metadata.distributions(path=[str(user), str(site)]))["torch"][0] == "2.13.0"
    finding = check_package_leftovers([str(site), str(user)])
    assert finding.id == "sys.package_leftovers" and finding.status == "warn"
    said = finding.summary
    assert (
        f"{site / 'foo-1.0.dist-info'} names no package (pip skips it); {site / '~orch'} (a half-done" in said
    )
    assert f"{user / '~orch-2.5.1.dist-info'} (a half-done uninstall or upgrade" in said
    assert f"rm -rf {site / '~orch'}\n" in finding.fix
    assert (
        f"rm -rf {site / 'foo-1.0.dist-info'} && python -m pip install --force-reinstall --no-deps 'foo==1.0'"
        in (finding.fix)
    )
    (site / "~orch").rmdir()
    for leftover in (user / "~orch-2.5.1.dist-info", site / "foo-1.0.dist-info"):
        (leftover / "METADATA").unlink()
        leftover.rmdir()
    assert check_package_leftovers([str(site), str(user)]) is None
    # pip always writes RECORD: one it installed without it cannot be uninstalled or upgraded; conda's are its own
    (site / "torch-2.13.0.dist-info" / "INSTALLER").write_text("pip\n")
    _dist(site, "numpy-2.1.0.dist-info", "Metadata-Version: 2.1\nName: numpy\nVersion: 2.1.0\n")
    (site / "numpy-2.1.0.dist-info" / "INSTALLER").write_text("conda\n")
    lost = check_package_leftovers([str(site)])
    assert lost.summary.startswith(
        f"{site / 'torch-2.13.0.dist-info'} has no RECORD (pip cannot uninstall or upgrade torch)"
    )
    assert lost.fix == "python -m pip install --force-reinstall --no-deps 'torch==2.13.0'"
    (site / "torch-2.13.0.dist-info" / "RECORD").write_text("")
    assert check_package_leftovers([str(site)]) is None


def test_a_leftover_in_a_folder_with_a_space_is_removed_by_a_quoted_path(tmp_path):
    from torchdoctor.system import check_package_leftovers

    site = tmp_path / "my envs" / "site-packages"  # unquoted, rm -rf would take ".../my" and "envs/..."
    (site / "~orch").mkdir(parents=True)
    _dist(site, "foo.dist-info", "Metadata-Version: 2.1\n")  # no version in its name: none to pin
    fix = check_package_leftovers([str(site)]).fix
    assert (
        f"rm -rf '{site / 'foo.dist-info'}' && python -m pip install --force-reinstall --no-deps foo " in fix
    )
    assert f"rm -rf '{site / '~orch'}'" in fix.splitlines(), fix


def test_torch_only_in_the_user_site_that_pythonnousersite_hides_is_named(tmp_path):
    from types import SimpleNamespace

    from torchdoctor.system import user_site_copy

    user = tmp_path / "user-site"
    _package(user, "torch")
    off, on = SimpleNamespace(no_user_site=0), SimpleNamespace(no_user_site=1)
    hidden = {"PYTHONNOUSERSITE": "1"}
    shared, isolated = tmp_path / "shared-venv", tmp_path / "venv"
    shared.mkdir()
    (shared / "pyvenv.cfg").write_text("include-system-site-packages = true\n")
    isolated.mkdir()
    (isolated / "pyvenv.cfg").write_text("include-system-site-packages = false\n")
    assert user_site_copy("torch", hidden, str(user), off, str(shared)) == str(user / "torch")
    assert user_site_copy("torch", {}, str(user), on, str(shared)) == str(user / "torch")  # python -s
    assert user_site_copy("torch", {}, str(user), off, str(shared)) is None  # the user site is read
    assert user_site_copy("transformers", hidden, str(user), off, str(shared)) is None  # no copy there
    assert user_site_copy("torch", hidden, str(user), off, str(isolated)) is None  # never reads it anyway


def test_a_cpu_torch_where_nvidia_smi_lists_gpus_warns_with_the_cuda_wheel_the_driver_runs():
    from torchdoctor.system import check_accelerators

    nothing = {"cuda": [], "mps": False, "xpu": 0}
    listed = [("NVIDIA H100 80GB HBM3", "9.0"), ("NVIDIA H100 80GB HBM3", "9.0")]
    finding = check_accelerators(nothing, "CPU", {}, listed=listed, driver="550.54.15")
    assert finding.id == "sys.accelerators" and finding.status == "warn"
    assert "CPU build, but nvidia-smi lists 2 GPU(s) (NVIDIA H100 80GB HBM3)" in finding.summary
    assert (
        finding.fix
        == "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu129"
    )  # CUDA 12 minor compatibility
    assert check_accelerators(nothing, "CPU", {}, listed=[]).status == "ok"


def test_a_driver_too_old_for_every_cuda_wheel_is_said_with_the_driver_it_needs():
    """Driver 418 runs no CUDA torch wheel published today: the fix said cu128 (a wheel it cannot run); now it names
    the driver the oldest wheel needs, and the last torch for CUDA 10.2 where the driver runs that."""
    from torchdoctor.system import check_accelerators

    nothing = {"cuda": [], "mps": False, "xpu": 0}
    listed = [("Tesla V100-SXM2-16GB", "7.0")]
    fix = check_accelerators(nothing, "CPU", {}, listed=listed, driver="418.87.01").fix
    assert "cu128" not in fix and "driver 418.87.01 is older than every CUDA torch wheel needs" in fix, fix
    assert "450.80.02" in fix and "whl/cu118" in fix and "torch==1.12.1" not in fix, fix
    older = check_accelerators(nothing, "CPU", {}, listed=listed, driver="440.64.00").fix
    assert "pip install torch==1.12.1 --index-url https://download.pytorch.org/whl/cu102" in older, older


def test_a_pth_file_that_puts_an_old_copy_first_is_named_in_the_fix(tmp_path, monkeypatch):
    import site

    from torchdoctor.shadowing import Shadow

    run, extra, site_packages = _layout(tmp_path)
    old = tmp_path / "old-site"
    _package(old, "accelerate")
    (site_packages / "zz-old.pth").write_text(f"import sys; sys.path.insert(0, {str(old)!r})\n")
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(site_packages)])
    shadow = Shadow(
        "accelerate", str(old / "accelerate"), str(old), "sys.path", str(site_packages / "accelerate")
    )
    finding = check_shadowed_modules([shadow])
    assert finding.status == "fail" and finding.fix.startswith(
        f"rm {site_packages / 'zz-old.pth'}   # it puts"
    )


def test_pythonwarnings_that_raise_every_librarys_warning_warn_and_narrower_ones_say_nothing():
    from torchdoctor.system import check_python_warnings

    for value, category in [("error", "warning"), ("e", "warning"), ("default,error", "warning")]:
        finding = check_python_warnings({"PYTHONWARNINGS": value})
        assert finding.id == "sys.python_warnings" and finding.status == "warn", value
        assert f"every {category} of every module into an exception" in finding.summary
        assert finding.fix.startswith("export PYTHONWARNINGS=error:::__main__"), finding.fix
    only = check_python_warnings({"PYTHONWARNINGS": "error::DeprecationWarning"})
    assert "every DeprecationWarning of every module" in only.summary
    assert only.fix.startswith("export PYTHONWARNINGS=error::DeprecationWarning:__main__")
    # a message names the warnings it raises on; a later filter of the same category takes them all back
    narrower = ("error:torch.cuda.amp", "error::DeprecationWarning,ignore::DeprecationWarning")
    for harmless in ("", "ignore", "error:::__main__", "error,default", "always::UserWarning", *narrower):
        assert check_python_warnings({"PYTHONWARNINGS": harmless}) is None, harmless
    assert check_python_warnings({}) is None


def test_a_user_site_copy_is_removed_with_pip_by_its_distribution_name(monkeypatch):
    from torchdoctor.shadowing import Shadow

    monkeypatch.setattr(sys, "prefix", sys.base_prefix)  # not in a venv: its own pip reaches the user site

    user = "/home/me/.local/lib/python3.11/site-packages"
    shadow = Shadow(
        "yaml", f"{user}/yaml", user, "the user site (pip install --user)", "/usr/lib/python3/yaml"
    )
    finding = check_shadowed_modules([shadow])
    assert finding.status == "warn"
    assert finding.fix.startswith("python -m pip uninstall PyYAML   # removes the copy in the user site")
    monkeypatch.setattr(sys, "prefix", "/home/me/venv")  # a venv's pip refuses a copy outside it
    fix = check_shadowed_modules([shadow]).fix
    assert fix.startswith(f"{sys.base_prefix}/bin/python3 -m pip uninstall PyYAML")
