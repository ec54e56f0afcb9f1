"""`explain` beyond single fixture logs: per-rank folders, interleaved ranks, root cause ordering, fixes that
depend on the facts, any input (binary, CRLF, colour, huge lines, gzip, stdin), and the command line."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
from pathlib import Path

import pytest

from torchdoctor.errors import BadInput
from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.reader import MAX_LINE, windows

FIXTURES = Path(__file__).parent / "fixtures"


def timeout_line(rank: int, seq: int = 808, op: str = "ALLREDUCE", completed: int | None = None) -> str:
    """What torch 2.x's ProcessGroupNCCL watchdog prints on a rank whose collective timed out."""
    done = seq - 1 if completed is None else completed
    return (
        f"[rank{rank}]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog caught collective "
        f"operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=9801523, NumelOut=9801523, "
        f"Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n"
        f"[rank{rank}]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank "
        f"{rank}] Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL "
        f"work: {seq}, last completed NCCL work: {done}.\n"
    )


OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.15 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has 78.08 GiB memory in use. "
    "Of the allocated memory 60.12 GiB is allocated by PyTorch, and 17.31 GiB is reserved by PyTorch but "
    "unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
    "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
)
STEPS = "".join(f"epoch 0 step {i} loss=2.{i:03d} lr=1e-4\n" for i in range(200))


def torchrun_log_dir(root: Path, per_rank: dict[int, str]) -> Path:
    """torchrun --log-dir's layout: <dir>/<run id>/attempt_0/<local rank>/stderr.log."""
    for rank, text in per_rank.items():
        folder = root / "run_abc" / "attempt_0" / str(rank)
        folder.mkdir(parents=True)
        (folder / "stderr.log").write_text(STEPS + text)
        (folder / "stdout.log").write_text(STEPS)
    return root


# -- several ranks ----------------------------------------------------------------------------------------


def test_oom_on_rank_0_leads_and_the_timeouts_are_its_consequence(tmp_path):
    torchrun_log_dir(tmp_path, {0: OOM, 1: timeout_line(1), 2: timeout_line(2), 3: timeout_line(3)})
    oom, timeout = explain([str(tmp_path)])
    assert oom.id == "log.cuda_oom" and oom.status == "fail" and "rank 0" in oom.summary
    assert timeout.id == "log.nccl_watchdog_timeout" and timeout.status == "warn"
    assert "ranks 1-3" in timeout.summary and "Rank 0 never got there (it failed first)" in timeout.summary
    assert "consequence of the CUDA out of memory above (log.cuda_oom)" in timeout.summary
    assert timeout.details["consequence_of"] == "log.cuda_oom"


def test_interleaved_log_names_the_rank_without_a_timeout_line(tmp_path):
    log = tmp_path / "run.log"
    log.write_text(
        "[rank0]: Saving checkpoint to /ckpt/step_800 ...\n"
        + timeout_line(1)
        + timeout_line(2)
        + timeout_line(3)
        + "[rank0]: Error: saving took 965 s\n"
    )
    (finding,) = explain([str(log)])
    assert finding.id == "log.nccl_watchdog_timeout" and finding.status == "fail"
    assert "timed out on ranks 1-3" in finding.summary and "ALLREDUCE (SeqNum 808)" in finding.summary
    assert "Rank 0 never got there (no timeout line in its log)" in finding.summary
    assert "what rank 0 was doing" in finding.fix
    fix = finding.fix
    assert fix.index("torchdoctor launch --watchdog") < fix.index(
        "timeout=timedelta"
    )  # find out before raising


def test_all_ranks_timed_out_the_lowest_last_completed_is_the_one_behind(tmp_path):
    log = tmp_path / "run.log"
    log.write_text(
        timeout_line(0, seq=101, completed=99) + timeout_line(1, seq=101) + timeout_line(2, seq=101)
    )
    (finding,) = explain([str(log)])
    assert "Rank 0 never got there (its last completed work is 99, the others' 100)" in finding.summary


def test_ranks_waiting_in_different_collectives_are_each_named(tmp_path):
    log = tmp_path / "run.log"
    log.write_text(timeout_line(0, seq=5, op="BROADCAST") + timeout_line(1, seq=6) + timeout_line(2, seq=6))
    (finding,) = explain([str(log)])
    assert "rank 0 in BROADCAST #5, ranks 1, 2 in ALLREDUCE #6" in finding.summary
    assert "Rank 0 never got there" in finding.summary


