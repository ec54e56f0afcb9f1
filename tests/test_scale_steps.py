"""Under a max per-device batch, `scale` says what keeping the effective batch exactly costs in micro-steps,
and offers the set-up with the fewest when that is fewer."""

import json

import pytest

from torchdoctor.reproducibility import scale_setup


@pytest.mark.parametrize(
    "effective, most, exact, fewer",
    [
        (341, 20, (11, 31), (20, 17)),  # 11 × 31 is the only exact split: 31 micro-steps against 17
        (97, 10, (1, 97), (10, 10)),  # a prime: exact only one sample at a time
        (48, 7, (6, 8), (7, 7)),
        (40, 20, (20, 2), None),  # the exact split is already the fewest
        (64, 64, (64, 1), None),
    ],
)
def test_the_fewest_micro_steps_are_offered_with_their_cost(effective, most, exact, fewer):
    plan = scale_setup(1, effective, 1, max_per_device_batch=most, learning_rate=1e-3)
    assert (plan.keep.per_device_batch, plan.keep.grad_accumulation) == exact and plan.exact
    if fewer is None:
        assert plan.fewer_steps is None
        return
    got = plan.fewer_steps
    assert (got.per_device_batch, got.grad_accumulation) == fewer
    assert got.per_device_batch <= most
    (said,) = [w for w in plan.warnings if "micro-steps" in w]
    assert f"takes {exact[1]} micro-steps per optimizer step" in said
    assert f"takes {fewer[1]}, " in said and "fewer" in said


def test_the_command_shows_the_row_and_the_cost(cli):
    args = ["scale", "--devices", "1", "--per-device-batch", "341", "--target-devices", "1"]
    result = cli(*args, "--max-per-device-batch", "20")
    assert result.returncode == 0, result.stderr
    (row,) = [line for line in result.stdout.splitlines() if "fewest micro-steps" in line]
    assert row.split()[2:4] == ["20", "17"], row
    assert "31 micro-steps per optimizer step" in result.stdout and "45% fewer" in result.stdout
    data = json.loads(cli(*args, "--max-per-device-batch", "20", "--json").stdout)
    assert data["fewer_steps"]["grad_accumulation"] == 17
