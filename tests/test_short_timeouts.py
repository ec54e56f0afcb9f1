"""A timeout below what a stage of the test can take is refused as such; a short one that expires says the
timeout may be the cause, not only the ranks or the network."""

import pytest

from torchdoctor.net.rank_state import RankError, RankState, Stuck
from torchdoctor.net.verdicts import SHORT_TIMEOUT, verdicts


@pytest.mark.parametrize(
    "args", [["net", "--timeout", "0.001"], ["net", "--timeout", "0.999"], ["check", "--timeout", "0.0001"],
             ["check", "--skip", "env", "--timeout", "0.5"]]
)  # fmt: skip
def test_a_timeout_no_stage_can_meet_is_refused_as_too_short(cli, args):
    result = cli(*args)
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"torchdoctor: error: --timeout {float(args[-1]):g}: too short for any stage")
    assert "give at least 1" in line and result.stdout == ""


def store_timed_out(rank):
    return RankState(
        rank, 2, rank, "vm", "none", master="127.0.0.1:29500", stage="store",
        error=RankError("DistNetworkError", "The client socket has timed out after 2000ms while trying to "
                        "connect to (127.0.0.1, 29500).", "store"),
    )  # fmt: skip


def stuck_in_all_reduce(rank):
    return RankState(
        rank, 2, rank, "vm", "none", stage="all_reduce", stuck=Stuck("all_reduce", 2.0),
        error=RankError("Timeout", "all_reduce did not complete", "all_reduce"),
    )  # fmt: skip


@pytest.mark.parametrize("make", [store_timed_out, stuck_in_all_reduce])
@pytest.mark.parametrize("timeout", [2.0, 30.0])
def test_a_short_timeout_that_expires_is_named_as_a_cause(make, timeout):
    findings = verdicts({r: make(r) for r in range(2)}, 2, timeout)
    assert findings and all(f.status == "fail" for f in findings)
    for finding in findings:
        said = "may be too short for this stage: try --timeout 30 first" in finding.summary
        assert said == (timeout < SHORT_TIMEOUT), finding.summary