def test_net_read_log_is_explain_plus_the_nccl_summary():
    from torchdoctor.net.read_log import read_log_findings

    found = read_log_findings(FIXTURES / "nccl" / "socket-connect-abort-proxy-failure.log")
    ids = [f.id for f in found]
    assert ids[:2] == ["log.network_interface", "log.peer_closed"] and "net.nccl" in ids
    assert [f.id for f in read_log_findings(FIXTURES / "logs" / "033_cuda_oom.txt")] == ["log.cuda_oom"]


def test_net_read_log_gives_a_fix_once_where_a_failure_was_read_from_a_warn_line():
    from torchdoctor.net.read_log import read_log_findings

    found = read_log_findings(FIXTURES / "nccl" / "p2p-ipc-peer-access-not-supported.log")
    assert [f.id for f in found] == ["log.gpu_p2p", "net.nccl", "net.nccl_warn"]
    assert "NCCL_P2P_DISABLE=1" in found[0].fix
    # the WARN line is still listed, with its host, pointing at the failure read from it
    assert found[2].summary.startswith("node01: NCCL WARN failed to open CUDA IPC handle")
    assert found[2].fix == "This is the line the failure above (log.gpu_p2p) was read from: its fix is there."
    # a WARN no failure was read from keeps its own hint
    found = read_log_findings(FIXTURES / "nccl" / "socket-connect-abort-proxy-failure.log")
    hints = {f.details["message"].split(":")[0]: f.fix for f in found if f.id == "net.nccl_warn"}
    assert hints["socketStartConnect"].endswith("(log.network_interface) was read from: its fix is there.")
    proxy = next(hint for message, hint in hints.items() if message.startswith("[Proxy Service 0]"))
    assert proxy == "A consequence of the connection failure above it"


def test_slurm_per_task_files_give_the_ranks(tmp_path):
    (tmp_path / "job_42.0.out").write_text(STEPS)
    for rank in (1, 2):
        (tmp_path / f"job_42.{rank}.out").write_text(STEPS + timeout_line(rank).replace(f"[rank{rank}]:", ""))
    (finding,) = explain([str(tmp_path)])
    assert "timed out on ranks 1, 2" in finding.summary and "Rank 0 never got there" in finding.summary


def test_flight_recorder_dumps_in_the_folder_are_read_with_the_logs(tmp_path):
    shutil.copytree(FIXTURES / "flight_recorder" / "skip_one_all_reduce", tmp_path / "dumps")
    torchrun_log_dir(tmp_path / "logs", {0: timeout_line(0, seq=7), 2: timeout_line(2, seq=7), 1: ""})
    found = explain([str(tmp_path)])
    assert [f.id for f in found] == ["log.rank_divergence", "log.nccl_watchdog_timeout"]
    assert "rank 1 never entered all_reduce #7" in found[0].summary


# -- fixes from the facts ---------------------------------------------------------------------------------


def test_fragmentation_gets_expandable_segments_unless_already_set(tmp_path):
    log = tmp_path / "oom.log"
    log.write_text(OOM)
    (finding,) = explain([str(log)])
    assert "17.31 GiB reserved but unallocated" in finding.summary and "2.00 GiB" in finding.summary
    assert "fragmentation" in finding.fix and "expandable_segments:True" in finding.fix
    log.write_text("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n" + OOM)
    (already,) = explain([str(log)])
    assert "already set" in already.fix and "export PYTORCH_CUDA_ALLOC_CONF" not in already.fix


def test_a_plain_shortage_gets_no_fragmentation_advice(tmp_path):
    log = tmp_path / "oom.log"
    log.write_text(OOM.replace("17.31 GiB is reserved", "12.00 MiB is reserved"))
    (finding,) = explain([str(log)])
    assert "expandable_segments" not in finding.fix and "smaller batch" in finding.fix


def test_an_impossible_request_is_a_bug_not_a_shortage(tmp_path):
    log = tmp_path / "oom.log"
    log.write_text(OOM.replace("Tried to allocate 2.00 GiB", "Tried to allocate 67108864.00 GiB"))
    (finding,) = explain([str(log)])
    assert "impossible request" in finding.summary and "not a shortage" in finding.fix
    assert "find_executable_batch_size" not in finding.fix


# -- nothing recognised -----------------------------------------------------------------------------------


