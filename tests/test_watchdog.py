"""The hang watchdog: stacks read for real (faulthandler, live frames), and real hung 2-rank runs."""

import contextlib
import faulthandler
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import torch
import torch.distributed  # noqa: F401  (torch._C._distributed_c10d)

import torchdoctor
from torchdoctor.explain.diagnose import explain
from torchdoctor.hang.flight_records import has_flight_recorder
from torchdoctor.hang.places import collective_of
from torchdoctor.hang.progress import ProgressSampler, heartbeat
from torchdoctor.hang.report import diagnosis, format_report
from torchdoctor.hang.source import Frame
from torchdoctor.hang.stacks import RankStack, frames_of, parse_faulthandler
from torchdoctor.hang.supervise import supervise
from torchdoctor.hang.watch import watch_for_hangs
from torchdoctor.process_state import is_running

# torch 2.4 has no flight recorder for gloo: there the report gives the stacks' verdict and says why (the
# probe is the one the workers use); on CI's pin the tests below hold the flight recorder's verdict.
FLIGHT_RECORDER = has_flight_recorder(torch._C._distributed_c10d)
NO_RECORDER = f"torch {torch.__version__} has no flight recorder to dump (no _dump_fr_trace)"

# Rank 0 waits in a collective DDP makes itself (its constructor's check of the parameters), on the else branch
# of a condition on the rank; rank 1 is elsewhere. One job for what were two 2-rank launches (~13 s of CPU
# each): the report's layout and what the watchdog ends and keeps; DDP's own collective named as DDP's, at the
# user's `DDP(` line; and the condition found from the waiting rank's line, in its else branch.
HANG_SCRIPT = textwrap.dedent(
    """
    import time
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP


    def wait_elsewhere():
        time.sleep(90)


    def main():
        dist.init_process_group("gloo")
        rank = dist.get_rank()
        print(f"rank {rank} ready", flush=True)
        if rank == 1:
            wait_elsewhere()  # rank 1 never builds its model
        else:
            model = DDP(torch.nn.Linear(8, 2))


    main()
    """
)


def hang_script(tmp_path):
    script = tmp_path / "hang.py"
    script.write_text(HANG_SCRIPT)
    lines = script.read_text().splitlines()
    line_of = {
        text: lines.index(next(line for line in lines if text in line)) + 1
        for text in ("model = DDP(", "time.sleep(", "wait_elsewhere()  #")
    }
    return script, line_of


def block_of(report: str, rank: int) -> str:
    """The lines of the report about one rank."""
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"rank {rank} "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("    ")), len(lines))
    return "\n".join(lines[start:end])


def dump_here(path):
    with open(path, "w") as f:
        faulthandler.dump_traceback(f, all_threads=True)


def test_a_real_faulthandler_dump_parses_into_each_threads_frames(tmp_path):
    release = threading.Event()
    other = threading.Thread(target=release.wait, args=(30,))
    other.start()
    try:
        dump_here(tmp_path / "stack.txt")
    finally:
        release.set()
        other.join()
    threads = parse_faulthandler((tmp_path / "stack.txt").read_text())
    main = threads[threading.main_thread().ident]
    assert main[-1].function == "dump_here" and main[-1].file == __file__
    assert main[-2].function == "test_a_real_faulthandler_dump_parses_into_each_threads_frames"
    assert any(f.function == "wait" for f in threads[other.ident])


