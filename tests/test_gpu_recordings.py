"""What an NVIDIA H200 printed (tests/fixtures/gpu/, recorded by benchmarks/gpu/record.sh; SOURCES.md says how),
read by the parsers and checks that read such output, on a machine without a GPU. Each test names what the
recording showed wrong before its fix, where it did."""

from __future__ import annotations

import io
import json
import pickle
import shutil
import sys
import types
from pathlib import Path

import pytest
import torch

from torchdoctor.env import driver, toolkits
from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.flight_recorder.findings import explain_dumps
from torchdoctor.hang import flight_records
from torchdoctor.hang.folder import folder_verdict
from torchdoctor.net import nccl_log, worker
from torchdoctor.runner import CommandResult

GPU = Path(__file__).parent / "fixtures" / "gpu"
HANG = "benchmarks/gpu/nccl_hang.py"  # the script of the recorded hangs, as its path ends


def recorded(name: str) -> str:
    return (GPU / name).read_text()


def answering(name: str):
    """A command runner that answers every command with the recorded output ``name``."""
    return lambda args, **_: CommandResult(tuple(args), 0, recorded(name))


def test_the_driver_and_the_gpus_as_nvidia_smi_printed_them():
    assert driver.driver_version(answering("nvidia-smi-driver.txt")) == ("580.159.04", "")
    assert driver.gpus_from_nvidia_smi(answering("nvidia-smi-compute-cap.txt")) == [("NVIDIA H200", "9.0")]
    assert not driver.driver_too_old(
        "580.159.04", "13.0"
    )  # the check said "driver 580.159.04 runs CUDA 13.0"


def test_the_toolkit_as_nvcc_printed_it():
    assert toolkits.nvcc_release(recorded("nvcc-version.txt")) == ("13.0", "13.0.88")


def test_the_nccl_log_of_a_live_run_names_the_socket_network_and_no_ib_device():
    # NCCL 2.28 logs "NET/IB : Using [RO]; OOB eth0:..." when the IB plugin found no device, and
    # "Bootstrap: Using eth0:..." without the space: the interfaces listed "NET/IB " (no device), no bootstrap
    summary = nccl_log.summarise(recorded("net-nccl-debug-rank0.log"))
    assert summary.versions == ["2.28.9+cuda13.0"] and summary.networks == ["Socket"]
    assert summary.interfaces == {"vm": ["bootstrap eth0 192.0.2.2", "NET/Socket eth0"]}


def test_two_ranks_on_one_gpu_read_as_the_duplicate_gpu_with_the_users_line():
    found = explain([str(GPU / "duplicate-gpu.txt")])[0]
    assert found.id == "log.duplicate_gpu" and found.details["confidence"] == "certain"
    assert found.details["ranks"] == "0, 1" and found.details["frame"].endswith(
        "duplicate_gpu.py:15 in <module>"
    )


def test_a_real_cuda_out_of_memory_error_with_the_allocators_numbers():
    found = explain([str(GPU / "oom-uncaught.txt")])[0]
    assert found.id == "log.cuda_oom" and found.details["confidence"] == "certain"
    facts = found.details["facts"]
    assert (facts["request"], facts["total"], facts["free"], facts["allocated"]) == (
        "128.00",
        "139.80",
        "11.29",
        "128.00",
    )


def test_nccls_own_watchdog_timeout_reads_as_a_timeout_of_which_the_cause_is_not_in_the_log():
    found = explain([str(GPU / "nccl-timeout.txt")])[0]
    assert found.id == "log.nccl_watchdog_timeout" and found.details["confidence"] == "likely"
    assert found.details["facts"]["seq"] == "4" and found.details["facts"]["timeout_ms"] == "20000"
    # torch 2.6+'s "Stack trace of the failed collective" (#0 all_reduce from torch, #1 its wrapper, #2 the
    # user's line) and the status line after the watchdog's: the collective's line, the last completed work
    assert "last completed work 3; process group default_pg; called at " in found.summary
    assert found.summary.split("; called at ")[1].startswith(
        "/work/main/benchmarks/gpu/nccl_hang.py:31 in <module>"
    )


def test_a_failed_collectives_stack_of_torchs_frames_alone_names_no_call():
    text = recorded("nccl-timeout.txt").replace(
        "/work/main/benchmarks/gpu/nccl_hang.py", "/usr/lib/python3/dist-packages/trainer/loop.py"
    )
    found = explain(["-"], stdin=io.BytesIO(text.encode()))[0]
    assert found.id == "log.nccl_watchdog_timeout" and "called at" not in found.summary


def test_the_dump_nccl_wrote_at_its_timeout_says_the_collective_waited_on_the_ranks_own_gpu():
    # it said "the ranks agree on every collective they recorded (up to #4)": #4 never completed
    (found,) = explain_dumps([GPU / "nccl_trace_rank_0"])
    assert found.id == "log.collective_stalled" and found.status == "warn"
    assert found.summary.startswith("process group 0 (default_pg): all_reduce #4 [1048576] Float (")
    assert f"{HANG}:31 in <module>) never completed on rank 0, the only rank of its group" in found.summary
    assert found.details["states"] == {"rank 0": "scheduled"}


