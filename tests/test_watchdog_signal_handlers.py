"""The watchdog's stack signal where a library puts every signal's handler back (Lightning's _SignalConnector
does at the end of each fit, validate and test: `signal.signal(s, signal.getsignal(s))` for every signal,
which sets faulthandler's to SIG_DFL, since Python's signal module does not know faulthandler's). Found with
Lightning's bug_report_model.py, `trainer.save_checkpoint` under `if trainer.global_rank == 0:` between fit and
test, under launch --watchdog: both ranks ended with exit status -39 (killed by the stack signal) and the report
was a failed job's, 'rank 1 failed as its consequence'."""

import faulthandler
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap

from test_watchdog import kept_folder, line_with

from torchdoctor.hang.collect import _loader_workers
from torchdoctor.hang.stack_signal import catches, keep_caught
from torchdoctor.hang.worker import DUMP_SIGNAL

# what Lightning's _SignalConnector.register_signal_handlers and teardown do, in the few lines that matter
PUT_BACK = textwrap.dedent(
    """
    import signal
    import time

    import torch.distributed as dist


    def fit():
        saved = {s: signal.getsignal(s) for s in signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}}
        time.sleep(0.1)  # the training
        for s, handler in saved.items():  # teardown: every handler back as Python's signal module knew it
            if handler is not None:
                signal.signal(s, handler)


    dist.init_process_group("gloo")
    fit()
    time.sleep(1.5)  # the worker's sampler looks at least once after the teardown
    if dist.get_rank() == 0:
        dist.barrier()  # only rank 0: save_checkpoint's barrier
    else:
        time.sleep(60)  # rank 1 went on elsewhere
    """
)


def test_a_handler_set_back_to_default_is_registered_again_and_an_ignored_one_is_left_alone():
    with open("/dev/null", "w") as sink:
        faulthandler.register(DUMP_SIGNAL, file=sink, all_threads=True, chain=False)
        try:
            assert catches("self", DUMP_SIGNAL) is True and not keep_caught(DUMP_SIGNAL, sink)
            signal.signal(DUMP_SIGNAL, signal.getsignal(DUMP_SIGNAL))  # SIG_DFL: the signal would end us
            assert catches("self", DUMP_SIGNAL) is False
            assert keep_caught(DUMP_SIGNAL, sink) and catches("self", DUMP_SIGNAL) is True
            signal.signal(DUMP_SIGNAL, signal.SIG_IGN)  # as worker_finished does: not taken back
            assert not keep_caught(DUMP_SIGNAL, sink) and catches("self", DUMP_SIGNAL) is False
        finally:
            faulthandler.unregister(DUMP_SIGNAL)
            signal.signal(DUMP_SIGNAL, signal.SIG_DFL)
    assert catches(2**22 + 7, DUMP_SIGNAL) is None  # no such process: unknown, not False


def test_a_hang_after_a_library_put_every_signal_handler_back_is_reported_as_the_hang(cli, tmp_path):
    script = tmp_path / "put_back.py"
    script.write_text(PUT_BACK)
    # 8 s: under CI's load two ranks once spent 3 s in init_process_group, which the watchdog rightly called a hang
    result = cli("launch", "--nproc-per-node", "2", "--watchdog", "8", str(script), timeout=100)
    if "failed:" in result.stderr:  # the failed job's report keeps its folder too
        shutil.rmtree(re.search(r"What each rank left: (\S+)/rank\*", result.stderr)[1], ignore_errors=True)
    # exit status -39 (killed by the stack signal), not the digits of a random temporary folder's name
    assert not re.search(r"(?:exitcode|status|exited with)\W{0,6}-39\b", result.stderr), result.stderr[-3000:]
    assert "failed:" not in result.stderr, result.stderr[-3000:]
    with kept_folder(result):
        report = result.stderr[result.stderr.index("torchdoctor: hang: no progress for 8s") :]
    barrier, sleep = line_with(script, "dist.barrier()"), line_with(script, "time.sleep(60)")
    assert "rank 0 (pid" in report and "waiting in torch.distributed.barrier" in report, report
    assert f"{script}:{barrier} in <module>" in report, report
    assert f"Culprit: rank(s) 1 at {script}:{sleep}; rank(s) 0 wait because of it." in report, report
    assert sys.platform != "linux" or "not asked" not in report, report


def test_a_child_that_does_not_catch_the_stack_signal_is_not_sent_it(tmp_path):
    # a DataLoader worker started by `spawn` (or any child not forked from the rank) has no faulthandler: the
    # signal would end it, and the rank waiting for its batch would fail ("DataLoader worker ... killed")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stack_file = tmp_path / "rank0.stack"
        stack_file.write_text("")
        assert _loader_workers(stack_file, os.getpid(), wait=0.5) == []
        assert child.poll() is None, f"the child ended with {child.returncode}"
    finally:
        child.kill()
        child.wait()
