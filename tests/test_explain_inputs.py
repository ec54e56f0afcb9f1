"""`explain` on what users hand it: torchrun's --log-dir folders from real failing jobs (a rank that raised, a
DataLoader worker that raised, a job that restarted), the console output of the same jobs, a pipe against a
file against a folder, UTF-16 files, an empty path, and the summaries it writes from them. The real jobs' folders
and consoles are recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs them again)."""

from __future__ import annotations

import codecs
import io
import os
import re
import shutil
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from helpers import VENV_TORCHRUN
from rank_runner import start_script
from recorded import recorded_folder

from torchdoctor.errors import BadInput
from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.inputs import utf16_encoding
from torchdoctor.explain.reader import TAIL

JOB = Path(__file__).with_name("explain_failing_job.py")


def run_job(mode: str, folder: Path) -> Path:
    """A real two-rank gloo job under torchrun (explain_failing_job.py MODE, copied into ``folder``), ending in a
    failure: the folder ``folder/job`` holding its --log-dir folder ``logs`` and its console ``console.txt``
    (stdout and stderr in one). torchrun's agent is forked where torch is imported (rank_runner.start_script: its
    console script run as its shebang line runs it), and starts its ranks as torchrun does."""
    job = folder / "job"
    job.mkdir()
    script = shutil.copy(JOB, folder / JOB.name)
    flags = ["--standalone", "--nproc-per-node", "2", "--max-restarts", "1" if mode == "restart" else "0"]
    flags += ["--log-dir", str(job / "logs"), "--redirects", "3", "--tee", "3", str(script), mode]
    with (job / "console.txt").open("w") as out:
        if VENV_TORCHRUN is not None:
            process = start_script([VENV_TORCHRUN, *flags], out, out, env={"OMP_NUM_THREADS": "1"})
        else:
            command = [sys.executable, "-m", "torch.distributed.run", *flags]
            env = {**os.environ, "OMP_NUM_THREADS": "1"}
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            code = process.wait(timeout=500)  # it waits for its two ranks
        finally:  # a job that did not end leaves no torchrun or rank behind: the agent stops its ranks
            if process.poll() is None:
                os.kill(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
    assert code != 0, f"the {mode} job was meant to fail: {(job / 'console.txt').read_text()[-2000:]}"
    return job


# crash: rank 1 raises in its step; dataloader: rank 1's DataLoader worker raises; restart (--max-restarts 1): rank 1
# runs out of memory, then never comes back from loading its data
RECORDED_RUNS = {f"inputs_{mode}": partial(run_job, mode) for mode in ("crash", "dataloader", "restart")}


def _job(mode: str) -> tuple[Path, Path]:
    """The recorded job ``mode``: its --log-dir folder and its console."""
    job = recorded_folder(f"inputs_{mode}")
    return job / "logs", job / "console.txt"


WHAT_RANK_1_RAISED = {
    "crash": ("RuntimeError: planted crash on rank 1", 'raise RuntimeError("planted crash on rank 1")'),
    "dataloader": ("ValueError: sample 2 has no label", "in __getitem__"),
}


@pytest.mark.parametrize("mode", ["crash", "dataloader"])
def test_a_log_dir_leads_with_the_rank_that_failed_first(mode):
    """Rank 0 knows only that its peer went away; rank 1's own error leads, with its line in the script."""
    log_dir, _ = _job(mode)
    found = explain([str(log_dir)])
    lead = found[0]
    error, line = WHAT_RANK_1_RAISED[mode]
    assert lead.id == "log.unrecognised" and lead.status == "fail", [(f.id, f.summary) for f in found]
    assert lead.summary.startswith("rank 1 failed first") and error in lead.summary
    assert f"/{JOB.name}:" in lead.details["frame"] and line in lead.summary
    if mode == "dataloader":
        assert lead.details["worker"] == "DataLoader worker process 0"
    # rank 0 says its peer went away, unless torchrun stopped it first (one traceback or two, by timing)
    assert all(f.status == "warn" and f.details["consequence_of"] == "log.unrecognised" for f in found[1:])
    assert not any("pass the folder" in f.fix or "--log-dir folder" in f.fix for f in found)


@pytest.mark.parametrize("mode", ["crash", "dataloader"])
def test_the_console_output_says_the_same_and_does_not_ask_for_record(cli, cli_here, mode):
    """The traceback is in the input: no advice to decorate the entry point with @record to get it."""
    _, console = _job(mode)
    # one console in a real process, the other through the same `main` here: only the log they read differs
    done = (cli if mode == "crash" else cli_here)("explain", str(console))
    assert done.returncode == 1, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert "rank 1 failed first" in first and WHAT_RANK_1_RAISED[mode][0] in first
    assert "@record" not in done.stdout and "record so" not in done.stdout


def test_each_restart_is_its_own_failure_the_last_first():
    """attempt_0: rank 1 ran out of memory; attempt_1: rank 1 never came back from loading its data. The
    second attempt's timeout is not blamed on the first attempt's out-of-memory error."""
    log_dir, _ = _job("restart")
    found = explain([str(log_dir)])
    last = [f for f in found if f.details.get("attempt") == 1]
    earlier = [f for f in found if f.details.get("attempt") == 0]
    assert found[0] is last[0] and found[0].id == "log.collective_timeout", [(f.id, f.summary) for f in found]
    assert (
        found[0].summary.startswith("attempt 1 (the last): ") and "Rank 1 never got there" in found[0].summary
    )
    assert not any("cuda_oom" in f.details.get("consequence_of", "") for f in last)
    assert [f.id for f in earlier][:1] == ["log.cuda_oom"] and "on rank 1" in earlier[0].summary


# -- the same text from a file, a pipe, a folder ---------------------------------------------------------

STEPS = "".join(f"epoch 0 step {i} loss=2.{i % 1000:03d} lr=1e-4 tokens/s=1234\n" for i in range(9000))
ENDINGS = {
    "sigkill": (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 4711) "
        "of binary: /usr/bin/python3\n"
        "  exitcode  : -9 (pid: 4711)\n"
        "  traceback : Signal 9 (SIGKILL) received by PID 4711\n",
        "log.worker_killed",
    ),
    "nvcc": ("nvcc fatal   : Unsupported gpu architecture 'compute_90'\n", "log.cuda_build"),
}


