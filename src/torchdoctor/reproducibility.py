"""Same results on other hardware: `seed_everything`, and `scale_setup` for moving to another device count.

The batch size a DataLoader gets is per device, so moving a run from 1 GPU × 16 to 2 GPUs needs 8 per GPU
(or the same 16 per GPU and a learning rate scaled for the doubled effective batch), plus the same seed.
"""

from __future__ import annotations

import math
import numbers
import operator
import random
from dataclasses import asdict, dataclass, field
from typing import Any

_MAX_SEED = 2**32 - 1  # NumPy's global generator takes no more


def seed_everything(seed: int) -> int:
    """Seed Python's ``random``, NumPy's global generator (when NumPy is installed) and torch on every device.

    torch is seeded on the CPU and on every CUDA/ROCm, XPU and MPS device (``torch.cuda.manual_seed_all``
    and friends); DataLoader workers derive their seeds from it. Returns ``seed``.

    ``PYTHONHASHSEED`` is left alone on purpose: Python reads it once, at start-up, so setting it here cannot
    change this process's ``str`` hashes (or ``set`` order); it would only leak into child processes, a
    global change nobody asked for. For hash order that repeats, start the run with ``PYTHONHASHSEED=0``.

    >>> seed_everything(42)
    42
    """
    try:
        seed = operator.index(seed)  # accepts NumPy integers, refuses 4.2 and "42"
    except TypeError:
        raise TypeError(f"seed={seed!r}: expected an int between 0 and {_MAX_SEED}") from None
    if isinstance(seed, bool) or not 0 <= seed <= _MAX_SEED:
        raise ValueError(f"seed={seed!r}: expected an int between 0 and {_MAX_SEED} (NumPy's limit)")
    random.seed(seed)
    try:
        import numpy
    except ImportError:
        pass
    else:
        numpy.random.seed(seed)
    import torch

    torch.manual_seed(seed)
    # torch.manual_seed seeds the devices too in recent releases; say it explicitly for the older ones.
    torch.cuda.manual_seed_all(seed)  # lazy: takes effect when CUDA initialises, no-op without it
    xpu = getattr(torch, "xpu", None)
    if xpu is not None and xpu.is_available():
        xpu.manual_seed_all(seed)
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        torch.mps.manual_seed(seed)
    return seed


@dataclass(frozen=True)
class BatchSetup:
    """Devices × per-device batch × gradient accumulation steps, and the learning rate for it per scaling."""

    devices: int
    per_device_batch: int
    grad_accumulation: int
    learning_rate: dict[str, float] = field(default_factory=dict)  # "none"/"linear"/"sqrt" -> lr

    @property
    def effective_batch(self) -> int:
        return self.devices * self.per_device_batch * self.grad_accumulation

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"effective_batch": self.effective_batch}


@dataclass(frozen=True)
class ScalePlan:
    """What `scale_setup` found: the set-up that keeps the effective batch (or comes closest) and the rest."""

    reference: BatchSetup
    target_devices: int
    keep: BatchSetup  # keeps the effective batch exactly when ``exact``, else the closest
    exact: bool
    closest: list[BatchSetup]  # when not exact: the nearest effective batch below and above
    same_per_device_batch: BatchSetup | None  # the reference's per-device batch kept; None above the max
    base_learning_rate: float | None
    warnings: list[str]
    # under a max per-device batch: the fewest micro-steps per optimizer step, when fewer than ``keep``'s
    fewer_steps: BatchSetup | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "reference": self.reference.to_dict(),
            "target_devices": self.target_devices,
            "exact": self.exact,
            "keep": self.keep.to_dict(),
            "closest": [option.to_dict() for option in self.closest],
            "same_per_device_batch": self.same_per_device_batch and self.same_per_device_batch.to_dict(),
            "base_learning_rate": self.base_learning_rate,
            "warnings": self.warnings,
            "fewer_steps": self.fewer_steps and self.fewer_steps.to_dict(),
        }