def test_the_collective_is_found_below_the_users_call():
    torch_dir = importlib.util.find_spec("torch").submodule_search_locations[0]  # without importing torch
    here = frames_of(sys._getframe())
    assert here[-1].function == "test_the_collective_is_found_below_the_users_call"
    waiting = here + [
        Frame(os.path.join(torch_dir, "distributed", "c10d_logger.py"), 81, "wrapper"),
        Frame(os.path.join(torch_dir, "distributed", "distributed_c10d.py"), 4800, "barrier"),
    ]
    assert collective_of(waiting) == "torch.distributed.barrier"
    assert collective_of(here) is None
    # torch 2.13's names for all_gather_into_tensor / reduce_scatter_tensor, which FSDP2 calls
    for name in ("all_gather_single", "reduce_scatter_single"):
        gathering = here + [Frame(os.path.join(torch_dir, "distributed", "distributed_c10d.py"), 4390, name)]
        assert collective_of(gathering) == f"torch.distributed.{name}"
    in_backward = here + [
        Frame(os.path.join(torch_dir, "_tensor.py"), 625, "backward"),
        Frame(os.path.join(torch_dir, "autograd", "__init__.py"), 354, "backward"),
        Frame(os.path.join(torch_dir, "autograd", "graph.py"), 841, "_engine_run_backward"),
    ]
    assert collective_of(in_backward) == "backward() (under DDP, the gradients' all-reduce)"
    stacks = [RankStack(0, 10, "h", waiting), RankStack(1, 11, "h", here), RankStack(2, note="exited")]
    assert diagnosis(stacks).startswith(
        "rank(s) 1, 2 never reached torch.distributed.barrier, where rank(s) 0"
    )
    report = format_report(stacks, 30)
    assert "rank 0 (pid 10, h): waiting in torch.distributed.barrier" in report
    assert f"    {__file__}:{here[-1].line} in {here[-1].function}" in block_of(report, 0)
    assert "rank 2: no stack: exited" in report


def test_a_rank_held_by_debug_mode_is_named_by_the_call_in_the_users_line(tmp_path):
    import torchdoctor.distributed.debug as debug

    script = tmp_path / "train.py"
    script.write_text("import torch.distributed as dist\ndist.all_reduce(grads, op=dist.ReduceOp.SUM)\n")
    frames = [
        Frame(str(script), 2, "<module>"),
        Frame(debug.__file__, 240, "wrapper"),
        Frame(debug.__file__, 160, "check_collective"),
    ]
    assert (
        collective_of(frames)
        == "torch.distributed.all_reduce (its debug-mode check: the other ranks have not arrived)"
    )


def test_a_rank_that_finished_while_another_waits_in_a_call_under_a_rank_condition_names_the_condition(
    tmp_path,
):
    # `torchdoctor launch --debug --watchdog 10` on 2 gloo ranks (session 32): rank 1's script returned, rank 0
    # waits in debug mode's check-in of the barrier under `if rank == 0:`; the report said only "different
    # numbers of collective calls", where the failure verdict without debug mode names the condition
    import torchdoctor.distributed.debug as debug
    from torchdoctor.hang.report import verdict

    script = tmp_path / "train.py"
    script.write_text(
        "import torch.distributed as dist\n"  # 1
        "dist.init_process_group('gloo')\n"  # 2
        "rank = dist.get_rank()\n"  # 3
        "if rank == 0:\n"  # 4
        "    dist.barrier()\n"  # 5
        "dist.all_reduce(x)\n"  # 6
    )
    in_debug_mode = [Frame(debug.__file__, 328, "wrapper"), Frame(debug.__file__, 219, "_first_time")]
    finished = RankStack(1, note="its script had already returned")
    waiting = RankStack(0, 10, "h", [Frame(str(script), 5, "<module>"), *in_debug_mode])
    found = verdict([waiting, finished])
    assert found.kind == "finished" and found.culprits == [1]
    assert f"a call made under a condition on the rank at {script}:4 (`if rank == 0:`)" in found.text
    assert "make the call on every rank" in found.text
    assert (found.where.file, found.where.line) == (str(script), 4)
    # near miss: the same wait on a line under no condition is the ranks' different numbers of calls
    unconditional = RankStack(0, 10, "h", [Frame(str(script), 6, "<module>"), *in_debug_mode])
    found = verdict([unconditional, finished])
    assert (
        "condition on the rank at" not in found.text and "different numbers of collective calls" in found.text
    )


