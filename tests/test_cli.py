import json

from torchdoctor import __version__
from torchdoctor.checks import discover, run_one
from torchdoctor.system import check_accelerators, check_python, check_torch


def test_version(cli):
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"torchdoctor {__version__}"


def test_bad_usage_is_one_line_and_exit_2(cli):
    for args in (["no-such-command"], ["check", "--no-such-flag"], ["check", "--skip", "bogus"]):
        result = cli(*args)
        assert result.returncode == 2, args
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith("torchdoctor: error:")


def test_check_json_lists_sys_findings(cli):
    result = cli("check", "--json", "--skip", "net", "--skip", "gpu")
    data = json.loads(result.stdout)
    ids = [f["id"] for f in data["findings"]]
    assert {"sys.python", "sys.torch", "sys.accelerators"} <= set(ids)
    assert data["status"] in ("ok", "warn", "fail")
    assert result.returncode == (1 if data["status"] == "fail" else 0)


def test_python_too_old_fails_with_fix():
    finding = check_python(version_info=(3, 8, 10), executable="/usr/bin/python3.8")
    assert finding.status == "fail" and "3.8.10" in finding.summary and finding.fix


def test_torch_builds_named():
    assert check_torch("2.13.0+cpu", None, None).summary == "torch 2.13.0+cpu (CPU build)"
    assert "CUDA 12.8" in check_torch("2.7.0", "12.8", None).summary
    assert "ROCm 6.2" in check_torch("2.5.1", None, "6.2.41133").summary
    old = check_torch("2.0.1", "11.8", None)
    assert old.status == "fail" and "2.0.1" in old.summary


def test_cuda_build_without_gpu_warns_and_names_the_hiding_variable():
    seen = {"cuda": [], "mps": False, "xpu": 0}
    finding = check_accelerators(seen, "CUDA 12.8", environ={"CUDA_VISIBLE_DEVICES": ""})
    assert finding.status == "warn" and "CUDA_VISIBLE_DEVICES" in finding.fix
    gpus = {"cuda": [{"index": 0, "name": "NVIDIA H100", "capability": "9.0", "memory_gib": 80}]}
    assert "sm_90" in check_accelerators(gpus, "CUDA 12.8", environ={}).summary


def test_a_crashing_check_becomes_a_warning():
    def check_explodes():
        raise OSError("disk on fire")

    (finding,) = run_one(check_explodes)
    assert finding.status == "warn" and "disk on fire" in finding.summary
    assert finding.summary.startswith("the explodes check itself crashed: OSError: disk on fire")
    trace = finding.details["traceback"]
    assert trace.startswith("Traceback") and 'raise OSError("disk on fire")' in trace


def test_a_crashed_checks_traceback_is_shown_with_verbose_only():
    from rich.console import Console

    from torchdoctor.findings import render_human

    def check_explodes():
        raise OSError("disk on fire")

    findings = run_one(check_explodes)
    shown = {}
    for verbose in (False, True):
        console = Console(record=True, width=200)
        render_human(findings, console, verbose=verbose)
        shown[verbose] = console.export_text()
    assert "Traceback" not in shown[False]
    assert "Traceback (most recent call last):" in shown[True]
    assert 'raise OSError("disk on fire")' in shown[True]


def test_discovery_finds_check_functions_in_source_order():
    names = [fn.__name__ for fn in discover(["torchdoctor.system"])]
    assert names[:3] == ["check_python", "check_torch", "check_accelerators"]