def scale_setup(
    reference_devices: int,
    per_device_batch: int,
    target_devices: int,
    *,
    grad_accumulation: int = 1,
    learning_rate: float | None = None,
    max_per_device_batch: int | None = None,
) -> ScalePlan:
    """The per-device batch and gradient accumulation that keep the effective batch on ``target_devices``.

    The effective batch is devices × per-device batch × accumulation steps. Among the set-ups that keep it,
    the one with the fewest accumulation steps (fastest) whose per-device batch is at most
    ``max_per_device_batch`` wins. It can be kept exactly when it is a multiple of ``target_devices`` (at
    worst with 1 per device and more steps). When not, ``exact`` is False, ``closest`` holds the
    nearest set-ups below and above, and the learning rate for each is given under no, linear and
    square-root scaling with the effective batch. Counts may be of any integer type (``numpy.int64`` too).
    With ``max_per_device_batch``, the split takes up to about min(max, √(effective / target)) divisions.

    >>> plan = scale_setup(1, 16, 2, learning_rate=1e-3)
    >>> plan.keep.per_device_batch, plan.keep.grad_accumulation, plan.exact
    (8, 1, True)
    >>> plan.same_per_device_batch.learning_rate
    {'none': 0.001, 'linear': 0.002, 'sqrt': 0.00141421356237}
    """
    reference_devices = _positive_int("reference devices", reference_devices)
    per_device_batch = _positive_int("per-device batch", per_device_batch)
    target_devices = _positive_int("target devices", target_devices)
    grad_accumulation = _positive_int("gradient accumulation", grad_accumulation)
    if max_per_device_batch is not None:
        max_per_device_batch = _positive_int("max per-device batch", max_per_device_batch)
    if learning_rate is not None:
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, numbers.Real):
            raise TypeError(f"learning rate {learning_rate!r}: expected a number")
        try:
            rate = float(learning_rate)
        except OverflowError:  # an int beyond float's range
            rate = math.inf
        if not (math.isfinite(rate) and rate > 0):
            raise ValueError(
                f"learning rate {learning_rate!r}: expected a positive number, finite as a float"
            )
        learning_rate = rate

    effective = reference_devices * per_device_batch * grad_accumulation

    def setup(batch: int, steps: int) -> BatchSetup:
        rates = _learning_rates(learning_rate, target_devices * batch * steps / effective)
        return BatchSetup(target_devices, batch, steps, rates)

    below, above = _nearest(effective, target_devices, max_per_device_batch)
    exact = below is not None and target_devices * below[0] * below[1] == effective
    if exact:
        keep, closest = setup(*below), []
    else:
        closest = [setup(*option) for option in (below, above) if option is not None]
        # the nearer of the two; on a tie the smaller batch, whose learning rate needs no increase
        keep = min(closest, key=lambda option: abs(option.effective_batch - effective))

    warnings = []
    if not exact:
        shown = " and ".join(f"{o.effective_batch} ({_product(o)})" for o in closest)
        warnings.append(
            f"the effective batch {effective} cannot be kept exactly on {target_devices} device(s) "
            f"({effective} is not a multiple of {target_devices}); "
            f"closest: {shown}. Scale the learning rate with the effective batch (linear or sqrt)."
        )
    fewer = None
    if max_per_device_batch is not None:
        fewer = setup(*_fewest_micro_steps(effective / target_devices, max_per_device_batch))
        if fewer.grad_accumulation < keep.grad_accumulation:
            change = fewer.effective_batch / effective - 1
            saved = 1 - fewer.grad_accumulation / keep.grad_accumulation
            warnings.append(
                f"{_product(keep)} takes {keep.grad_accumulation} micro-steps per optimizer step; "
                f"{_product(fewer)} = {fewer.effective_batch} ({change:+.2%} effective batch) takes "
                f"{fewer.grad_accumulation}, {saved:.0%} fewer: prefer it unless the exact effective batch "
                "matters, with the learning rate scaled as shown."
            )
        else:
            fewer = None
    if keep.per_device_batch > per_device_batch and max_per_device_batch is None:
        warnings.append(
            f"the per-device batch grows from {per_device_batch} to {keep.per_device_batch}: if it runs out "
            f"of memory, pass a max per-device batch (e.g. {per_device_batch}) to trade it for accumulation."
        )
    return ScalePlan(
        reference=BatchSetup(
            reference_devices,
            per_device_batch,
            grad_accumulation,
            _learning_rates(learning_rate, 1.0),
        ),
        target_devices=target_devices,
        keep=keep,
        exact=exact,
        closest=closest,
        same_per_device_batch=(
            None
            if max_per_device_batch is not None and per_device_batch > max_per_device_batch
            else setup(per_device_batch, grad_accumulation)
        ),
        base_learning_rate=learning_rate,
        warnings=warnings,
        fewer_steps=fewer,
    )


def _nearest(
    effective: int, devices: int, max_batch: int | None
) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """(batch, steps) with the largest product ≤ ``effective`` and the smallest ≥ it; fewer steps on ties.

    Every set-up holds a multiple of ``devices``, and 1 per device × N steps reaches any multiple, so the
    nearest totals are the multiples of ``devices`` on either side of ``effective``: only the split of each
    into batch × steps is left to find. Below one per device there is nothing below.
    """
    below = _fewest_steps(effective // devices, max_batch) if effective >= devices else None
    return below, _fewest_steps(-(-effective // devices), max_batch)


def _fewest_steps(samples: int, max_batch: int | None) -> tuple[int, int]:
    """(batch, steps) with batch × steps == ``samples``, batch ≤ ``max_batch`` and the fewest steps.

    The batch is the largest divisor of ``samples`` up to ``max_batch``: found in at most about
    min(``max_batch``, √``samples``) divisions, whatever the size of ``samples``.

    >>> _fewest_steps(48, 7), _fewest_steps(13, 4), _fewest_steps(10**30, None)
    ((6, 8), (1, 13), (1000000000000000000000000000000, 1))
    """
    if max_batch is None or max_batch >= samples:
        return samples, 1
    root = math.isqrt(samples)
    if max_batch <= root:  # count down from the limit to the first divisor
        batch = next(b for b in range(max_batch, 0, -1) if samples % b == 0)
        return batch, samples // batch
    # a batch above √samples is samples // steps for steps below √samples: the fewest steps that fit first
    for steps in range(-(-samples // max_batch), root + 1):
        if samples % steps == 0:
            return samples // steps, steps
    batch = next(b for b in range(root, 0, -1) if samples % b == 0)  # then the divisors up to √samples
    return batch, samples // batch


def _fewest_micro_steps(per_device: float, max_batch: int) -> tuple[int, int]:
    """(batch, steps) with batch ≤ ``max_batch``, the fewest steps, and batch × steps nearest ``per_device``
    (a tie goes to fewer steps): 341 under 20 is 20 × 17 = 340, not 11 × 31.

    >>> _fewest_micro_steps(341, 20), _fewest_micro_steps(48, 7)
    ((20, 17), (7, 7))
    """
    least = max(1, math.ceil(per_device / max_batch))
    options = [(min(max_batch, max(1, round(per_device / s))), s) for s in (least - 1, least) if s >= 1]
    return min(options, key=lambda o: (abs(o[0] * o[1] - per_device), o[1]))


def _learning_rates(base: float | None, ratio: float) -> dict[str, float]:
    if base is None:
        return {}
    # 12 significant digits: 0.001 × 9/8 shows as 0.001125, not 0.0011250000000000001
    rates = {"none": base, "linear": base * ratio, "sqrt": base * math.sqrt(ratio)}
    return {rule: float(f"{rate:.12g}") for rule, rate in rates.items()}


def _product(option: BatchSetup) -> str:
    return f"{option.devices} × {option.per_device_batch} × {option.grad_accumulation}"


def _positive_int(what: str, value: Any) -> int:
    """``value`` as an int: any integer type (int, ``numpy.int64``, …) but bool, 4.0 or "4"."""
    try:
        number = operator.index(value)
    except TypeError:
        number = None
    if number is None or isinstance(value, bool):
        raise TypeError(f"{what} {value!r}: expected a positive int")
    if number < 1:
        raise ValueError(f"{what} {number}: expected a positive int (1 or more)")
    return number