def test_one_gather_every_rank_made_with_its_own_size_is_the_failure_not_a_rank_that_died(tmp_path):
    # accelerate's gather_for_metrics over batches split by hand, under `torchdoctor launch --watchdog` on 2 gloo
    # ranks (session 32): the last batch held 2 samples on rank 0, 1 on rank 1; gloo aborted rank 1, and the verdict
    # said "rank 1 died without a Python error (killed by signal 6)", since neither side of 1 against 1 is odd
    from torchdoctor.explain.flight_recorder.compare import disagreements
    from torchdoctor.explain.flight_recorder.records import Collective, RankRecord
    from torchdoctor.hang.joined_verdict import mismatch_verdict

    script = tmp_path / "eval.py"
    script.write_text("\n" * 17 + "pred = accelerator.gather_for_metrics(pred)\n")
    gather = [
        Frame(str(script), 18, "<module>"),
        Frame("/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", 355, "_gpu_gather_one"),
    ]

    def noted(rank, rows, line=18):
        at = [Frame(str(script), line, "<module>"), gather[1]]
        calls = [Collective("0", 5, "all_gather", [[4]], [], ["Long"], frames=at)]
        return RankRecord(
            rank,
            "noted",
            {"0": [*calls, Collective("0", 6, "all_gather", [[rows]], [], ["Long"], frames=at)]},
        )

    (found,) = disagreements({0: noted(0, 2), 1: noted(1, 1)}, [0, 1])
    verdict = mismatch_verdict(found, {})
    assert "collective #6 has different sizes on different ranks" in verdict.text
    assert "Every rank made this call, each with a size of its own" in verdict.text
    assert "pad it to the largest" in verdict.text and verdict.culprits == []
    assert (verdict.where.file, verdict.where.line) == (str(script), 18)
    # near miss: the two sizes at two different lines are two calls, of which neither side can be told odd
    (found,) = disagreements({0: noted(0, 2), 1: noted(1, 1, line=1)}, [0, 1])
    assert "Which side is the odd one out cannot be told" in mismatch_verdict(found, {}).text


def test_the_lines_a_wait_prints_are_not_progress_to_the_launchers_watchdog():
    # debug mode says "waited 5 s of 300 ..." then every 10 s: taken for output, it kept `launch --debug
    # --watchdog 10` from ever firing on a rank waiting alone (session 32); these are the lines that run printed
    from torchdoctor.hang.supervise import _pump

    waiting = (
        b"[rank0]:[W1201 11:00:24.039490501 socket.cpp:469] [c10d] waitForInput: poll for socket "
        b"SocketImpl(fd=5, addr=[::ffff:127.0.0.1]:56194, remote=[::ffff:127.0.0.1]:45679) returned 0, likely a timeout\n"
        b"torchdoctor: waited 5 s of 300 for rank 1 at collective #1 `torch.distributed.barrier` (1 of 2 waiting; "
        b"this is rank 0 at /tmp/n32/lone_barrier.py:6 in <module>; TORCHDOCTOR_DEBUG_TIMEOUT=300)\n"
        b"[default0]:torchdoctor: waited 15 s of 300 for rank 1 at collective #1 `torch.distributed.barrier`\n"
    )
    for said, moved in ((waiting, False), (waiting + b"step 3 loss 0.25\n", True), (b"\r 45%|####", True)):
        read, write = os.pipe()
        os.write(write, said)
        os.close(write)
        last_output = [0.0]
        with open(os.devnull, "w") as out, os.fdopen(read, "rb") as pipe:
            _pump(pipe, out, last_output)
        assert (last_output[0] > 0) == moved, said


def test_the_straggler_watchs_timing_wrapper_between_the_users_call_and_torchs_is_not_named():
    # launch --watchdog turns the straggler watch on where a core is spare: its wrapper sits in every
    # collective's stack, and the hang is still the user's call, not "inside torchdoctor's wrapper"
    import torchdoctor.memory as memory
    import torchdoctor.stragglers.hooks as straggler_hooks

    torch_dir = importlib.util.find_spec("torch").submodule_search_locations[0]
    here = frames_of(sys._getframe())
    c10d = Frame(os.path.join(torch_dir, "distributed", "distributed_c10d.py"), 2800, "all_reduce")
    timed = Frame(straggler_hooks.__file__, 190, "wrapper")
    assert collective_of([*here, timed, c10d]) == "torch.distributed.all_reduce"
    ours = Frame(memory.__file__, 40, "find_executable_batch_size")  # a call of our own is still named
    assert "inside torchdoctor's find_executable_batch_size" in collective_of([*here, ours, timed, c10d])


def test_the_sampler_sees_a_main_thread_that_does_not_move_and_counts_heartbeats():
    idle, moved = threading.Event(), []
    sampler = ProgressSampler(0.02, on_progress=lambda: moved.append(1), on_idle=lambda s: idle.set()).start()
    try:
        assert idle.wait(30)  # this thread sits in Event.wait: no progress
        done = threading.Event()

        def beat():
            for _ in range(50):
                heartbeat()
                done.wait(0.02)
            done.set()

        before = len(moved)
        beater = threading.Thread(target=beat)
        beater.start()
        done.wait(30)  # still sitting on one line; only the heartbeats move
        beater.join()
    finally:
        sampler.stop()
    assert len(moved) - before >= 2


def test_launch_watchdog_reports_where_each_rank_waits_and_ends_the_run(cli, tmp_path):
    script, line_of = hang_script(tmp_path)
    logs = tmp_path / "logs"
    result = cli(
        "launch", "--nproc-per-node", "2", "--watchdog", "3", "--log-dir", str(logs), str(script), timeout=100
    )  # fmt: skip
    with kept_folder(result) as kept:
        check_the_two_rank_report(result, script, line_of, kept)
        # kept with the run's logs, where a cleaned /tmp does not take it: the run's --log-dir
        assert kept.parent == logs, kept
        assert (logs / "torchdoctor-report.txt").exists()
        # read again after the fact: the same culprit, though every rank wrote its .done as the run was stopped
        (found,) = explain([str(kept)])
        # the run's --log-dir, where the ranks stopped without an error: the stacks kept there are read, the report
        # beside them (the same verdict in fewer words) is not read a second time
        assert [(f.id, f.summary) for f in explain([str(logs)])] == [(found.id, found.summary)]
        assert "already returned" not in found.summary + (found.fix or ""), (found.summary, found.fix)
        sleep = f"{script}:{line_of['time.sleep(']}"
        assert found.details["culprits"] == [1], found.details
        assert f"{sleep} in wait_elsewhere" in (found.fix or ""), (found.summary, found.fix)
        # and the console output the report went to, handed to explain as a log: the same culprit, its line
        console = kept.parent / f"{kept.name}.console.log"
        console.write_text(result.stdout + result.stderr)
        try:
            lead = explain([str(console)])[0]
        finally:
            console.unlink()
        assert lead.id == "log.hang_verdict", (lead.id, lead.summary)
        assert f"rank(s) 1 at {sleep} held the others up" in lead.summary, lead.summary
        assert f"`torchdoctor explain {kept}` reads the full stacks" in (lead.fix or ""), lead.fix


@contextlib.contextmanager
def kept_folder(result):
    """The folder the watchdog kept after a hang, removed after the block, whatever the block asserts."""
    assert result.returncode == 1, result.stderr
    kept = Path(result.stderr.split("Full stacks: ")[1].split("/rank*.stack")[0])
    try:
        yield kept
    finally:
        shutil.rmtree(kept, ignore_errors=True)


