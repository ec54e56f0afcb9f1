"""Rank-aware logging: in one process without a process group, and on 3 real ranks over gloo."""

import logging

import pytest
from rank_runner import run_ranks

from torchdoctor import get_logger

RANKS_LOGGING = """
import logging, os, sys, time
import torch.distributed as dist
from torchdoctor import get_logger

rank = int(os.environ["RANK"])
handler = logging.FileHandler(sys.argv[1] if len(sys.argv) > 1 else {log!r}, mode="a")
handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
logging.getLogger("train").addHandler(handler)
# rank 1 only wants warnings: its level filters the info messages the others log in order
logger = get_logger("train", log_level="WARNING" if rank == 1 else "INFO")

logger.info("before init_process_group", main_process_only=False)
dist.init_process_group("gloo")
logger.info("main only")
for step in range(3):
    if rank == 0:
        time.sleep(0.2)  # rank 0 is slowest, yet must come first
    logger.info("step %d", step, in_order=True)
logger.warning("done", in_order=True)
os.environ["TORCHDOCTOR_DEBUG_TIMEOUT"] = "2"  # how long a rank waits for its turn
if rank != 1:  # rank 1 never logs this one: rank 2 must not wait for it forever
    logger.warning("skipped by rank 1", in_order=True)
dist.barrier()
dist.destroy_process_group()  # exiting with a live gloo group sometimes aborts (torch, not us)
print("finished", flush=True)
"""


def test_in_order_on_three_ranks_with_different_levels(tmp_path):
    log = tmp_path / "train.log"
    results = run_ranks(RANKS_LOGGING.format(log=str(log)), tmp_path, nprocs=3, timeout=60)
    for result in results:
        assert result.returncode == 0 and "finished" in result.stdout, result.output
    lines = log.read_text().splitlines()
    before = sorted(line for line in lines if "before init" in line)
    assert before == ["INFO [RANK 0] before init_process_group", "INFO [RANK 2] before init_process_group"]
    ordered = [line for line in lines if "before init" not in line]
    expected = ["INFO [RANK 0] main only"]
    for step in range(3):
        expected += [f"INFO [RANK 0] step {step}", f"INFO [RANK 2] step {step}"]
    expected += [f"WARNING [RANK {rank}] done" for rank in range(3)]
    expected += ["WARNING [RANK 0] skipped by rank 1", "WARNING [RANK 2] skipped by rank 1"]
    assert ordered == expected


SKIPPED_BY_A_LATER_RANK = """
import logging, os, sys
import torch.distributed as dist
from torchdoctor import get_logger

rank = int(os.environ["RANK"])
logging.basicConfig(stream=sys.stdout, format="%(message)s")
logger = get_logger("train", log_level="INFO")
os.environ["TORCHDOCTOR_DEBUG_TIMEOUT"] = "30"  # a skipped message must not show up as a timeout
dist.init_process_group("gloo")
if rank == 0:  # rank 1 skips this one: its next message is the one rank 0 logs second
    logger.info("saved a checkpoint", in_order=True)
logger.info("epoch done", in_order=True)
logger.info("loss", in_order=True)
dist.barrier()
dist.destroy_process_group()
print("finished", flush=True)
"""


def test_a_message_skipped_by_a_later_rank_is_named_on_both_ranks(tmp_path):
    results = run_ranks(SKIPPED_BY_A_LATER_RANK, tmp_path, nprocs=2, timeout=90)
    for result in results:
        assert result.returncode == 0 and "finished" in result.stdout, result.output
    lines = {r: [line for line in result.stderr.splitlines() if "torchdoctor:" in line] for r, result in
             enumerate(results)}  # fmt: skip
    script = next(tmp_path.glob("*.py"))  # the script run_ranks wrote
    at = {
        t: n
        for n, line in enumerate(script.read_text().splitlines(), 1)
        for t in ("saved", "epoch")
        if t in line
    }
    said = f"{script}:{at['saved']} 'saved a checkpoint'", f"{script}:{at['epoch']} 'epoch done'"
    # each rank says it once, naming both messages and where each was logged; no timeout was waited out
    assert len(lines[1]) == 1 and len(lines[0]) == 1, lines
    assert f"in-order message #1 is {said[0]} on rank 0 but {said[1]} on rank 1" in lines[1][0]
    assert f"in-order message #1 is {said[1]} on rank 1 but {said[0]} on rank 0" in lines[0][0]
    assert "in_order=False" in lines[0][0]


