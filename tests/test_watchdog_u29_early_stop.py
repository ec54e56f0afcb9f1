"""One rank that leaves the training loop on a decision of its own (early stopping on the main process only,
without accelerate's set_trigger/check_trigger) goes on to the evaluation's gather while the other still trains:
collective #N has different operations on the two ranks (rank 0's all_gather, rank 1's all-reduce in backward).
Found with accelerate's examples/by_feature/early_stopping.py, its trigger replaced by `if
accelerator.is_main_process and callback.check_early_stopping(loss.item()): break`, on 2 gloo ranks under launch
--watchdog 30: the report said "Which side is the odd one out cannot be told" (one rank on each side), not that
rank 0 had left the loop, nor where, nor how ranks stop together."""

from __future__ import annotations

import textwrap

from explaining import explained
from test_watchdog import kept_folder, line_with

from torchdoctor.hang.source import loop_exits

# the early-stopping example's shape: a training loop whose backward all-reduces, a break the main process takes
# alone, then the evaluation's all_gather
SCRIPT = textwrap.dedent(
    """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = DDP(torch.nn.Linear(4, 1))
    for step in range(50):
        model(torch.randn(2, 4)).sum().backward()
        if rank == 0 and step == 3:  # stops on its own loss
            break
    predictions = [torch.zeros(2) for _ in range(2)]
    dist.all_gather(predictions, torch.ones(2))
    """
)


def test_a_rank_that_stopped_the_loop_alone_is_named_with_the_break_and_how_to_stop_together(cli, tmp_path):
    script = tmp_path / "early_stop.py"
    script.write_text(SCRIPT)
    result = cli("launch", "--nproc-per-node", "2", "--watchdog", "3", str(script), timeout=100)
    with kept_folder(result):
        report = result.stderr[result.stderr.index("torchdoctor: hang: no progress for 3s") :]
    loop, stop = line_with(script, "for step in range"), line_with(script, "if rank == 0 and step == 3")
    assert "Which side is the odd one out cannot be told" not in report, report
    assert f"rank(s) 0 left the loop at {script}:{loop}-{loop + 3} while rank(s) 1 still run it" in report, (
        report
    )
    assert f"The loop can be left early at line {stop}: `if rank == 0 and step == 3:" in report, report
    assert "set_trigger()" in report and "dist.all_reduce(stop)" in report, report
    # where rank 0 is: its own line, not torchdoctor's wrapper around the collective
    assert "torchdoctor/" not in report.split("left the loop")[1].split("Culprit")[0], report
    assert f"Culprit: rank(s) 0 at {script}:{loop}" in report, report
    # explain on the console says it again: the loop left, the break, how to stop together
    found = explained(result.stderr)
    assert found.id == "log.hang_verdict", found.summary
    assert "rank(s) 0 left the loop at" in found.summary and f"left early at line {stop}:" in found.summary
    assert "set_trigger()" in found.fix


# the report of ranks that ran different numbers of batches (no early exit in the loop), as launch printed it
UNEVEN = """\
torchdoctor: hang: no progress for 20s. Where every rank is:
rank(s) 1 left the loop at train.py:12-16 while rank(s) 0 still run it, waiting in backward() (train.py:14); rank 1 \
is in main (train.py:18), waiting in torch.distributed.barrier. The ranks ran different numbers of iterations: give \
every rank the same number of batches (DistributedSampler(drop_last=True), data split evenly), or run the loop \
under DDP's `with model.join():` (torch.distributed.algorithms.Join), which lets ranks with fewer batches finish.
Culprit: rank(s) 1 at train.py:12; rank(s) 0 wait because of it.
"""


def test_a_loop_left_without_an_early_exit_as_printed_says_the_batches_differ_not_to_stop_together():
    found = explained(UNEVEN)
    assert found.id == "log.hang_verdict" and "rank(s) 1 left the loop at train.py:12-16" in found.summary
    assert "left early" not in found.summary and "set_trigger" not in found.fix and "join()" in found.fix


def test_the_loops_exits_are_its_breaks_and_returns_not_a_nested_loops_break(tmp_path):
    script = tmp_path / "loops.py"
    script.write_text(
        "def main():\n"  # 1
        "    for epoch in range(3):\n"  # 2
        "        for batch in loader:\n"  # 3
        "            if bad(batch):\n"  # 4
        "                break\n"  # 5: the inner loop's
        "        if done():\n"  # 6
        "            return\n"  # 7
        "    for batch in loader:\n"  # 8
        "        step(batch)\n"  # 9
    )
    assert loop_exits(str(script), 2) == [(6, "if done():")]
    assert loop_exits(str(script), 3) == [(4, "if bad(batch):")]
    assert loop_exits(str(script), 8) == []  # a loop that runs to its end: the ranks' batches differ