def check_the_two_rank_report(result, script, line_of, kept):
    report = result.stderr[result.stderr.index("torchdoctor: hang: no progress for 3s") :]
    rank0, rank1 = block_of(report, 0), block_of(report, 1)
    ddp, sleep, call = line_of["model = DDP("], line_of["time.sleep("], line_of["wait_elsewhere()  #"]
    checking = "DistributedDataParallel's check that every rank has the same parameters"
    assert f"waiting in {checking}" in rank0.splitlines()[0]  # DDP's own collective, named as DDP's
    assert "not in a collective" not in rank0
    assert f"{script}:{ddp} in main" in rank0
    assert "not in a collective" in rank1.splitlines()[0]
    assert f"{script}:{sleep} in wait_elsewhere" in rank1
    if FLIGHT_RECORDER:  # the flight recorder says which collective rank 1 never entered, the source says why
        assert (
            f"rank 1 never entered all_gather #1 [1] Long ({script}:{ddp} in main), which rank 0 entered: "
            f"rank 1 is in wait_elsewhere ({script}:{sleep}), called from {script}:{call} in main." in report
        ), report
    else:  # the stacks say it, and the report says why the recorder does not
        assert f"rank(s) 1 never reached {checking}" in report, report
        assert (
            f"where rank(s) 0 wait: rank 0's line {script}:{ddp} sits under a condition on the rank" in report
        ), report
        assert f"no flight-recorder dumps ({NO_RECORDER}): the verdict rests on the stacks" in report, report
    assert (
        "sits under a condition on the rank, line" in report
        and "`if rank == 1:` (in its else branch)" in report
    )
    pids = [int(block.split("(pid ")[1].split(",")[0]) for block in (rank0, rank1)]
    assert not any(is_running(pid) for pid in pids)  # the run was ended, not left hanging
    assert result.stdout.count("ready") == 2  # the workers' output went through
    # faulthandler's own dump, kept for the user
    assert "in _verify_param_shape_across_processes" in (kept / "rank0.stack").read_text()
    dumps = {"rank0.fr", "rank1.fr"} if FLIGHT_RECORDER else {"rank0.fr-none", "rank1.fr-none"}
    assert dumps <= {p.name for p in kept.iterdir()}  # and every rank's flight recorder, or why there is none


def launch_report(cli, script, nproc=2, watchdog="3"):
    """Run ``script`` under ``torchdoctor launch --watchdog``; the hang report (the run must hang)."""
    result = cli("launch", "--nproc-per-node", str(nproc), "--watchdog", watchdog, str(script), timeout=200)
    with kept_folder(result):
        return result.stderr[result.stderr.index("torchdoctor: hang:") :]


def line_with(script, text):
    return next(i for i, line in enumerate(script.read_text().splitlines(), 1) if text in line)


DDP_SCRIPT = """
import time
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def evaluate(model):
    time.sleep(90)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    shard = torch.randn(9, 8)[rank::2]  # 5 samples on rank 0, 4 on rank 1: uneven shards
    for sample in shard.split(1):
        optimizer.zero_grad()
        model(sample).sum().backward()
        optimizer.step()
    evaluate(model)


main()
"""


def test_a_rank_that_left_ddp_training_early_is_explained_as_uneven_iterations(cli, tmp_path):
    script = tmp_path / "ddp.py"
    script.write_text(DDP_SCRIPT)
    report = launch_report(cli, script)
    backward, loop = line_with(script, ".backward()"), line_with(script, "for sample in")
    assert (
        "rank 0 (pid" in report and "waiting in backward() (under DDP, the gradients' all-reduce)" in report
    )
    if FLIGHT_RECORDER:
        assert (
            f"(DDP's gradient all-reduce, in backward() at {script}:{backward}), which rank 0 entered"
            in report
        )
    else:
        assert f"no flight-recorder dumps ({NO_RECORDER}): the verdict rests on the stacks." in report, report
    assert "rank 1 is in evaluate" in report
    assert f"rank(s) 1 left the loop at {script}:{loop}-{loop + 3} while rank(s) 0 still run it" in report
    assert "different numbers of iterations" in report and "model.join()" in report
    assert "condition on the rank" not in report  # it is not an `if rank == ...`


