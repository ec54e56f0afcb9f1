import itertools
import json
import math

import pytest

from torchdoctor import scale_setup


def test_one_gpu_to_two_halves_the_per_device_batch():
    plan = scale_setup(1, 16, 2, learning_rate=1e-3)
    assert plan.exact and (plan.keep.per_device_batch, plan.keep.grad_accumulation) == (8, 1)
    assert plan.keep.effective_batch == plan.reference.effective_batch == 16
    assert plan.keep.learning_rate == {"none": 1e-3, "linear": 1e-3, "sqrt": 1e-3}
    same = plan.same_per_device_batch
    assert same.effective_batch == 32
    assert same.learning_rate["linear"] == pytest.approx(2e-3)
    assert same.learning_rate["sqrt"] == pytest.approx(1e-3 * math.sqrt(2))
    assert plan.warnings == []


def test_fewer_devices_grow_the_batch_or_accumulate_under_a_limit():
    plan = scale_setup(2, 8, 1)
    assert (plan.keep.per_device_batch, plan.keep.grad_accumulation) == (16, 1)
    assert plan.warnings == [
        "the per-device batch grows from 8 to 16: if it runs out of memory, pass a max per-device batch "
        "(e.g. 8) to trade it for accumulation."
    ]
    limited = scale_setup(2, 8, 1, max_per_device_batch=8)
    assert (limited.keep.per_device_batch, limited.keep.grad_accumulation) == (8, 2)
    assert limited.exact and limited.warnings == []
    assert scale_setup(1, 16, 2, grad_accumulation=4, max_per_device_batch=8).keep.grad_accumulation == 4


def test_not_keepable_warns_with_the_closest_options_and_their_learning_rates():
    plan = scale_setup(1, 16, 3, learning_rate=1e-3)
    assert not plan.exact
    assert [(o.per_device_batch, o.grad_accumulation, o.effective_batch) for o in plan.closest] == [
        (5, 1, 15),
        (6, 1, 18),
    ]
    assert plan.keep.effective_batch == 15  # 1 away beats 2 away
    assert plan.keep.learning_rate["linear"] == pytest.approx(1e-3 * 15 / 16)
    assert plan.closest[1].learning_rate["sqrt"] == pytest.approx(1e-3 * math.sqrt(18 / 16))
    assert plan.warnings[0].startswith(
        "the effective batch 16 cannot be kept exactly on 3 device(s) (16 is not a multiple of 3); "
        "closest: 15 (3 × 5 × 1) and 18 (3 × 6 × 1)."
    )
    # on a tie the smaller effective batch wins: its learning rate needs no increase
    assert scale_setup(1, 10, 4).keep.effective_batch == 8
    # fewer samples than devices: one per device is the closest there is
    tiny = scale_setup(1, 2, 4)
    assert [o.effective_batch for o in tiny.closest] == [4]


def brute_force(effective, devices, max_batch):
    options = [
        (b, a)
        for b in range(1, (max_batch or effective) + 1)
        for a in range(1, effective + 1)
        if devices * b * a == effective
    ]
    return min(options, key=lambda o: o[1], default=None)


def test_the_fewest_accumulation_steps_that_keep_it_against_brute_force():
    for ref_devices, batch, accumulation, target, max_batch in itertools.product(
        [1, 2, 3], [1, 6, 16], [1, 3], [1, 2, 4, 5, 8], [None, 1, 4, 7]
    ):
        plan = scale_setup(
            ref_devices, batch, target, grad_accumulation=accumulation, max_per_device_batch=max_batch
        )
        effective = ref_devices * batch * accumulation
        expected = brute_force(effective, target, max_batch)
        case = (ref_devices, batch, accumulation, target, max_batch)
        assert plan.exact == (expected is not None), case
        if expected:
            assert (plan.keep.per_device_batch, plan.keep.grad_accumulation) == expected, case
        else:
            below = [o.effective_batch for o in plan.closest if o.effective_batch < effective]
            above = [o.effective_batch for o in plan.closest if o.effective_batch > effective]
            assert below in ([], [effective // target * target]), case
            assert above == [-(-effective // target) * target], case
        for option in [plan.keep, *plan.closest]:
            assert max_batch is None or option.per_device_batch <= max_batch, case


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((0, 16, 2), {}, "reference devices 0: expected a positive int"),
        ((1, -8, 2), {}, "per-device batch -8: expected a positive int"),
        ((1, 16, 2), {"learning_rate": -0.1}, "learning rate -0.1: expected a positive number"),
        ((1, 16, 2), {"max_per_device_batch": 0}, "max per-device batch 0: expected a positive int"),
    ],
)
def test_bad_values_name_themselves(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        scale_setup(*args, **kwargs)


def test_cli_prints_the_table(cli):
    result = cli(
        "scale", "--devices", "1", "--per-device-batch", "16", "--target-devices", "3", "--lr", "1e-3"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "reference: 1 device(s) × 16 per device × 1 accumulation step(s) = effective batch 16, learning rate 0.001"
    )
    rows = {line[2:28].strip(): line[28:].split() for line in lines if line[2:9] in ("closest", "keeps 1")}
    assert rows["closest below"] == ["5", "1", "15", "(0.938×)", "0.001", "0.0009375", "0.0009682"]
    assert rows["closest above"][:3] == ["6", "1", "18"]
    assert rows["keeps 16 per device"] == ["16", "1", "48", "(3×)", "0.001", "0.003", "0.001732"]
    assert any(line.startswith("! the effective batch 16 cannot be kept exactly") for line in lines)


def test_cli_json(cli):
    result = cli(
        "scale", "--devices", "2", "--per-device-batch", "8", "--target-devices", "1",
        "--max-per-device-batch", "4", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["exact"] and data["keep"]["per_device_batch"] == 4 and data["keep"]["grad_accumulation"] == 4
    assert data["same_per_device_batch"] is None  # 8 per device is above the limit of 4
    assert data["reference"]["effective_batch"] == 16


@pytest.mark.parametrize(
    "args, message",
    [
        (["--devices", "0"], "--devices 0: expected a positive int"),
        (["--max-per-device-batch", "-2"], "--max-per-device-batch -2: expected a positive int"),
        (["--lr", "nan"], "--lr nan: expected a positive number"),
        (["--target-devices", "two"], "Invalid value for '--target-devices'"),
    ],
)
def test_cli_bad_values_exit_2_with_one_line(cli, args, message):
    base = {"--devices": "1", "--per-device-batch": "16", "--target-devices": "2"}
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    result = cli("scale", *itertools.chain.from_iterable(base.items()))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr
