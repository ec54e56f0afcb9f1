"""`explain` on a console log that holds torchdoctor's own watchdog report (the live run is in
tests/test_watchdog.py: the report a real hang printed, read back); here the lines that must not read as it."""

from torchdoctor.explain.diagnose import explain


def test_the_failed_jobs_culprit_line_leaves_the_cause_to_the_ranks_traceback(tmp_path):
    # supervise._failure_report's lines, after the traceback of the rank that failed first
    log = tmp_path / "console.log"
    log.write_text(
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "/home/me/train.py", line 30, in <module>\n'
        "[rank1]:     loss = criterion(out, target)\n"
        "[rank1]: IndexError: Target 664 is out of bounds.\n"
        "torchdoctor: failed: rank 1 raised IndexError: Target 664 is out of bounds. at /home/me/train.py:30\n"
        "Culprit: rank(s) 1 at /home/me/train.py:30.\n"
        "What each rank left: /tmp/torchdoctor-watchdog-x1/rank*; the verdict as JSON: "
        "/tmp/torchdoctor-watchdog-x1/verdict.json.\n"
    )
    found = explain([str(log)])
    assert "log.hang_verdict" not in [f.id for f in found], [(f.id, f.summary) for f in found]
    assert found[0].id == "log.label_out_of_range", [(f.id, f.summary) for f in found]


def test_a_report_without_a_culprit_says_so_and_names_the_folder(tmp_path):
    log = tmp_path / "console.log"
    log.write_text(
        "torchdoctor: hang: no progress for 300s. Where every rank is:\n\n"
        "rank(s) 0-3 (vm): waiting in torch.distributed.all_reduce\n"
        "    train.py:40 in main: dist.all_reduce(t)\n\n"
        "every rank is inside all_reduce #12: none is missing from it\n"
        "Full stacks: /tmp/torchdoctor-watchdog-abc/rank*.stack, flight-recorder dumps: "
        "/tmp/torchdoctor-watchdog-abc/rank*.fr. The run was stopped.\n"
    )
    (lead,) = [f for f in explain([str(log)]) if f.id == "log.hang_verdict"]
    assert "after 300 s without progress; its report names no single rank" in lead.summary, lead.summary
    assert "`torchdoctor explain /tmp/torchdoctor-watchdog-abc`" in lead.fix, lead.fix


def test_a_failed_jobs_report_that_another_rank_raised_is_not_a_rank_that_ended_early(tmp_path):
    # the same report's other verdicts, and the words in a user's own sentence, are not the ended-early verdict
    log = tmp_path / "console.log"
    log.write_text(
        "torchdoctor: failed: rank 1 raised IndexError: Target 664 is out of bounds. at /home/me/train.py:30\n"
        "I think rank 1 ended while rank 0 still trained: it had fewer batches, and failed as its consequence\n"
    )
    assert "log.ranks_ended_early" not in [f.id for f in explain([str(log)])]


# Found running pytorch/examples' tensor_parallel_example.py on 2 CPU ranks under `torchdoctor launch --watchdog 20`
# with rank 1's parallelize_plan swapped (Rowwise for Colwise): the report's verdict line named the collective whose
# operations differ and each rank's line, and the console read back said only "names no single rank". The lines
# as that report printed them.
def test_a_report_whose_ranks_entered_different_operations_says_which(tmp_path):
    log = tmp_path / "console.log"
    log.write_text(
        "torchdoctor: hang: no progress for 20s. Where every rank is:\n\n"
        "rank 0 (pid 23820, vm): waiting in torch.distributed.scatter\n"
        "    tp_plans.py:96 in <module>: tp_model = parallelize_module(\n"
        "rank 1 (pid 23821, vm): waiting in torch.distributed.broadcast\n"
        "    tp_plans.py:96 in <module>: tp_model = parallelize_module(\n\n"
        "process group 0 (default_pg): collective #2 has different operations on different ranks: rank 0: scatter "
        "#2 [2, 16] Float (tp_plans.py:96 in <module>); rank 1: broadcast #2 [32] Float (tp_plans.py:96 in "
        "<module>).\n"
        "Which side is the odd one out cannot be told: The ranks call collectives in a different order: every "
        "rank of a group must make the same calls in the same order.\n"
        "Full stacks: /tmp/torchdoctor-watchdog-9lezjum6/rank*.stack, flight-recorder dumps: "
        "/tmp/torchdoctor-watchdog-9lezjum6/rank*.fr. The run was stopped.\n"
    )
    (lead,) = [f for f in explain([str(log)]) if f.id == "log.hang_verdict"]
    assert "entered collective #2 with different operations: rank 0: scatter #2" in lead.summary, lead.summary
    assert "rank 1: broadcast #2 [32] Float (tp_plans.py:96 in <module>)" in lead.summary
    assert "names no single rank" not in lead.summary and "parallelize_plan" in lead.fix