def test_left_the_loop_is_said_only_of_a_rank_past_the_loop_not_of_one_that_has_not_reached_it(tmp_path):
    torch_dir = importlib.util.find_spec("torch").submodule_search_locations[0]
    script = tmp_path / "train.py"
    script.write_text(
        "def main():\n"  # 1
        "    load_data()\n"  # 2
        "    for batch in loader:\n"  # 3
        "        loss = model(batch)\n"  # 4
        "        loss.backward()\n"  # 5
        "    evaluate()\n"  # 6
        "main()\n"  # 7
    )
    top = [Frame(str(script), 7, "<module>")]
    backward = [Frame(os.path.join(torch_dir, "autograd", "graph.py"), 841, "_engine_run_backward")]
    waiting = RankStack(0, 1, "h", top + [Frame(str(script), 5, "main")] + backward)
    past = RankStack(1, 2, "h", top + [Frame(str(script), 6, "main"), Frame(str(script), 1, "evaluate")])
    before = RankStack(1, 2, "h", top + [Frame(str(script), 2, "main"), Frame(str(script), 1, "load_data")])
    inside = RankStack(1, 2, "h", top + [Frame(str(script), 4, "main")])
    assert "rank(s) 1 left the loop at" in diagnosis([waiting, past])
    for other in (before, inside):
        assert "left the loop" not in diagnosis([waiting, other])
    finished = RankStack(1, note="its script had already returned")
    assert "rank(s) 1 left the loop at" in diagnosis([waiting, finished])


def test_torchdoctors_own_agreement_all_reduce_is_named_not_hidden_behind_the_users_line():
    import torchdoctor.memory as memory

    torch_dir = importlib.util.find_spec("torch").submodule_search_locations[0]
    wrapper, reduce = 180, 394  # find_executable_batch_size's wrapper, its agreement all_reduce
    here = frames_of(sys._getframe())
    stack = here + [
        Frame(memory.__file__, wrapper, "run_with_batch_size"),
        Frame(memory.__file__, reduce, "_all_reduce_outcomes"),
        Frame(os.path.join(torch_dir, "distributed", "c10d_logger.py"), 81, "wrapper"),
        Frame(os.path.join(torch_dir, "distributed", "distributed_c10d.py"), 3245, "all_reduce"),
    ]
    assert collective_of(stack) == (
        f"torch.distributed.all_reduce inside torchdoctor's run_with_batch_size (memory.py:{wrapper}), "
        "which every rank must reach"
    )
    verdict = diagnosis([RankStack(0, 1, "h", stack), RankStack(1, 2, "h", here)])
    assert "every rank must call the function that contains it" in verdict
    assert "if rank" not in verdict


def test_a_thousand_ranks_in_one_place_are_one_line_and_the_odd_one_stands_out():
    torch_dir = importlib.util.find_spec("torch").submodule_search_locations[0]
    here = frames_of(sys._getframe())
    waiting = here + [Frame(os.path.join(torch_dir, "distributed", "distributed_c10d.py"), 4800, "barrier")]
    stacks = [RankStack(r, 100 + r, f"node{r // 8}", waiting) for r in range(1000) if r != 517]
    stacks.append(RankStack(517, 9, "node64", here))
    report = format_report(stacks, 30)
    lines = report.splitlines()
    assert "ranks 0-516, 518-999 (999 ranks on 125 hosts): waiting in torch.distributed.barrier" in lines
    assert "rank 517 (pid 9, node64): not in a collective" in lines
    assert "rank(s) 517 never reached torch.distributed.barrier, where rank(s) 0-516, 518-999 wait" in report
    assert len(lines) < 20


def test_launch_watchdog_gets_the_stack_of_a_rank_stuck_in_c_code_holding_the_gil(cli, tmp_path):
    script = tmp_path / "regex.py"
    script.write_text(
        "import re\n\n\ndef parse(text):\n"
        '    return re.match(r"(a+)+$", text)  # exponential backtracking inside C, GIL held\n\n\n'
        'parse("a" * 30 + "b")  # ends by itself within minutes, should the test fail\n'
    )
    result = cli("launch", "--watchdog", "2", str(script), timeout=100)
    with kept_folder(result):
        rank0 = block_of(result.stderr[result.stderr.index("torchdoctor: hang:") :], 0)
        assert "not in a collective; in match" in rank0 and f"{script}:5 in parse" in rank0
        assert "no rank is in a collective" in result.stderr