def fake_c10d(monkeypatch, **dumps: bytes) -> None:
    """torch's c10d module as the watchdog's worker finds it, with these recorders' dumps."""
    module = types.SimpleNamespace(**{name: (lambda data=data, **_: data) for name, data in dumps.items()})
    monkeypatch.setitem(sys.modules, "torch._C._distributed_c10d", module)


def test_the_watchdogs_dump_of_an_nccl_job_holds_nccls_recorder(monkeypatch):
    # under `launch --watchdog` the rank's `_dump_fr_trace` was empty (watchdog/rank0.fr): NCCL's process
    # groups record into the recorder `_dump_nccl_trace` dumps
    nccl, other = (GPU / "nccl_trace_rank_0").read_bytes(), (GPU / "watchdog" / "rank0.fr").read_bytes()
    assert pickle.loads(other)["entries"] == []
    fake_c10d(monkeypatch, _dump_nccl_trace=nccl, _dump_fr_trace=other)
    assert flight_records.own_flight_record() == (nccl, "")

    gloo = dict(pickle.loads(nccl), pg_config={"1": {"name": "1", "desc": "gloo_group", "ranks": "[0]"}})
    gloo["entries"] = [dict(gloo["entries"][0], process_group=("1", "gloo_group"), pg_id=1)]
    fake_c10d(monkeypatch, _dump_nccl_trace=nccl, _dump_fr_trace=pickle.dumps(gloo))
    joined = pickle.loads(flight_records.own_flight_record()[0])
    assert len(joined["entries"]) == 5 and set(joined["pg_config"]) == {"0", "1"}


def test_the_watchdog_names_the_gpu_the_collective_waited_for_not_the_script(monkeypatch, tmp_path):
    # the recorded report: "no rank is in a collective: the run is stuck in the script itself."
    assert "stuck in the script itself" in recorded("watchdog-nccl-hang.txt")
    folder = shutil.copytree(GPU / "watchdog", tmp_path / "watchdog")
    fake_c10d(
        monkeypatch,
        _dump_nccl_trace=(GPU / "nccl_trace_rank_0").read_bytes(),  # the same script's hang, NCCL's recorder
        _dump_fr_trace=(GPU / "watchdog" / "rank0.fr").read_bytes(),
    )
    flight_records.write_flight_record(folder / "rank0")  # what the worker writes now
    _stacks, records, verdict = folder_verdict(folder)
    assert sorted(records) == [0] and verdict.kind == "stalled" and verdict.culprits == [0]
    assert (Path(verdict.where.file).as_posix().endswith(HANG), verdict.where.line) == (True, 31)
    assert "never completed on rank 0, the only rank of its group" in verdict.text
    assert "went on past the call" in verdict.text and f"{HANG}:32)" in verdict.text


def test_a_memory_snapshot_says_what_the_allocator_held_and_the_request_that_failed():
    # torch.cuda.memory._snapshot() of the out-of-memory run (oom-message.txt is the same moment in torch's words:
    # "42.50 GiB is allocated by PyTorch, and 1.65 GiB is reserved by PyTorch but unallocated")
    (found,) = explain([str(GPU / "memory-snapshot.pickle")])
    assert found.id == "log.memory_snapshot" and found.status == "warn"
    assert found.summary.startswith(
        "memory snapshot of GPU 0: 42.50 GiB in use in 4 segment(s) holding 44.15 GiB (1.65 GiB held but free"
    )
    assert (
        "12 out-of-memory event(s) in its history, the last asking 125.82 GiB with 94.92 GiB free"
        in found.summary
    )
    assert "42.50 GiB is allocated by PyTorch, and 1.65 GiB is reserved" in recorded("oom-message.txt")
    assert found.details["last_request_at"].endswith("oom.py:47 in <module>")
    assert "expandable_segments" not in found.fix  # 1.65 GiB free could not have held 125.82 GiB anyway


def test_a_request_the_free_pieces_could_hold_together_is_fragmentation(tmp_path):
    def block(size, state, line=0):
        frames = [{"name": "step", "filename": "/work/train.py", "line": line}] if line else []
        return {"address": 0, "size": size, "requested_size": size, "state": state, "frames": frames}

    gib = 2**30
    segments = [
        {
            "device": 0,
            "total_size": 4 * gib,
            "blocks": [block(3 * gib, "active_allocated", 12), block(gib, "inactive")],
        },
        {
            "device": 0,
            "total_size": 4 * gib,
            "blocks": [block(3 * gib, "active_allocated", 12), block(gib, "inactive")],
        },
    ]
    oom = {
        "action": "oom",
        "size": int(1.5 * gib),
        "device_free": 0,
        "frames": [block(0, "", 30)["frames"][0]],
    }
    path = tmp_path / "snapshot.pickle"
    path.write_bytes(pickle.dumps({"segments": segments, "device_traces": [[oom]], "allocator_settings": {}}))
    (found,) = explain([str(path)])
    assert "2.00 GiB held but free, the largest free block 1.00 GiB" in found.summary
    assert "most held by /work/train.py:12 in step (6.00 GiB)" in found.summary
    assert "in pieces (fragmentation): export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in found.fix
    path.write_bytes(pickle.dumps({"segments": "no", "entries_missing": True}))
    assert explain([str(path)])[0].id == "log.unreadable_dump"  # neither a dump nor a snapshot