def _verdict(found):
    return [(f.id, f.status, f.summary.replace("<stdin>", "LOG"), f.fix) for f in found]


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_a_pipe_a_file_and_a_folder_give_the_same_verdict(tmp_path, ending):
    """Past 256 KB the end of a piped log is read line by line, as the end of a file is."""
    text, kind = ENDINGS[ending]
    folder = tmp_path / "logs"
    folder.mkdir()
    log = folder / "LOG"
    log.write_text(STEPS * 2 + text)
    assert log.stat().st_size > 2 * TAIL
    cat = subprocess.Popen(["cat", str(log)], stdout=subprocess.PIPE)
    try:
        piped = explain(["-"], stdin=cat.stdout)
    finally:
        cat.stdout.close()
        cat.wait(timeout=30)
    from_file = explain([str(log)])
    from_folder = explain([str(folder)])
    assert piped[0].id == kind, _verdict(piped)
    normal = [(i, s, summary.replace(str(log), "LOG"), fix) for i, s, summary, fix in _verdict(from_file)]
    assert _verdict(piped) == normal
    assert [
        (i, s, summary.replace(str(log), "LOG"), fix) for i, s, summary, fix in _verdict(from_folder)
    ] == normal


@pytest.mark.parametrize(
    "line, kind",
    [
        ("Segmentation fault (core dumped)", "log.worker_crash"),
        ("/var/spool/slurmd/job42/slurm_script: line 9: 4711 Killed  python train.py", "log.worker_killed"),
        ("Killed", "log.worker_killed"),
        ("Bus error (core dumped)", "log.worker_crash"),
        (
            "E1124 20:21:45.417000 9070 torch/distributed/elastic/multiprocessing/api.py:1002] failed "
            "(exitcode: -9) local_rank: 1 (pid: 9319) of binary: /usr/bin/python",
            "log.worker_killed",
        ),
    ],
)
def test_a_death_in_the_middle_of_a_long_log_is_seen(tmp_path, line, kind):
    """A restarted job goes on writing after a worker died: the death is far from both ends of the log."""
    log = tmp_path / "run.log"
    log.write_text(STEPS * 2 + line + "\n" + STEPS * 2)
    assert len(STEPS * 2) > 2 * TAIL  # the line is far from both ends
    found = explain([str(log)])
    assert found[0].id == kind, [(f.id, f.summary) for f in found]