# That `launch --watchdog` leaves a run that makes progress alone, and leaves nothing in the temporary folder
# after it, is checked on test_stragglers' run of the watchdog on two ranks that end well
# (test_the_watchdog_leaves_the_straggler_watch_off_where_the_ranks_have_every_core): a 2-rank job of its own
# here cost ~8 s.


# A slow rank under a condition in a loop, no else branch: the condition is named from the culprit's own line
# (where test_launch_watchdog_reports_where_each_rank_waits_and_ends_the_run names it from the waiting rank's
# line, in its else branch). The verdict is the same code under `launch --watchdog` and in the script, so
# this case runs once, here, in the script: it was also a launch of its own (~14 s of CPU).
SLOW_RANK_SCRIPT = """
import time
import torch
import torch.distributed as dist
import torchdoctor


def save_checkpoint(step):
    time.sleep(90)  # a save that never ends


def train():
    dist.init_process_group("gloo")
    torchdoctor.watch_for_hangs(3)
    rank = dist.get_rank()
    x = torch.ones(4)
    for step in range(5):
        if step == 2 and rank == 1:
            save_checkpoint(step)
        dist.all_reduce(x)


train()
"""


def test_watch_for_hangs_in_the_script_under_plain_torchrun(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SLOW_RANK_SCRIPT)
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        str(script),
    ]
    env = dict(os.environ, PYTHONUNBUFFERED="1", TORCH_FR_BUFFER_SIZE="100")  # the user's own recorder
    result = subprocess.run(command, capture_output=True, text=True, timeout=100, env=env)
    assert result.returncode != 0
    assert result.stderr.count("torchdoctor: hang:") == 1, result.stderr  # one report, not one per rank
    report = result.stderr[result.stderr.index("torchdoctor: hang: no progress for 3s") :]
    reduce, sleep, call = (
        line_with(script, t) for t in ("dist.all_reduce(x)", "time.sleep", "  save_checkpoint(step)")
    )
    rank0, rank1 = block_of(report, 0), block_of(report, 1)
    assert "waiting in torch.distributed.all_reduce" in rank0 and f"{script}:{reduce} in train" in rank0
    assert "not in a collective" in rank1 and f"{script}:{sleep} in save_checkpoint" in rank1
    if (
        not FLIGHT_RECORDER
    ):  # torch 2.4: the stacks' verdict, and why the recorder the user turned on says nothing
        assert (
            "rank(s) 1 never reached torch.distributed.all_reduce, where rank(s) 0 wait: "
            f"rank 1's line {script}:{call} sits under a condition on the rank, line {call - 1}: " in report
        ), report
        assert f"rank 0: it sent no flight-recorder record: {NO_RECORDER}" in report, report
        return
    # joined with the flight recorder the user turned on, as under `launch --watchdog`
    assert (
        f"rank 1 never entered all_reduce #3 [4] Float ({script}:{reduce} in train), which rank 0 entered: "
        f"rank 1 is in save_checkpoint ({script}:{sleep}), called from {script}:{call} in train." in report
    )
    assert f"rank 1's line {script}:{call} sits under a condition on the rank, line {call - 1}: " in report
    assert "`if step == 2 and rank == 1:`" in report


def test_watch_for_hangs_alone_reports_this_process_and_exits(tmp_path):
    script = tmp_path / "alone.py"
    script.write_text(
        "import time, torchdoctor\ntorchdoctor.watch_for_hangs(1, exit_code=7)\ntime.sleep(60)\n"
    )
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 7
    assert "rank 0 (pid" in result.stderr and f"{script}:3 in <module>" in result.stderr


def test_watch_for_hangs_refuses_a_non_positive_timeout():
    with pytest.raises(ValueError, match="timeout=0"):
        watch_for_hangs(0)
    assert torchdoctor.watch_for_hangs is watch_for_hangs