def test_healthy_training_output_is_not_a_failure(tmp_path):
    log = tmp_path / "megatron.log"
    log.write_text(
        "".join(
            f" iteration {i} | lm loss: 2.3E+00 | loss scale: 65536.0 | number of skipped iterations: 0 | "
            f"number of nan iterations: 0 |\n"
            for i in range(50)
        )
        + "Traceback (most recent call last):\nValueError: some script bug\n"
    )
    (finding,) = explain([str(log)])
    # no kind for it, but a traceback is a failure (exit 1): the error is named, not explained
    assert finding.id == "log.unrecognised" and finding.status == "fail"
    assert "ValueError: some script bug" in finding.summary and "torchdoctor report" in finding.fix
    log.write_text(log.read_text().split("Traceback")[0])
    (finding,) = explain([str(log)])
    assert finding.id == "log.unrecognised" and finding.status == "skip"


def test_a_long_megatron_log_counts_nan_only_as_a_value(tmp_path):
    step = " iteration {} | lm loss: 2.3E+00 | number of nan iterations: 0 |{}\n"
    log = tmp_path / "megatron.log"
    log.write_text("".join(step.format(i, "") for i in range(5000)))
    assert log.stat().st_size > 256 * 1024  # read through the triggers, not line by line
    (healthy,) = explain([str(log)])
    assert healthy.id == "log.unrecognised"
    with log.open("a") as out:
        out.write(step.format(5000, " lm loss: nan |"))
    (diverged,) = explain([str(log)])
    assert diverged.id == "log.nan_overflow" and diverged.details["where"] == [f"{log}:5001"]


# -- any input --------------------------------------------------------------------------------------------


def test_the_end_of_a_long_log_is_read_line_by_line(tmp_path):
    """A run killed by the kernel ends with the shell's bare "Killed": no trigger, but at the end of the log."""
    log = tmp_path / "run.log"
    log.write_text(STEPS * 100 + "Killed\n")
    assert log.stat().st_size > 256 * 1024
    (finding,) = explain([str(log)])
    assert finding.id == "log.worker_killed"
    log.write_text(STEPS * 50 + "Killed\n" + STEPS * 50)  # far from both ends: "Killed" is a trigger
    (finding,) = explain([str(log)])
    assert finding.id == "log.worker_killed"
    log.write_text(
        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040)\n"
        + STEPS * 100
    )  # the start of a long log is read line by line too: a warning and a run that went on, on the CPU
    (finding,) = explain([str(log)])
    assert finding.id == "log.driver_too_old" and "CUDA up to 11.4" in finding.summary


def test_binary_input_is_read_without_error(tmp_path):
    log = tmp_path / "core"
    log.write_bytes(os.urandom(300_000) + b"\0\xff\xfe")
    (finding,) = explain([str(log)])
    assert finding.id == "log.unrecognised" and finding.status == "skip"
    # said as what it is, not as a log where nothing was recognised
    assert finding.summary.startswith(f"{log} does not read as a log: ")
    assert finding.summary.endswith(
        "% of its first 64 KiB are not text (a checkpoint, a core dump, an archive?)"
    )
    assert "tee train.log" in finding.fix
    # a short one is measured whole; a log with colour codes, tabs and CRLF is still a log
    log.write_bytes(bytes(range(256)) * 4)
    (finding,) = explain([str(log)])
    assert finding.summary == (
        f"{log} does not read as a log: 11% of its 1024 bytes are not text (a checkpoint, a core dump, an archive?)"
    )
    log.write_bytes(b"\x1b[32mstep\t1\x1b[0m loss 2.3\r\n" * 100)
    (finding,) = explain([str(log)])
    assert finding.summary.startswith("no known failure recognised in ")


def test_an_empty_log_is_said_to_be_empty_with_why_a_run_leaves_one(tmp_path):
    empty, other = tmp_path / "train.log", tmp_path / "rank1.log"
    empty.write_bytes(b"")
    (finding,) = explain([str(empty)])
    assert (finding.id, finding.status, finding.summary) == ("log.unrecognised", "skip", f"{empty} is empty")
    assert "PYTHONUNBUFFERED=1" in finding.fix
    # beside a log with text, nothing was recognised in that text: said as ever
    other.write_text(STEPS)
    (finding,) = explain([str(empty), str(other)])
    assert finding.summary.startswith("no known failure recognised in ")