# -- bad input, other encodings ----------------------------------------------------------------------


def test_an_empty_path_is_bad_input(cli_here, tmp_path):
    """`explain "$LOG"` with LOG unset must not read every file under the current folder."""
    (tmp_path / "old.log").write_text("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    # through the same `main` here: explain's bad input in a real process is test_explain's
    done = cli_here("explain", "", cwd=tmp_path)
    assert done.returncode == 2 and "empty path" in done.stderr + done.stdout
    with pytest.raises(BadInput, match="empty path"):
        explain([" "])


def test_a_folders_code_docs_and_hidden_folders_are_not_read_as_its_logs(cli_here, tmp_path):
    """`explain .` in a run's folder: the script's `except` on out of memory, a README's pasted error and git's
    objects are not the run's failure; the log beside them is read, and its rank numbering ignores them."""
    (tmp_path / "train.py").write_text(
        'except RuntimeError as e:\n    if "CUDA out of memory" in str(e): ...\n'
    )
    (tmp_path / "README.md").write_text(
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error\n"
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "COMMIT_EDITMSG").write_text(
        "fix: DataLoader worker (pid 1) is killed by signal: Bus error\n"
    )
    done = cli_here("explain", str(tmp_path))
    assert done.returncode == 2, done.stdout
    assert (
        done.stderr.count("\n") == 1
        and "2 file(s) are source code or documents (README.md, train.py)" in done.stderr
    )
    (tmp_path / "run.log").write_text("epoch 1 loss 0.31\ntrain finished\n")
    assert [f.id for f in explain([str(tmp_path)])] == ["log.unrecognised"]
    (tmp_path / "run.log").write_text(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    )
    assert [f.id for f in explain([str(tmp_path)])] == ["log.cuda_oom"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_logs_are_read(tmp_path, encoding):
    """PowerShell's `>` writes UTF-16 with a byte-order mark; without one it is still recognised."""
    text = (
        "step 1\r\nTraceback (most recent call last):\r\n"
        '  File "train.py", line 3, in main\r\n    gadget.load_widgets(state)\r\n'
        "RuntimeError: Error(s) in loading widgets for Gadget:\r\n"
        '\tMissing widget(s): "knob", "dial". \r\n'
        '\tUnexpected widget(s): "lever". \r\n'
    )
    log = tmp_path / "run.log"
    log.write_bytes(text.encode(encoding))
    assert log.read_bytes().startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) == (encoding == "utf-16")
    found = explain([str(log)])
    plain = explain(["-"], stdin=io.BytesIO(text.encode()))
    assert [(f.id, f.summary.replace(str(log), "<stdin>")) for f in found] == [
        (f.id, f.summary) for f in plain
    ]
    assert found[0].details["frame"] == "train.py:3 in main"


CJK_PASTES = (
    Path(__file__).parent / "fixtures" / "logs" / "010_rendezvous_or_port.txt",
    Path(__file__).parent / "fixtures" / "corpus" / "train" / "052.txt",
)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("paste", CJK_PASTES, ids=lambda p: p.name)
def test_utf16_logs_in_chinese_are_read_as_their_utf8_twin(tmp_path, paste, encoding):
    """Real pastes from Chinese users (the reporter's words, then the error), as PowerShell's `>` writes them
    (UTF-16 with a byte-order mark) and without the mark: a CJK character has no NUL byte, so a log mostly
    in Chinese has few; it is still read as UTF-16 from a file and a pipe, with the verdict of its UTF-8."""
    text = paste.read_text(encoding="utf-8")
    # the first 4 KB in Chinese: the reporter's own sentence, as a run that prints in Chinese fills a log
    words = text.split("：")[0]
    assert words and all(ord(char) > 0x2E80 for char in words)
    for body in (text, f"{words}\n" * (4096 // len(words)) + text):
        plain = [(f.id, f.summary) for f in explain(["-"], stdin=io.BytesIO(body.encode()))]
        assert plain[0][0] != "log.unrecognised"
        log = tmp_path / "run.log"
        log.write_bytes(body.encode(encoding))
        from_file = [(f.id, f.summary.replace(str(log), "<stdin>")) for f in explain([str(log)])]
        from_pipe = [(f.id, f.summary) for f in explain(["-"], stdin=io.BytesIO(body.encode(encoding)))]
        assert from_file == from_pipe == plain


def test_bytes_after_a_byte_order_mark_are_not_read_as_utf16():
    """A byte-order mark before bytes that are not UTF-16 text (a NUL every other byte and no more, or
    unpaired surrogates) does not make a binary file a log."""
    checkpoint = codecs.BOM_UTF16_LE + bytes(range(256)) * 16
    assert utf16_encoding(checkpoint) is None
    assert utf16_encoding(codecs.BOM_UTF16_LE + "\ud800".encode("utf-16-le", "surrogatepass") * 100) is None
    # UTF-8 with a few stray NULs, all at odd offsets: its newlines are not UTF-16 newlines
    stray = bytearray(("训练 step 1 loss=2.31\n" * 200).encode())
    for at in (101, 303, 505, 707, 909):
        stray[at] = 0
    assert utf16_encoding(bytes(stray)) is None
    assert utf16_encoding("训练\n".encode("utf-16")) == "utf-16"
    assert utf16_encoding(("训练 step 1\n" * 10).encode("utf-16-le")) == "utf-16-le"


def test_an_unrecognised_failure_names_its_error_its_line_and_exits_1(cli_here, tmp_path):
    """A traceback is a failure even when torchdoctor knows no kind for it: exit 1, and the lines under a
    header such as 'Error(s) in loading ... for ...:' are kept (a state_dict's keys have a kind of their own)."""
    log = tmp_path / "run.log"
    log.write_text(
        "loading checkpoint\nTraceback (most recent call last):\n"
        '  File "/home/me/train.py", line 40, in <module>\n    main()\n'
        '  File "/home/me/train.py", line 31, in main\n    gadget.load_widgets(torch.load(path))\n'
        '  File "/usr/lib/python3/site-packages/gadgets/core.py", line 2581, in load_widgets\n'
        "    raise RuntimeError(\n"
        "RuntimeError: Error(s) in loading widgets for Gadget:\n"
        '\tMissing widget(s): "knob", "dial". \n'
        '\tUnexpected widget(s): "lever". \n'
    )
    (finding,) = explain([str(log)])
    assert finding.id == "log.unrecognised" and finding.status == "fail"
    assert finding.details["frame"] == "/home/me/train.py:31 in main"
    assert finding.details["detail"] == [
        'Missing widget(s): "knob", "dial".',
        'Unexpected widget(s): "lever".',
    ]
    assert 'Missing widget(s): "knob"' in finding.summary
    assert cli_here("explain", str(log)).returncode == 1  # explain's exit 1 in a real process: test_explain's
    (bare,) = explain(["-"], stdin=io.BytesIO(b"ValueError: an odd value\n"))  # a line, no traceback
    assert (
        bare.id == "log.unrecognised" and bare.status == "skip" and "ValueError: an odd value" in bare.summary
    )


def test_only_victims_errors_name_the_first_of_them(tmp_path):
    """Rank 1's log is missing: rank 0's error about it is named as what it is, not as the cause."""
    found = explain(
        ["-"],
        stdin=io.BytesIO(
            b"[rank0]: Traceback (most recent call last):\n"
            b'[rank0]:   File "/home/me/train.py", line 12, in main\n[rank0]:     dist.all_reduce(t)\n'
            b"[rank0]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out "
            b"waiting 1800000ms for recv operation to complete\n"
        ),
    )
    assert found[0].id != "log.unrecognised" or "failed first" not in found[0].summary


# -- the summaries and fixes of some kinds ---------------------------------------------------------------

CONTAINER_OOM = (
    "[rank3]: Traceback (most recent call last):\n"
    '[rank3]:   File "/workspace/train.py", line 88, in <module>\n[rank3]:     loss.backward()\n'
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 3 has a total capacity "
    "of 79.15 GiB of which 5.44 MiB is free. Process {pid} has {other} memory in use. Of the allocated memory "
    "{allocated} is allocated by PyTorch, and 1.91 GiB is reserved by PyTorch but unallocated.\n"
)


@pytest.mark.parametrize(
    "other, allocated, summary_tail, is_self",
    [
        ("77.93 GiB", "75.20 GiB", "", True),  # both could not fit on 79 GiB: it is this process
        ("40.00 GiB", "37.20 GiB", "", False),  # another process really holds 40 GiB
        (
            "40.00 GiB",
            "37.20 GiB",
            "E0318 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 3 "
            "(pid: 144) of binary: /usr/bin/python\n",
            True,  # torchrun's own line says pid 144 is a worker of this job
        ),
    ],
)
def test_oom_in_a_container_is_not_blamed_on_the_process_itself(other, allocated, summary_tail, is_self):
    text = CONTAINER_OOM.format(pid=144, other=other, allocated=allocated) + summary_tail
    (oom, *_) = explain(["-"], stdin=io.BytesIO(text.encode()))
    assert oom.id == "log.cuda_oom"
    assert ("Another process (pid 144)" in oom.fix) is not is_self, oom.fix
    assert ("(this one, as the host numbers it)" in oom.summary) is is_self


def test_a_lightning_log_gets_lightnings_option_for_unused_parameters():
    reducer = (
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. "
        "This error indicates that your module has parameters that were not used in producing loss.\n"
    )
    frames = (
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.11/site-packages/lightning/pytorch/trainer/trainer.py", line 539, in fit\n'
        "    call._call_and_handle_interrupt(\n"
        '  File "/opt/conda/lib/python3.11/site-packages/torch/nn/parallel/distributed.py", line 1633, in forward\n'
        "    inputs, kwargs = self._pre_forward(*inputs, **kwargs)\n"
    )
    (lightning,) = explain(["-"], stdin=io.BytesIO((frames + reducer).encode()))
    (plain,) = explain(["-"], stdin=io.BytesIO(reducer.encode()))
    assert 'strategy="ddp_find_unused_parameters_true"' in lightning.fix
    assert "DistributedDataParallel(model, find_unused_parameters=True)" not in lightning.fix
    assert "DistributedDataParallel(model, find_unused_parameters=True)" in plain.fix


@pytest.mark.usefixtures(
    "every_message_seen"
)  # a reading of the message as the installed Lightning prints it
def test_lightnings_own_unused_parameters_message_is_read_with_its_option():
    # Lightning 2.x's DDPStrategy.on_exception puts its own message in place of torch's reducer message: the
    # user sees only Lightning's (a real `Trainer(strategy="ddp", devices=2)` run on this machine printed it)
    import inspect

    from lightning.pytorch.strategies.ddp import DDPStrategy

    source = inspect.getsource(DDPStrategy.on_exception)
    message = "".join(part for part in re.findall(r'"([^"]*)"', source) if not part.startswith(".*"))
    assert message.startswith("It looks like your LightningModule has parameters that were not used"), source
    text = (
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "/work/train.py", line 10, in <module>\n'
        "[rank1]:     trainer.fit(M(), data)\n"
        f"[rank1]: RuntimeError: {message}\n"
    )
    (found,) = explain(["-"], stdin=io.BytesIO(text.encode()))
    assert (found.id, found.details["confidence"]) == ("log.ddp_unused_parameters", "certain")
    assert 'Trainer(strategy="ddp_find_unused_parameters_true")' in found.fix
    assert "DistributedDataParallel(model, find_unused_parameters=True)" not in found.fix


def test_one_ranks_watchdog_log_says_the_late_rank_is_elsewhere():
    """The watchdog's own abort (exit -6) is the same failure, not a second one."""
    fixture = Path(__file__).parent / "fixtures/torch/watchdog-timeout-coalesced-taking-process-down.txt"
    one_rank = [line.removeprefix("[rank4]:") for line in fixture.read_text().splitlines()[:5]]
    text = "\n".join(
        [
            *one_rank,
            "E0318 07:40:01.101000 140 torch/distributed/elastic/multiprocessing/api.py:869] failed "
            "(exitcode: -6) local_rank: 4 (pid: 2231) of binary: /usr/bin/python",
        ]
    )
    found = explain(["-"], stdin=io.BytesIO(text.encode()))
    assert (
        found[0].id == "log.nccl_watchdog_timeout"
        and "the rank that did not arrive is in another rank's log" in found[0].summary
    )
    assert [f.status for f in found[1:]] == ["warn"] * len(found[1:]), [(f.id, f.status) for f in found]


@pytest.mark.parametrize(
    "text, quoted, ragged",
    [
        (
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 1234) "
            "of binary: /usr/bin/python3",
            "exit code -9 (local rank 0, pid 1234)",
            "-9)",
        ),
        ("{'loss': nan, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.1}", "loss: nan", "loss':"),
    ],
)
def test_summaries_quote_phrases_not_fragments(text, quoted, ragged):
    (finding,) = explain(["-"], stdin=io.BytesIO(f"step 1\n{text}\n".encode()))
    assert quoted in finding.summary and ragged not in finding.summary, finding.summary


def test_a_long_error_is_cut_after_a_word():
    word = "abcdefghij"
    text = "Traceback (most recent call last):\nValueError: " + " ".join([word] * 60) + "\n"
    (finding,) = explain(["-"], stdin=io.BytesIO(text.encode()))
    quoted = finding.details["exception"]
    assert quoted.endswith(f"{word} …") and len(quoted) < 260


def test_the_earliest_error_by_the_times_the_logs_state_leads(tmp_path):
    """Two ranks each raised an error of their own; the folder is read rank 0 first, but rank 1's logging
    line says it failed 40 seconds earlier."""

    def rank_log(rank: int, when: str, error: str) -> str:
        return (
            f"{when},120 - INFO - train.py:88 - rank {rank} step 1200\n"
            "Traceback (most recent call last):\n"
            f'  File "/home/me/train.py", line {90 + rank}, in main\n    step(batch)\n'
            f"{error}\n"
        )

    (tmp_path / "rank0.log").write_text(rank_log(0, "2026-11-24 20:22:05", "KeyError: 'labels'"))
    (tmp_path / "rank1.log").write_text(rank_log(1, "2026-11-24 20:21:25", "ValueError: empty batch"))
    found = explain([str(tmp_path)])
    assert found[0].summary.startswith("rank 1 failed first: ValueError: empty batch"), found[0].summary
    (tmp_path / "rank1.log").write_text(rank_log(1, "2026-11-24 20:23:25", "ValueError: empty batch"))
    found = explain([str(tmp_path)])
    assert found[0].summary.startswith("rank 0 failed first: KeyError: 'labels'"), found[0].summary


PEER_CLOSED_ONLY = (
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "/tmp/shapes.py", line 5, in <module>\n'
    "[rank1]:     dist.all_reduce(t)\n"
    "[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed "
    "by peer [127.0.0.1]:61058. This is typically caused by a remote worker crashing.\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "============================================================\n"
    "shapes.py FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "{others}\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2026-11-30_08:32:01\n"
    "  host      : localhost\n"
    "  rank      : 1 (local_rank: 1)\n"
    "  exitcode  : 1 (pid: 24940) \n"
    "  error_file: <N/A>\n"
)


def test_a_peer_that_closed_where_torchrun_names_no_other_failure_finished_without_an_error():
    # torchrun --nproc-per-node 2 on this machine, rank 0 all-reducing 3 floats and rank 1 4 over gloo: rank 0
    # completed and exited 0, rank 1 saw its peer close; torchrun lists no other failure
    (found, *_) = explain(
        ["-"], stdin=io.BytesIO(PEER_CLOSED_ONLY.format(others="  <NO_OTHER_FAILURES>").encode())
    )
    assert found.id == "log.peer_closed" and "the peer finished without an error" in found.summary
    assert "torchdoctor launch --debug" in found.fix and "differs in size between ranks" in found.fix
    # a peer torchrun stopped or that failed is a failure it lists: then the peer's own error is the cause
    stopped = "[0]:\n  time      : 2026-11-30_08:32:01\n  rank      : 0 (local_rank: 0)\n  exitcode  : -15 (pid: 24939)"
    (found, *_) = explain(["-"], stdin=io.BytesIO(PEER_CLOSED_ONLY.format(others=stopped).encode()))
    assert found.id == "log.peer_closed" and "finished without an error" not in found.summary