def test_the_verdict_on_a_rank_gloo_aborted_where_faulthandler_placed_it_is_read_with_its_condition():
    # since session 42 the verdict places the aborted rank where faulthandler found it ("at train.py:10 in evaluate
    # (gloo aborted it: ...)") and no longer says "in its last collective call, all_reduce #N at ...": explain of
    # the console lost the condition and the fix, and blamed rank 1's backward line (session 43, USER13)
    from pathlib import Path

    from torchdoctor.explain.diagnose import explain

    console = (
        Path(__file__).parent / "fixtures" / "watchdog_consoles" / "eval_all_reduce_faulthandler_place.txt"
    )
    (lead, *_) = explain([str(console)])
    assert lead.id == "log.rank_divergence", (lead.id, lead.summary)
    assert (
        "rank 0 died in its collective call at train.py:10, a call made under a condition on the rank, line 18: "
        "`if step % 3 == 0 and rank == 0:`" in lead.summary
    ), lead.summary
    assert lead.fix.startswith("The ranks that skip that branch never make the collective inside it"), (
        lead.fix
    )


def test_launchs_verdict_on_a_rank_that_ended_itself_leads_over_the_lost_peer_and_torchruns_summary():
    # the console of a rank that called os._exit: rank 0's "Connection closed by peer" and torchrun's "exited with
    # 3" are what it led to; launch's verdict in the same console names the rank and its line, and leads (it was
    # dropped as a verdict of last resort, and torchrun's summary led with "the cause is not in this log")
    from pathlib import Path

    from torchdoctor.explain.diagnose import explain

    console = Path(__file__).parent / "fixtures" / "watchdog_consoles" / "rank_ended_itself.txt"
    found = explain([str(console)])
    assert found[0].id == "log.rank_died", [(f.id, f.summary) for f in found]
    assert (
        "rank 1 died without a Python error (it ended itself with os._exit(3)) at train.py:6"
        in found[0].summary
    )
    assert "Look at train.py:6 first." in found[0].fix, found[0].fix
    assert {f.id for f in found[1:]} == {"log.peer_closed", "log.child_failed"}, [f.id for f in found]
    assert all(f.status == "warn" for f in found[1:]), [(f.id, f.status) for f in found]


def test_a_traceback_beside_launchs_verdict_of_last_resort_still_leads():
    # near miss: where the log holds a cause of its own (a rank's traceback), the report yields to it
    import io

    from torchdoctor.explain.diagnose import explain

    text = (
        'Traceback (most recent call last):\n  File "train.py", line 6, in <module>\n    main()\n'
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
        "torchdoctor: failed: rank 1 died without a Python error (killed by SIGKILL: the kernel's out-of-memory "
        "killer (see `dmesg`), or a `kill -9`), last seen at train.py:6 in main.\n"
    )
    (lead, *_) = explain(["-"], stdin=io.BytesIO(text.encode()))
    assert lead.id == "log.cuda_oom", (lead.id, lead.summary)