def test_binary_files_in_a_folder_are_skipped_not_read(tmp_path):
    (tmp_path / "model.pt").write_bytes(b"PK\x03\x04" + b"\0" * 200_000 + b"RuntimeError: CUDA out of memory")
    (tmp_path / "train.log").write_text(STEPS)
    (finding,) = explain([str(tmp_path)])
    assert finding.id == "log.unrecognised" and finding.details["binary_files_skipped"] == [
        str(tmp_path / "model.pt")
    ]


def test_a_folder_whose_only_log_like_file_is_binary_names_it_and_why_it_was_not_read(tmp_path):
    # a run's folder with its script and a checkpoint torch.save wrote, no log: the checkpoint is named, not "the
    # input" (the script is left out as source code); nothing failed that explain read, so still a skip (exit 0)
    import torch

    torch.save({"linear.weight": torch.zeros(64, 64)}, tmp_path / "checkpoint.pt")
    (tmp_path / "train.py").write_text("import torch\n")
    (finding,) = explain([str(tmp_path)])
    assert (finding.id, finding.status) == ("log.unrecognised", "skip"), finding.summary
    assert finding.summary.startswith(
        f"{tmp_path / 'checkpoint.pt'} was not read: it is binary, not a log ("
    ), finding.summary
    assert "are NUL bytes: a checkpoint" in finding.summary and "the input" not in finding.summary
    assert "2>&1 | tee train.log" in finding.fix


def test_crlf_colour_codes_and_bad_utf8(tmp_path):
    log = tmp_path / "win.log"
    coloured = "\x1b[31m" + OOM.replace("\n", "") + "\x1b[0m"
    log.write_bytes(b"\xff\xfe garbage \xc3\x28\r\n" + coloured.encode() + b"\r\nnext line\r\n")
    (finding,) = explain([str(log)])
    assert finding.id == "log.cuda_oom" and "17.31 GiB reserved but unallocated" in finding.summary


def test_a_100k_character_line_is_read(tmp_path):
    log = tmp_path / "long.log"
    log.write_text("x" * 100_000 + OOM.replace("\n", "") + "y" * 100_000 + "\n" + "z" * 100_000)
    (finding,) = explain([str(log)])
    assert finding.id == "log.cuda_oom"


def test_a_few_megabytes_with_the_failure_buried_in_them(tmp_path):
    log = tmp_path / "big.log"
    with log.open("w") as out:
        for block in range(40):
            out.write(STEPS * 12)
            if block == 31:
                out.write(timeout_line(3))
    assert log.stat().st_size > 3_000_000
    (finding,) = explain([str(log)])
    assert finding.id == "log.nccl_watchdog_timeout" and "rank 3" in finding.summary
    assert finding.details["where"][0] == f"{log}:{32 * 2400 + 1}"


def test_gzip_logs(tmp_path):
    log = tmp_path / "run.log.gz"
    log.write_bytes(gzip.compress((STEPS + OOM).encode()))
    (finding,) = explain([str(log)])
    assert finding.id == "log.cuda_oom"
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(gzip.compress((OOM + STEPS * 50).encode())[:-200])
    found = explain([str(cut)])
    assert found[0].id == "log.cuda_oom" and found[-1].id == "log.truncated_file"


def test_a_small_gzip_log_cut_short_is_read_before_its_cut(tmp_path):
    # a console gzipped as it was written, its last bytes missing (the trailer, the last block): Python's gzip
    # gives nothing back from such a small file, and explain said "cut.log.gz is empty"; zcat reads the log
    whole = gzip.compress((STEPS + OOM).encode())
    for cut_off in (4, 8):
        cut = tmp_path / f"cut{cut_off}.log.gz"
        cut.write_bytes(whole[:-cut_off])
        found = explain([str(cut)])
        assert [f.id for f in found] == ["log.cuda_oom", "log.truncated_file"], [f.summary for f in found]
    # cut inside its header: nothing to read, said as that, not as an empty log
    cut = tmp_path / "header.log.gz"
    cut.write_bytes(whole[:12])
    (found,) = explain([str(cut)])
    assert found.id == "log.unrecognised" and "is cut off before its first line" in found.summary
    assert "is empty" not in found.summary


