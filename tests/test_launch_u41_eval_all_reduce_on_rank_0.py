"""nanoGPT's train.py (karpathy/nanoGPT 3adf61e1, MIT) evaluates on rank 0 only (`if iter_num % eval_interval == 0
and master_process: losses = estimate_loss()`); with an `all_reduce` of the losses planted in estimate_loss, as a
user averaging them over ranks would, on 2 gloo ranks on CPU (session 41), rank 1 went on to backward's gradient
all-reduce, gloo aborted rank 0 (SIGABRT, "Received data size doesn't match expected size") and the verdict said
"rank 0 died ... last seen at model.py:284 in configure_optimizers" (a place a second older than its all_reduce),
nothing of rank 1's backward, and no fix. The loop here is the same fault in a plain DDP model."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from explaining import explained
from helpers import launch_two_ranks

SCRIPT = """
import torch, torch.nn as nn, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def evaluate(model):
    losses = torch.zeros(2)
    with torch.no_grad():
        for k in range(2):
            losses[k] = model(torch.randn(4, 64)).pow(2).mean()
    dist.all_reduce(losses)  # average the losses over the ranks
    return losses.mean() / dist.get_world_size()

dist.init_process_group("gloo")
rank = dist.get_rank()
model = DDP(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(6):
    if step % 3 == 0 and rank == 0:
        print("eval loss", evaluate(model).item())
    loss = model(torch.randn(4, 64)).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
dist.destroy_process_group()
"""


def test_a_rank_0_only_evaluation_with_an_all_reduce_gloo_aborts_names_the_call_the_other_rank_and_the_fix(
    tmp_path,
):
    returncode, output = launch_two_ranks(tmp_path, SCRIPT, "--watchdog", "5")
    kept = re.search(r"What each rank left: (\S+)/rank\*", output)
    if kept:  # the folder the report names, kept for the user: not for a test
        shutil.rmtree(kept[1], ignore_errors=True)
    assert returncode != 0 and "Received data size doesn't match expected size" in output, output[-3000:]
    said = output[output.index("torchdoctor: failed:") :]
    # placed by faulthandler where the signal found it (session 42: rank<N>.fatal), no longer by its noted call
    assert (
        "rank 0 died without a Python error (killed by signal 6, SIGABRT) at train.py:10 in evaluate" in said
    )
    assert "gloo aborted it" in said, said
    assert "rank 1 was last seen in backward() (under DDP, the gradients' all-reduce) at train.py:" in said, (
        said
    )
    assert "line 18: `if step % 3 == 0 and rank == 0:`" in said, said
    assert "make the call on every rank and keep only the write or the print under the condition" in said, (
        said
    )
    assert "Culprit: rank(s) 0 at train.py:10" in said, said
    found = explained(
        output
    )  # the console handed to explain: gloo's abort, with the verdict's call and condition
    assert found.id == "log.rank_divergence", found.summary
    assert "rank 0 died in its collective call at train.py:10, a call made under a" in found.summary
    assert "line 18: `if step % 3 == 0 and rank == 0:`" in found.summary, found.summary
    assert found.fix.startswith("The ranks that skip that branch never make the collective inside it"), (
        found.fix
    )


RECORDED = Path(__file__).parent / "fixtures" / "watchdog_consoles" / "nanogpt_eval_all_reduce_on_rank_0.txt"


def test_the_recorded_nanogpt_console_names_the_call_that_rank_0_died_in_and_its_condition():
    found = explained(RECORDED.read_text())
    assert found.id == "log.rank_divergence", found.summary
    assert (
        "rank 0 died in its all_reduce #4 at train_a_eval_allreduce.py:225, a call made under a condition on the rank, "
        "line 263: `if iter_num % eval_interval == 0 and master_process:`" in found.summary
    ), found.summary
    assert found.fix.startswith("The ranks that skip that branch never make the collective inside it"), (
        found.fix
    )


def test_flight_recorder_dumps_of_a_barrier_saved_on_rank_0_name_the_condition_many_lines_up(tmp_path):
    # nanoGPT's checkpoint save with a barrier planted after torch.save (u41): the dumps alone said "Look at each
    # rank's line above for a condition on the rank between them", and the condition was 24 lines up, at the loop's
    # `if iter_num % eval_interval == 0 and master_process:`
    from torchdoctor.explain.flight_recorder.compare import disagreements
    from torchdoctor.explain.flight_recorder.findings import to_finding
    from torchdoctor.explain.flight_recorder.records import Collective, RankRecord
    from torchdoctor.hang.source import Frame

    script = tmp_path / "train.py"
    script.write_text(
        "for step in range(10):\n"
        "    if step % 5 == 0 and master_process:\n"
        "        losses = evaluate()\n"
        "        if losses < best:\n"
        "            torch.save(model.state_dict(), 'ckpt.pt')\n"
        "            torch.distributed.barrier()\n"
        "    loss = model(x).sum()\n"
        "    loss.backward()\n"
    )

    def dumped(rank, op, line, sizes, file=script):
        at = [Frame(str(file), line, "<module>")]
        return RankRecord(rank, "dump", {"0": [Collective("0", 11, op, sizes, sizes, ["Float"], frames=at)]})

    records = {0: dumped(0, "barrier", 6, []), 1: dumped(1, "all_reduce", 8, [[27808]])}
    (found,) = disagreements(records, [0, 1])
    finding = to_finding(found)
    assert finding.id == "log.collective_mismatch", finding.summary
    assert (
        f"Rank 0's barrier #11 ({script}:6) sits under a condition on the rank, line 2: "
        "`if step % 5 == 0 and master_process:`" in finding.fix
    ), finding.fix
    assert (
        "make the call on every rank and keep only the write or the print under the condition" in finding.fix
    )
    # near miss: no condition on either side's chain keeps the plain advice
    plain = tmp_path / "plain.py"
    plain.write_text(script.read_text().replace(" and master_process", "").replace("step % 5 == 0", "True"))
    records = {0: dumped(0, "barrier", 6, [], plain), 1: dumped(1, "all_reduce", 8, [[27808]], plain)}
    (found,) = disagreements(records, [0, 1])
    assert "Look at each rank's line above" in to_finding(found).fix, to_finding(found).fix


def test_a_log_dir_holding_only_the_report_of_a_rank_that_died_names_that_rank_and_its_line():
    # the --log-dir of the same job on 3 ranks held only torchdoctor-report.txt, and explain said "no known failure"
    from torchdoctor.explain.diagnose import explain

    folder = RECORDED.parent / "nanogpt_eval_all_reduce_3_ranks_log_dir"
    (found, *_) = explain([str(folder)])
    assert found.id == "log.rank_died" and found.status == "fail", found.summary
    assert found.summary.startswith(
        "likely: rank 0 died without a Python error (killed by signal 6, SIGABRT), in its last collective call, "
        "all_reduce #4"
    ), found.summary
    assert "Look at train_a_eval_allreduce.py:225 first." in found.fix, found.fix
    # the console of the job, where gloo's own abort is printed, is read from gloo's message first
    assert explained(RECORDED.read_text()).id == "log.rank_divergence"


def test_a_rank_in_a_collective_under_a_rank_condition_is_told_the_fix_one_stuck_outside_any_is_not(tmp_path):
    # under launch --debug the same nanoGPT fault was read as rank 0 never entering DDP's all-reduce, with its
    # condition named and no fix (u41)
    from torchdoctor.hang.source import Frame
    from torchdoctor.hang.stacks import RankStack
    from torchdoctor.hang.verdict import rank_condition_hint

    script = tmp_path / "train.py"
    script.write_text(
        "for step in range(10):\n"
        "    if step % 5 == 0 and rank == 0:\n"
        "        dist.all_reduce(losses)\n"
        "    if rank == 1 and step == 3:\n"
        "        time.sleep(600)\n"
    )
    c10d = Frame(
        "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", 2800, "all_reduce"
    )
    in_call = RankStack(0, 10, "h", [Frame(str(script), 3, "<module>"), c10d])
    text, condition = rank_condition_hint([in_call])
    assert condition == "line 2: `if step % 5 == 0 and rank == 0:`", condition
    assert text.endswith("never make the collective inside it; make the call on every rank."), text
    stuck = RankStack(
        1, 11, "h", [Frame(str(script), 5, "<module>"), Frame("/usr/lib/python3.11/x.py", 1, "f")]
    )
    text, _ = rank_condition_hint([stuck])
    assert text.endswith("`if rank == 1 and step == 3:`.") and "make the call" not in text, text