def test_the_versions_a_gpu_rank_reports_use_torchs_arch_list(monkeypatch):
    # net's ranks on NCCL failed at init with "module 'torch.cuda' has no attribute 'get_archranks_text'"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i: "NVIDIA H200")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda i: (9, 0))
    monkeypatch.setattr(torch.cuda, "get_arch_list", lambda: ["sm_90"])
    monkeypatch.setattr(torch.cuda.nccl, "version", lambda: (2, 28, 9))
    found = worker.versions()
    assert found["arch_list"] == ["sm_90"] and found["gpus"] == [{"name": "NVIDIA H200", "capability": "9.0"}]
    # a gloo rank forked from `torchdoctor check`, which has used CUDA ("Cannot re-initialize CUDA in forked
    # subprocess" at get_device_properties), leaves the GPUs alone
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i: pytest.fail("a gloo rank asked for a GPU"))
    assert "gpus" not in worker.versions(on_gpu=False)


def test_nccl_with_more_ranks_than_gpus_says_so_before_cuda_does(monkeypatch):
    # recorded: "rank 1 on vm crashed at joined: AcceleratorError: CUDA error: invalid device ordinal"
    assert "invalid device ordinal" in recorded("net-2-ranks-nccl.txt")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    rank = worker.Worker(
        worker.WorkerOptions(backend="nccl"),
        environ={"RANK": "1", "LOCAL_RANK": "1", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2"},
    )
    with pytest.raises(RuntimeError) as raised:
        rank.choose_device({0: {"gpu": True}, 1: {"gpu": False}})
    said = str(raised.value)
    assert (
        said.startswith("--backend nccl: local rank 1 on ")
        and "has no GPU of its own (1 GPU(s) there)" in said
    )
    assert "--nproc-per-node 1" in said and "Duplicate GPU detected" in said


def test_the_check_on_the_h200_found_nothing_wrong():
    # `torchdoctor check -v --json` there, after the fixes above: every CUDA finding as the machine is
    found = {f["id"]: f for f in json.loads(recorded("check.json"))["findings"]}
    assert found["env.driver"]["summary"] == "driver 580.159.04 runs CUDA 13.0"
    assert found["env.nccl"]["summary"] == "torch ships NCCL 2.28.9"
    assert (
        found["env.gpu_arch"]["status"] == "ok" and "NVIDIA H200 (sm_90)" in found["env.gpu_arch"]["summary"]
    )
    assert found["net.smoke"]["status"] == "ok" and not [f for f in found.values() if f["status"] == "fail"]


def test_one_rank_has_no_bandwidth_to_measure(cli):
    # recorded on the H200: "✓ peak busbw ... 165507.424 GB/s (broadcast of 4 GiB); 1 ranks, nccl"
    assert "165507.424 GB/s (broadcast of 4 GiB)" in recorded("net-bench-one-rank.txt")
    result = cli("net", "--nproc-per-node", "1", "--bench", "--json", timeout=120)
    found = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    assert result.returncode == 0 and found["net.smoke"]["status"] == "ok"
    assert found["net.bandwidth"]["status"] == "skip"
    assert found["net.bandwidth"]["summary"].startswith("not measured: 1 rank, so nothing crosses a link")


def summary_of(windows: Path) -> list[str]:
    """The end summary of a kept run, judged again window by window."""
    from torchdoctor.stragglers.aggregate import judge_window
    from torchdoctor.stragglers.summary import summary_lines
    from torchdoctor.stragglers.verdict import Tracker

    tracker, verdicts = Tracker(), []
    for line in windows.read_text().splitlines():
        kept = json.loads(line)
        verdicts.append(judge_window(int(kept["window"]), {int(r): f for r, f in kept["ranks"].items()}))
        tracker.feed(verdicts[-1])
    return summary_lines(verdicts, tracker.said)


def test_a_rank_slow_since_before_the_baseline_is_said_at_the_end_and_no_healthy_run_gets_the_line():
    # two ranks on the H200, rank 1 given 12 extra matmuls a step from step 40: no verdict (the watch's usual is
    # steps 20-59), and the summary said only "no rank was slower for a sustained stretch"
    lines = summary_of(GPU / "stragglers-gpu-windows.jsonl")
    assert lines[0].endswith("no rank was slower for a sustained stretch")
    assert lines[1].startswith(
        "  rank 1 held the others back throughout: they waited 44.46 ms a step for it (37% of a step), its compute "
        "68.2 ms against their 23.31"
    )
    kept = Path(__file__).parent / "fixtures" / "stragglers"
    for healthy in sorted(kept.glob("healthy-*/stragglers-windows.jsonl")):
        assert not [line for line in summary_of(healthy) if "held the others back" in line], (
            healthy.parent.name
        )
