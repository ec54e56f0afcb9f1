"""One id per check: a check's findings, its crash and the status line all carry the id the registry derives
from its name (``check_kernel`` in ``sys``: ``sys.kernel``), the one ``check --list`` shows and ``--only``
takes."""

import ast
import importlib
import inspect
import json
import os
from pathlib import Path

import pytest
from env_fakes import environ, nvidia_smi, toolkit

from torchdoctor.checks import AREAS, check_id, discover, pick, run_checks, run_one
from torchdoctor.distributed import checks as dist
from torchdoctor.env.machine import scan
from torchdoctor.env.torch_facts import TorchFacts
from torchdoctor.errors import BadInput
from torchdoctor.gpu_balance import balance_verdict, check_balance
from torchdoctor.mpi import checks as mpi
from torchdoctor.net.checks import check_smoke
from torchdoctor.system import check_accelerators, check_kernel, check_python, check_shm, check_torch

AREA_MODULES = [*AREAS.values(), "torchdoctor.mpi.checks"]


def _ids(findings):
    return {f.id for f in ([findings] if not isinstance(findings, list) else findings) if f is not None}


@pytest.mark.parametrize("module", AREA_MODULES)
def test_an_area_makes_findings_only_through_verdict_of_its_own_check(module):
    """No id is typed by hand: no `Finding(...)` in an area module, and a check names itself to
    `verdict_of` (a helper that makes one check's findings names that check)."""
    source = Path(importlib.import_module(module).__file__).read_text()
    checks = {n for n in dir(importlib.import_module(module)) if n.startswith("check_")}
    for function in ast.parse(source).body:
        if not isinstance(function, ast.FunctionDef):
            continue
        for call in ast.walk(function):
            if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
                continue
            assert call.func.id != "Finding", f"{module}.{function.name} builds a Finding by hand"
            if call.func.id == "verdict_of":
                (named,) = call.args
                assert named.id in checks, f"{module}.{function.name}: verdict_of({named.id})"
                if function.name.startswith("check_"):
                    assert named.id == function.name, f"{function.name} makes {named.id}'s findings"


def test_every_check_has_a_unique_id_and_a_line_of_what_it_looks_at():
    from torchdoctor.checks import looks_at

    checks = discover()
    ids = [check_id(c) for c in checks]
    assert len(ids) == len(set(ids)) and len(ids) >= 20
    assert {"sys.torch", "env.toolkit_mismatch", "dist.timeout", "dist.torch_debug", "net.smoke"} <= set(ids)
    for check in checks:
        line = looks_at(check)
        assert line and "\n" not in line and line.endswith("."), (check_id(check), line)


def test_system_and_dist_checks_called_with_fakes_emit_their_own_id():
    cases = {
        check_python: [((3, 8, 0),), ((3, 11, 7),)],
        check_torch: [("1.13.1", None, None), ("2.13.0+cu121", "12.1", None)],
        check_accelerators: [({"cuda": [], "mps": False, "xpu": 0}, "CUDA 12.1", {})],
        check_kernel: [("4.15.0-generic", "Linux"), ("6.1.0", "Linux"), ("23.1.0", "Darwin"), ("x", "Linux")],
        check_shm: [(None, None, "/no/such/shm"), (2**29, 2**29), (2**34, 2**33)],
        dist.check_debug_mode: [({},), ({"TORCHDOCTOR_DEBUG_MODE": "maybe"},)],
        dist.check_nccl_error_handling: [({},), ({"TORCH_NCCL_ASYNC_ERROR_HANDLING": "0"},)],
        dist.check_timeout: [({"NCCL_TIMEOUT": "1"},), ({"TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC": "x"},)],
        dist.check_torch_debug: [({},), ({"TORCH_DISTRIBUTED_DEBUG": "LOUD"},)],
        dist.check_nccl_debug: [({},), ({"NCCL_DEBUG": "LOUD"},), ({"NCCL_DEBUG": "warn"},)],
    }
    for check, calls in cases.items():
        statuses = set()
        for args in calls:
            finding = check(*args)
            assert finding.id == check_id(check), (check.__name__, args, finding)
            statuses.add(finding.status)
        assert len(statuses) > 1 or check in (check_accelerators, dist.check_timeout), (
            check.__name__,
            statuses,
        )


def test_env_checks_on_fake_machines_emit_their_own_id(tmp_path):
    cuda12 = toolkit(tmp_path / "usr/local/cuda-12.6", nvcc="nvcc-12.6.txt", gpu_codes=["sm_80", "sm_90"])
    nvidia_smi(tmp_path / "bin")
    machines = [
        scan(environ(tmp_path / "none"), tmp_path / "empty", facts=TorchFacts("2.13.0+cpu")),
        scan(
            environ(tmp_path / "bin", CUDA_HOME=cuda12),
            tmp_path,
            facts=TorchFacts("2.3.0+cu121", cuda="12.1"),
        ),
        scan(
            environ(tmp_path / "bin", CUDA_HOME=cuda12, TORCH_CUDA_ARCH_LIST="bogus"),
            tmp_path,
            facts=TorchFacts("2.3.0+cu118", cuda="11.8"),
        ),
    ]
    for check in discover(["torchdoctor.env.checks"]):
        check = inspect.unwrap(check)
        for machine in machines:
            assert _ids(check(machine)) == {check_id(check)}, (check.__name__, machine)


