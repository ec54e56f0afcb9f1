"""An exception, or a traceback, printed after when it was written (kubectl logs --timestamps, CI and CloudWatch logs,
Python's logging, glog) is read as the same line without it (reader.clean, `_TIME_PREFIX`), and the time it stated
still orders the ranks' failures (first_failure.initiating). The real log of the corpus's train half (3380), and the
recorded pdsh job of tests/fixtures/launcher_prefixes with each line given the prefixes those tools write."""

import io
from pathlib import Path

import pytest
from rank_runner import run_script
from test_explain_group_teardown import SCRIPT as DESTROYED_THEN_BARRIER
from test_explain_launcher_prefixes import unprefixed_lines as recorded_lines

from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.reader import clean, ranks_in_head

CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "train"


def test_an_exception_after_a_timestamp_is_the_runs_error():
    # train/3380 (allenai/OLMo-core#515): a CI log's line, "2025-12-23T06:41:38.979Z ValueError: ..."
    lead = explain([str(CORPUS / "3380.txt")])[0]
    assert "ValueError: Overflow when unpacking long long" in lead.summary, lead.summary


@pytest.mark.parametrize(
    "prefix",
    [
        "2026-12-01T04:40:0{second}.1234567Z ",  # kubectl logs --timestamps, a CI runner's log
        "[2026-12-01 04:40:0{second},123] [ERROR] ",  # logging's "[%(asctime)s] [%(levelname)s] "
        "2026-12-01 04:40:0{second},123 - train - ERROR - ",  # logging's "%(asctime)s - %(name)s - %(levelname)s - "
        "[2026-12-01 04:40:0{second},123][__main__][ERROR] - ",  # Hydra's job logging
        "E1201 04:40:0{second}.123456 4242 train.cc:12] ",  # glog
    ],
)
def test_a_recorded_job_with_a_time_on_every_line_names_the_rank_and_its_line(tmp_path, prefix):
    log = tmp_path / "console.log"
    lines = recorded_lines()
    log.write_text("".join(prefix.format(second=at % 10) + line + "\n" for at, (_, line) in enumerate(lines)))
    found = explain([str(log)])
    lead = found[0]
    assert lead.id == "log.layer_input_size", lead.summary
    assert lead.details.get("ranks") == "1", lead.details
    assert lead.details["frame"].endswith("shapes_train.py:19 in <module>"), lead.details


def test_the_time_taken_off_still_orders_the_ranks_failures(tmp_path):
    # two ranks' own errors, the one printed first written a second later: the earlier is the one that started the
    # failure; without the times, the first in the input
    rank1 = "[rank1]: RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x16 and 12x8)\n"
    rank0 = "[rank0]: KeyError: 'input_ids'\n"
    timed, untimed = tmp_path / "timed.log", tmp_path / "untimed.log"
    timed.write_text(f"2026-12-01T04:40:02.000Z {rank1}2026-12-01T04:40:01.000Z {rank0}")
    untimed.write_text(rank1 + rank0)
    assert explain([str(timed)])[0].details["initiating_error"] == "KeyError: 'input_ids'"
    assert "initiating_error" not in explain([str(untimed)])[0].details  # the lead's own error started it


def test_a_time_before_what_is_no_exception_is_kept():
    for line in (
        "[2026-12-01 04:40:01,123] [INFO] epoch 1: loss 0.25",
        "2026-12-01 04:40:01 the loss went up, ValueError: expected",
        "2026-12-01T04:40:01.123Z starting ValueError checks",
        "E1201 04:40:01.123456 4242 ProcessGroupNCCL.cpp:12] [Rank 0] Watchdog caught collective operation timeout",
    ):
        assert clean(line.encode()) == (line, None)


@pytest.mark.parametrize(
    "prefix",
    ["2026-12-01 04:40:01,123 ", "[2026-12-01 04:40:01,123] [ERROR] ", "2026-12-01T04:40:01.1234567Z "],
)
def test_a_time_before_torchs_rank_prefix_keeps_the_prefix_read(tmp_path, prefix):
    # torch's excepthook writes "[rank0]: " before every line of the traceback (init_process_group): a log collector's
    # time before it hid it from the reader (reader._hooked and ranks_in_head looked at the line's start only), so a
    # call after destroy_process_group read as a script started without a launcher, and the log as naming no rank
    script = tmp_path / "train.py"
    script.write_text(DESTROYED_THEN_BARRIER)
    done = run_script([str(script)], timeout=60)
    assert "[rank0]: ValueError: Default process group" in done.stderr, done.stderr
    timed = "".join(prefix + line + "\n" for line in done.stderr.splitlines()).encode()
    assert ranks_in_head(timed) == {0}
    found = explain(["-"], stdin=io.BytesIO(timed))[0]
    assert found.id == "log.process_group_destroyed", found.summary