@pytest.mark.parametrize("chunk", [7, 64, 1000, 1 << 20])
def test_windows_are_the_same_whatever_the_chunk_size(chunk):
    text = (
        STEPS + OOM + "Last error:\nDuplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000\n"
    ) * 3
    lines = [(w.number, w.line, w.following[:2], w.also) for w in windows(io.BytesIO(text.encode()), chunk)]
    expected = [(w.number, w.line, w.following[:2], w.also) for w in windows(io.BytesIO(text.encode()))]
    assert lines == expected and len(expected) == 6
    assert expected[0][0] == 201 and expected[1][3] == [203, 204]


@pytest.mark.parametrize("chunk", [7, 64, 1000])
def test_the_tail_read_line_by_line_is_the_same_whatever_the_chunk_size(chunk):
    text = (STEPS + "Segmentation fault (core dumped)\n" + OOM) * 3
    tail_from = len(text.encode()) // 2

    def seen(size):
        return [
            (w.number, w.line) for w in windows(io.BytesIO(text.encode()), size, every_line_from=tail_from)
        ]

    assert seen(chunk) == seen(1 << 20)
    numbers = [n for n, _ in seen(1 << 20)]
    # the first segfault line, before the tail, is a candidate by its own trigger
    assert numbers[0] == 201 and len(numbers) > 200 and numbers == sorted(set(numbers))


def test_a_line_longer_than_the_cap_is_cut_not_held(tmp_path):
    data = b"a" * (5 * MAX_LINE) + b" RuntimeError: boom " + b"b" * (5 * MAX_LINE)
    (window,) = list(windows(io.BytesIO(data), chunk_size=MAX_LINE))
    assert len(window.line) <= MAX_LINE and "RuntimeError: boom" in window.line


def test_bad_paths_are_one_line(tmp_path):
    with pytest.raises(BadInput, match="explain /no/such.log: no such file or folder"):
        explain(["/no/such.log"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        BadInput, match="an empty folder: if it is torchrun's --log-dir, torchrun failed before"
    ):
        explain([str(tmp_path / "empty")])
    (tmp_path / "holds" / "nothing").mkdir(parents=True)
    with pytest.raises(BadInput, match="holds: a folder with no file in it, only empty folders"):
        explain([str(tmp_path / "holds")])
    if os.geteuid() != 0:  # root reads a file whatever its mode
        (tmp_path / "holds" / "nothing" / "rank0.log").write_text(STEPS)
        (tmp_path / "holds" / "nothing" / "rank0.log").chmod(0)
        with pytest.raises(
            BadInput, match=r"holds: none of the 1 file\(s\) in this folder can be read \(.*rank0.log: "
        ):
            explain([str(tmp_path / "holds")])


def test_torchruns_log_dir_without_tee_says_where_the_output_went(tmp_path):
    # torchrun --log-dir without --tee/--redirects: one empty folder per local rank under attempt_0
    for rank in (0, 1):
        (tmp_path / "run" / "624d1e23_731ob8yq" / "attempt_0" / str(rank)).mkdir(parents=True)
    with pytest.raises(BadInput, match=r"explain .*run: torchrun's --log-dir folder holds no log: .*--tee 3"):
        explain([str(tmp_path / "run")])


# -- the command line -------------------------------------------------------------------------------------


def test_cli_exit_status_json_and_stdin(cli, cli_here, tmp_path):
    log = tmp_path / "run.log"
    log.write_text(OOM)
    result = cli("explain", "--json", str(log))
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["findings"][0]["id"] == "log.cuda_oom"
    healthy = tmp_path / "ok.log"
    healthy.write_text(STEPS)
    # a file and stdin in real processes; the healthy file's status and words through the same `main` here
    result = cli_here("explain", str(healthy))
    assert result.returncode == 0 and "no known failure recognised" in result.stdout
    assert "torchdoctor report" in result.stdout
    import subprocess
    import sys

    piped = subprocess.run(
        [sys.executable, "-m", "torchdoctor", "explain", "-"],
        input=OOM,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert piped.returncode == 1 and "log.cuda_oom" in piped.stdout


@pytest.mark.parametrize(
    "make, message", [("missing", "no such file or folder"), ("empty", "an empty folder")]
)
def test_cli_bad_input_is_exit_2_and_one_line(cli, cli_here, tmp_path, make, message):
    path = tmp_path / make
    if make == "empty":
        path.mkdir()
    # the missing file in a real process, the empty folder through the same `main` here: only the check differs
    result = (cli if make == "missing" else cli_here)("explain", str(path))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"torchdoctor: error: explain {path}") and message in result.stderr
    assert len(result.stderr.splitlines()) == 1
