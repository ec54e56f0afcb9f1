import itertools
import json
import math
import re

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
        (["--target-devices", "two"], "--target-devices 'two': must be a whole number"),
    ],
)
def test_cli_bad_values_exit_2_with_one_line(cli, cli_here, args, message):
    base = {"--devices": "1", "--per-device-batch": "16", "--target-devices": "2"}
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    # one case in a real process, the others through the same `main` in this one (a process each: 0.5 s CPU)
    result = (cli if args == ["--devices", "0"] else cli_here)(
        "scale", *itertools.chain.from_iterable(base.items())
    )
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr


@pytest.mark.timeout(30)
def test_huge_counts_are_answered_at_once():
    # the old search looped over every step count up to effective // devices: this never came back
    plan = scale_setup(1, 10**23 - 1, 7)
    assert (plan.keep.per_device_batch, plan.keep.grad_accumulation) == (-(-(10**23 - 1) // 7), 1)
    assert [o.effective_batch for o in plan.closest] == [(10**23 - 1) // 7 * 7, -(-(10**23 - 1) // 7) * 7]
    # with a limit: 999983 is prime, so the only split of 999983² under it is one per device
    limited = scale_setup(1, 999983, 1, grad_accumulation=999983, max_per_device_batch=999982)
    assert limited.exact and (limited.keep.per_device_batch, limited.keep.grad_accumulation) == (1, 999983**2)
    # a limit far above √(effective) finds the largest divisor below it
    assert scale_setup(1, 2**40 * 3, 1, max_per_device_batch=2**41).keep.per_device_batch == 2**40 * 3 // 2


def test_the_fewest_steps_against_brute_force_for_awkward_numbers():
    for effective, target, max_batch in itertools.product(
        [30, 49, 97, 120, 121], [1, 2, 3, 7], [2, 5, 11, 50]
    ):
        plan = scale_setup(1, effective, target, max_per_device_batch=max_batch)
        expected = brute_force(effective, target, max_batch)
        assert plan.exact == (expected is not None)
        if expected:
            assert (plan.keep.per_device_batch, plan.keep.grad_accumulation) == expected, (effective, target)


def test_any_integer_type_is_a_count_and_floats_are_not():
    np = pytest.importorskip("numpy")
    plan = scale_setup(np.int64(1), np.int32(16), np.uint8(2), grad_accumulation=np.int16(1))
    assert (plan.keep.per_device_batch, type(plan.keep.per_device_batch)) == (8, int)
    assert plan.reference.devices == 1 and type(plan.reference.devices) is int
    assert scale_setup(1, 16, 2, learning_rate=np.float32(0.5)).base_learning_rate == 0.5
    for bad in (2.0, "2", True, np.float64(2.0)):
        with pytest.raises(TypeError, match=re.escape(f"target devices {bad!r}: expected a positive int")):
            scale_setup(1, 16, bad)
    with pytest.raises(
        ValueError, match=r"learning rate 10{400}: expected a positive number, finite as a float"
    ):
        scale_setup(1, 16, 2, learning_rate=10**400)
    with pytest.raises(ValueError, match="learning rate inf: expected a positive number, finite as a float"):
        scale_setup(1, 16, 2, learning_rate=math.inf)


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--per-device-batch", "99999999999999999999999"],
            "--per-device-batch 99999999999999999999999: must be between 1 and 1000000",
        ),
        (["--target-devices", "1000001"], "--target-devices 1000001: must be between 1 and 1000000"),
        (["--max-per-device-batch", "10000000"], "--max-per-device-batch 10000000: must be between 1 and"),
        (["--lr", "1e400"], "--lr 1e400: too large for a float (it reads as inf)"),
        (["--lr", "1e-400"], "--lr 1e-400: too small for a float (it reads as 0)"),
        (["--lr", "inf"], "--lr inf: expected a finite positive number"),
        (["--lr", "-1"], "--lr -1: expected a positive number"),
        (["--lr", "fast"], "--lr 'fast': expected a positive number"),
    ],
)
def test_cli_counts_are_bounded_and_lr_finite(cli, cli_here, args, message):
    base = {"--devices": "1", "--per-device-batch": "16", "--target-devices": "7"}
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    result = (cli if args == ["--lr", "1e400"] else cli_here)(
        "scale", *itertools.chain.from_iterable(base.items()), timeout=60
    )
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"torchdoctor: error: {message}"), lines


def test_cli_largest_counts_answer_quickly(cli):
    # 999983 is prime: 999983² splits under a limit of 999982 per device only as 1 × 999983² steps,
    # the longest search the bounds of the flags allow
    result = cli(
        "scale", "--devices", "1", "--per-device-batch", "999983", "--target-devices", "1",
        "--grad-accumulation", "999983", "--max-per-device-batch", "999982", "--json", timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    keep = json.loads(result.stdout)["keep"]
    assert (keep["per_device_batch"], keep["grad_accumulation"]) == (1, 999983**2)
