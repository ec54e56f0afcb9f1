"""A log whose every line a launcher or a log collector prefixed is read as the same log unprefixed: the rank that
failed first, its error and the user's line (reader.clean, `_LINE_PREFIX`). Recorded under Open MPI's
--tag-output and pdsh (tests/fixtures/launcher_prefixes/SOURCES.md); srun --label's, the kubelet's and Ray's
prefixes put on the recording's lines as those write them."""

import re
from pathlib import Path

import pytest

from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.reader import clean

HERE = Path(__file__).parent / "fixtures" / "launcher_prefixes"
CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "train"


def lead_of(path: Path):
    found = explain([str(path)])
    return found[0], found


def assert_rank_1_and_its_line(path: Path) -> None:
    lead, found = lead_of(path)
    assert lead.id == "log.layer_input_size", lead.summary
    assert lead.details.get("ranks") == "1", lead.details
    assert lead.details["frame"].endswith("shapes_train.py:19 in <module>"), lead.details
    assert "Your code reached it at" in lead.fix and "shapes_train.py:19" in lead.fix
    peer = next(f for f in found if f.id == "log.peer_closed")
    assert peer.details["consequence_of"] == "log.layer_input_size"


@pytest.mark.parametrize("name", ["mpirun-tag-output.txt", "pdsh-hosts.txt"])
def test_a_recorded_launchers_prefixes_leave_the_rank_and_the_users_line(name):
    assert_rank_1_and_its_line(HERE / name)


def unprefixed_lines() -> list[tuple[int, str]]:
    """The pdsh recording's lines without pdsh's host: (the rank that printed it, the line)."""
    lines = []
    for line in (HERE / "pdsh-hosts.txt").read_text(encoding="utf-8").splitlines():
        found = re.match(r"worker-(\d): (.*)", line)
        if found:
            lines.append((int(found[1]), found[2]))
    return lines


@pytest.mark.parametrize(
    "prefix",
    [
        "{rank}: ",  # srun --label (the task's number)
        "2026-12-01T04:40:0{rank}.123456789Z stderr F ",  # the kubelet's CRI log line
        "(RayTrainWorker pid=7{rank}1, ip=10.0.0.{rank}) ",  # Ray Train's worker
        "10.0.0.{rank}: ",  # pdsh with the hosts' addresses
    ],
)
def test_other_launchers_prefixes_are_taken_off_the_same_lines(tmp_path, prefix):
    log = tmp_path / "console.log"
    log.write_text(
        "".join(prefix.format(rank=r) + line + "\n" for r, line in unprefixed_lines()), encoding="utf-8"
    )
    assert_rank_1_and_its_line(log)


def test_a_message_keeps_what_only_looks_like_a_prefix():
    for line in (
        "RuntimeError: ValueError: the wrapped error",
        "epoch 3: loss 0.25",
        "cuda:0 and cpu",
        "Note: 2 processes",
        "(pid=25845, ip=172.31.47.46) initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2",
    ):
        assert clean(line.encode()) == (line, None)
    assert clean(b"[1,3]<stderr>:[rank3]: boom") == ("boom", 3)
    assert clean(b'worker-2: [rank5]:   File "t.py", line 1') == ('  File "t.py", line 1', 5)


def test_a_ray_tune_workers_own_lines_are_still_read_by_their_prefix():
    # kinds/ray_cluster.py reads Lightning's ddp inside a Ray Tune trial by the worker's prefix on its log lines
    lead, _ = lead_of(CORPUS / "3679.txt")
    assert lead.id == "log.multi_gpu_unsupported", lead.summary


def test_a_ray_train_workers_traceback_is_read_through_its_prefix():
    # a real Ray Train log (corpus train/1271, from ray-project/ray#26493): the frames under "(BackendExecutor pid=...)"
    # are read, so the packages the error came through are known
    lead, _ = lead_of(CORPUS / "1271.txt")
    assert lead.id == "log.invalid_device_ordinal"
    assert "ray" in lead.details["facts"]["frame_packages"], lead.details


PLANTED = Path(__file__).parent / "fixtures" / "planted_runs"
# torch's c10 warning as the reducer prints it (reducer.cpp's TORCH_WARN_ONCE) under torch's "[rank1]:" prefix
_UNUSED_WARNING = (
    "[W1203 14:28:17.281750402 reducer.cpp:1529] Warning: find_unused_parameters=True was specified in DDP "
    "constructor, but did not find any unused parameters in the forward pass."
)


def test_a_ranks_warning_printed_after_a_progress_bar_is_that_ranks():
    # a real two-rank Trainer run (planted_runs/hf_trainer_no_fault): rank 0's reducer warning came out after rank
    # 0's own tqdm bar, on the bar's line ("[00:00<?, ?it/s][rank0]:[W..."), rank 1's on a line of its own
    found = explain([str(PLANTED / "hf_trainer_no_fault" / "console.txt")])
    unused = next(f for f in found if f.id == "log.find_unused_parameters_unneeded")
    assert unused.details["ranks"] == "0, 1", unused.summary


@pytest.mark.parametrize(
    "bar",
    [
        "\r  0%|          | 0/8 [00:00<?, ?it/s]",  # tqdm's first draw, the warning right after it (recorded)
        "\rEpoch 0:  12%|█▎        | 3/25 [00:01<00:08,  2.90it/s, v_num=0] ",  # Lightning's, then a space
        "\rEpoch 0:   8%|▊ | 2/25 [00:00<00:09]\rEpoch 0:  12%|█▎  | 3/25 [00:01<00:08]\r",  # redrawn, then "\r"
        "\r 12%|█▎  | 3/25 [00:01<00:08, loss=[0.52, 0.48]]",  # a postfix with brackets of its own
    ],
)
def test_the_rank_prefix_after_a_progress_bar_is_found(bar):
    assert clean(f"{bar}[rank1]:{_UNUSED_WARNING}".encode()) == (_UNUSED_WARNING, 1)


def test_a_progress_bar_with_no_rank_after_it_keeps_its_text():
    # the bar's own metrics stay readable (a loss of nan in its postfix); a line after it with no rank stays too
    for line in (
        " 45%|████▌     | 100/220 [01:00<01:10, loss=nan]",
        " 45%|████▌     | 100/220 [01:00<01:10]\nRuntimeError: boom",
    ):
        assert clean(line.encode()) == (line, None)