def test_supervise_stops_a_run_whose_workers_never_start_within_the_start_timeout(tmp_path):
    def torchrun(seconds):  # stands for torchrun waiting at the rendezvous, or finishing
        code = f"import time; time.sleep({seconds})"
        return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    waiting, stopped = torchrun(60), []

    def stop():
        stopped.append(True)
        waiting.kill()
        waiting.wait()

    try:
        result = supervise(waiting, tmp_path, 60, stop, poll=0.1, start_timeout=1)
    finally:
        waiting.kill()
        waiting.wait()
    assert stopped == [True] and (result.returncode, result.report) == (1, "")

    (tmp_path / "rank0.json").write_text('{"rank": 0, "pid": 1}')  # a worker started (and returned)
    (tmp_path / "rank0.done").touch()
    finishing = torchrun(2)
    try:
        result = supervise(finishing, tmp_path, 60, lambda: stopped.append(True), poll=0.1, start_timeout=0.5)
    finally:
        finishing.kill()
        finishing.wait()
    assert stopped == [True] and result.returncode == 0


@pytest.mark.parametrize(
    "path, function, named",
    [
        ("nn/parallel/distributed.py", "_distributed_broadcast_coalesced", "broadcast of the parameters"),
        ("nn/parallel/distributed.py", "_sync_buffers", "buffer broadcast before forward"),
        ("nn/parallel/distributed.py", "_pre_forward", "collectives before forward"),
        ("nn/parallel/distributed.py", "_check_global_requires_backward_grad_sync", "join check"),
        ("distributed/utils.py", "_sync_params_and_buffers", "broadcast of the parameters and buffers"),
        ("distributed/utils.py", "_verify_param_shape_across_processes", "same parameters"),
    ],
)
def test_every_collective_ddp_makes_itself_is_named_as_ddps(path, function, named):
    torch_dir = importlib.util.find_spec("torch").submodule_search_locations[0]
    here = frames_of(sys._getframe())
    ddp = here + [
        Frame(os.path.join(torch_dir, "nn", "modules", "module.py"), 1775, "_call_impl"),
        Frame(os.path.join(torch_dir, *path.split("/")), 100, function),
    ]
    found = collective_of(ddp)
    assert found is not None and found.startswith("DistributedDataParallel's") and named in found
    report = format_report([RankStack(0, 1, "h", ddp), RankStack(1, 2, "h", here)], 30)
    assert "rank 0 (pid 1, h): waiting in DistributedDataParallel's" in report


def test_one_rank_waiting_in_a_collective_its_peer_never_dumped_reads_in_the_singular(tmp_path):
    # rank 1 held the GIL in C code (a regex backtracking) under `launch --watchdog` on pytorch/examples' DDP
    # tutorial: its flight-recorder dump never came, and the verdict said "rank 0 entered ... and wait in it"
    from torchdoctor.explain.flight_recorder.records import Collective, RankRecord
    from torchdoctor.hang.joined_verdict import joined_verdict
    from torchdoctor.hang.stacks import RankStack

    script = tmp_path / "train.py"
    script.write_text("\n" * 9 + "dist.all_reduce(t)\nre.match(pattern, text)\n")
    at = [Frame(str(script), 10, "<module>")]
    waiting = [
        *at,
        Frame("/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", 2800, "all_reduce"),
    ]
    call = Collective("0", 1, "all_reduce", [[3]], [], ["Float"], completed=False, frames=at)

    def verdict(entered):
        records = {r: RankRecord(r, "noted", {"0": [call]}) for r in entered}
        stacks = [RankStack(r, frames=waiting) for r in entered] + [
            RankStack(2, frames=[Frame(str(script), 11, "<module>")])
        ]
        return joined_verdict(stacks, records).text

    assert "rank 0 entered all_reduce #1" in verdict([0]) and "and waits in it; rank 2 is in" in verdict([0])
    assert "ranks 0, 1 entered all_reduce #1" in verdict(
        [0, 1]
    ) and "and wait in it; rank 2 is in" in verdict([0, 1])