def test_gpu_and_mpi_checks_emit_their_own_id():
    gpus = [
        {"index": i, "name": "GPU", "memory_gib": m, "tflops": t}
        for i, (m, t) in enumerate([(80, 150), (24, 70)])
    ]
    for figures in (gpus, gpus[:1], []):
        assert check_balance(figures).id == "gpu.balance"
    assert balance_verdict(gpus).id == "gpu.balance"
    missing = mpi.check_mpirun(lambda *a, **k: mpi.run_command(["/no/such/mpirun", "--version"]))
    assert missing.id == "mpi.mpirun" and missing.status == "fail"


def test_a_crash_and_the_status_line_name_the_checks_id():
    def check_kernel():  # a check that crashes, under the id of the one it replaces
        raise RuntimeError("boom")

    check_kernel.__module__ = "torchdoctor.system"
    (crash,) = run_one(check_kernel)
    assert crash.id == "sys.kernel" and crash.status == "warn" and "boom" in crash.summary
    told = []
    findings = run_checks(discover(["torchdoctor.distributed.checks"]), told.append)
    assert told == [check_id(c) for c in discover(["torchdoctor.distributed.checks"])]
    assert _ids(findings) <= set(told)


def test_the_smoke_test_files_every_stage_under_net_smoke_keeping_the_stage(tmp_path):
    under = check_smoke(environ={"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"})
    assert _ids(under) == {"net.smoke"}
    (unresolved,) = check_smoke(timeout=5, environ={**os.environ, "MASTER_ADDR": "no.such.host.invalid"})
    assert unresolved.id == "net.smoke" and unresolved.status == "fail"
    assert unresolved.details["stage"] == "dist.preflight_host" and "does not resolve" in unresolved.summary


def test_pick_keeps_the_run_order_and_names_the_known_ids():
    checks = discover(["torchdoctor.system", "torchdoctor.distributed.checks"])
    picked = pick(checks, ["dist.timeout", "sys.shm", "sys.shm"])
    assert [check_id(c) for c in picked] == ["sys.shm", "dist.timeout"]
    assert pick(checks, []) == checks
    with pytest.raises(BadInput, match=r"^--only sys\.bogus: no such check; choose from sys\.python, .*dist"):
        pick(checks, ["sys.bogus"])
    with pytest.raises(BadInput, match="--only net.smoke: its area is left out by --skip net"):
        pick(checks, ["net.smoke"], skip=["net"])


def test_only_takes_a_comma_list_and_areas_as_skip_does():
    # a user types `--only dist.nccl_settings,net.smoke` or `--only dist`, as --skip takes `--skip net,env`
    checks = discover(["torchdoctor.system", "torchdoctor.distributed.checks"])
    picked = [check_id(c) for c in pick(checks, ["dist.timeout,sys.shm"])]
    assert picked == ["sys.shm", "dist.timeout"]
    every_dist = [check_id(c) for c in checks if check_id(c).startswith("dist.")]
    assert [check_id(c) for c in pick(checks, ["dist"])] == every_dist
    assert [check_id(c) for c in pick(checks, ["sys.shm", "dist"])] == ["sys.shm", *every_dist]
    with pytest.raises(BadInput, match=r"^--only dsit: no such check"):
        pick(checks, ["sys.shm,dsit"])


@pytest.mark.timeout(360)  # a real `check --json`, importing torch: a minute on a loaded 2-core machine
def test_check_json_carries_only_listed_ids_and_only_runs_one(cli, monkeypatch, capsys):
    from torchdoctor.cli import main

    # `--list`, `--only` and the refused id in this process (the same `main`; torch is imported here already,
    # a process of their own would import it again, 3 s of CPU each); the full run in a real one
    assert main(["check", "--list"]) == 0
    ids = [line.split(maxsplit=1)[0] for line in capsys.readouterr().out.splitlines()]
    assert ids == [check_id(c) for c in discover()]
    # settings that make the dist checks warn, and a stage of the smoke test run for real
    warn = {"NCCL_TIMEOUT": "1800", "NCCL_DEBUG": "LOUD", "TORCHDOCTOR_DEBUG_MODE": "maybe"}
    result = cli("check", "--json", env=warn)
    assert result.returncode in (0, 1), result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert {f["id"] for f in findings} <= set(ids)
    assert {"dist.timeout", "dist.nccl_debug", "dist.debug_mode", "net.smoke"} <= {
        f["id"] for f in findings if f["status"] != "ok" or f["id"] == "net.smoke"
    }
    for name, value in warn.items():
        monkeypatch.setenv(name, value)
    assert main(["check", "--json", "--only", "dist.timeout", "--only", "sys.python"]) in (0, 1)
    assert [f["id"] for f in json.loads(capsys.readouterr().out)["findings"]] == [
        "sys.python",
        "dist.timeout",
    ]
    assert main(["check", "--only", "net.communication"]) == 2
    bad = capsys.readouterr()
    assert bad.out == "" and len(bad.err.splitlines()) == 1
    assert "--only net.communication: no such check; choose from sys.python, " in bad.err
    assert "net.smoke" in bad.err


def test_the_list_as_json(capsys):
    from torchdoctor.checks import looks_at
    from torchdoctor.cli.check import _list

    checks = discover(["torchdoctor.system"])
    _list(checks, [], as_json=True)
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{"id": check_id(c), "looks_at": looks_at(c)} for c in checks]