@pytest.fixture
def fresh_logger():
    logger = logging.getLogger("torchdoctor-test-logging")
    yield logger
    logger.handlers.clear()
    logger.setLevel(logging.NOTSET)


def test_single_process_without_process_group(fresh_logger, monkeypatch, caplog):
    for name in ("RANK", "WORLD_SIZE", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        monkeypatch.delenv(name, raising=False)
    root = logging.getLogger()
    root_state = (root.level, list(root.handlers))
    monkeypatch.setenv("TORCHDOCTOR_LOG_LEVEL", "debug")
    logger = get_logger(fresh_logger.name)
    assert fresh_logger.level == logging.DEBUG
    assert (root.level, list(root.handlers)) == root_state  # accelerate sets the root level; we must not
    with caplog.at_level(logging.DEBUG, logger=fresh_logger.name):
        logger.debug("plain %s", "message")
        logger.info("in order", in_order=True)
        logger.warning_once("once")
        logger.warning_once("once")
    # accelerate writes the prefix with one process too; log parsers rely on it
    assert [r.getMessage() for r in caplog.records] == [
        "[RANK 0] plain message",
        "[RANK 0] in order",
        "[RANK 0] once",
    ]
    # the record points at the caller's line, not at torchdoctor's
    assert {r.filename for r in caplog.records} == {"test_distributed_logging.py"}


def test_bad_level_names_the_value(fresh_logger, monkeypatch):
    with pytest.raises(ValueError, match="log_level='loud' is not a log level"):
        get_logger(fresh_logger.name, log_level="loud")
    monkeypatch.setenv("TORCHDOCTOR_LOG_LEVEL", "chatty")
    with pytest.raises(ValueError, match="TORCHDOCTOR_LOG_LEVEL='chatty'"):
        get_logger(fresh_logger.name)


def test_accelerate_log_level_is_read_and_ours_wins(fresh_logger, monkeypatch):
    monkeypatch.delenv("TORCHDOCTOR_LOG_LEVEL", raising=False)
    monkeypatch.setenv("ACCELERATE_LOG_LEVEL", "error")
    assert get_logger(fresh_logger.name).logger.level == logging.ERROR
    monkeypatch.setenv("TORCHDOCTOR_LOG_LEVEL", "debug")
    assert get_logger(fresh_logger.name).logger.level == logging.DEBUG
    assert get_logger(fresh_logger.name, log_level="warning").logger.level == logging.WARNING
    monkeypatch.delenv("TORCHDOCTOR_LOG_LEVEL")
    monkeypatch.setenv("ACCELERATE_LOG_LEVEL", "noisy")
    with pytest.raises(ValueError, match="ACCELERATE_LOG_LEVEL='noisy': must be a log level"):
        get_logger(fresh_logger.name)


def test_prefix_matches_accelerate_byte_for_byte(fresh_logger, monkeypatch):
    from accelerate.logging import MultiProcessAdapter
    from accelerate.state import PartialState

    for name in ("RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    PartialState(cpu=True)  # one process, as accelerate sees it here
    theirs, _ = MultiProcessAdapter(fresh_logger, {}).process("step %d", {})
    ours, _ = get_logger(fresh_logger.name).process("step %d", {})
    assert ours == theirs == "[RANK 0] step %d"


def test_rank_prefix_from_the_launcher_environment(fresh_logger, monkeypatch, caplog):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "4")
    logger = get_logger(fresh_logger.name, log_level="INFO")
    with caplog.at_level(logging.INFO, logger=fresh_logger.name):
        logger.info("hello")
    monkeypatch.setenv("RANK", "3")
    with caplog.at_level(logging.INFO, logger=fresh_logger.name):
        logger.info("main only, not me")
        logger.info("everyone", main_process_only=False)
    assert [r.getMessage() for r in caplog.records] == ["[RANK 0] hello", "[RANK 3] everyone"]


def test_a_level_that_means_nothing_is_refused_naming_it():
    import pytest

    from torchdoctor import get_logger

    for bad in (-5, True, "LOUD"):
        with pytest.raises(ValueError, match=f"log_level={bad!r} is not a log level"):
            get_logger("torchdoctor.test.levels", log_level=bad)
    assert get_logger("torchdoctor.test.levels", log_level=15).logger.level == 15
