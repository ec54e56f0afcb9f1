"""`torchdoctor scale`: the per-device batch, accumulation and learning rate for another device count."""

from __future__ import annotations

import decimal
import json
import math

import typer

from torchdoctor.cli.app import app
from torchdoctor.errors import BadInput, require_count

_MAX_COUNT = 1_000_000


@app.command()
def scale(
    devices: int = typer.Option(..., "--devices", metavar="N", help="Devices the reference run used."),
    per_device_batch: int = typer.Option(
        ..., "--per-device-batch", metavar="N", help="Batch size each device got."
    ),
    target_devices: int = typer.Option(
        ..., "--target-devices", metavar="N", help="Devices the new run will use."
    ),
    grad_accumulation: int = typer.Option(
        1, "--grad-accumulation", metavar="N", help="Gradient accumulation steps."
    ),
    lr: str | None = typer.Option(
        None, "--lr", metavar="FLOAT", help="Learning rate of the reference run."
    ),  # read as text, so that an error shows what was typed (1e400, not the inf it parses to)
    max_per_device_batch: int | None = typer.Option(
        None, "--max-per-device-batch", metavar="N", help="Largest batch one target device can hold."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
) -> None:
    """Keep the effective batch size (and results) when moving a run to another number of devices."""
    from torchdoctor.reproducibility import scale_setup

    for flag, value in (
        ("--devices", devices),
        ("--per-device-batch", per_device_batch),
        ("--target-devices", target_devices),
        ("--grad-accumulation", grad_accumulation),
        ("--max-per-device-batch", max_per_device_batch),
    ):
        if value is not None and value < 1:
            raise BadInput(f"{flag} {value}: expected a positive int (1 or more)")
        # far beyond any cluster or batch, and it keeps the search for the split short
        require_count(flag, value, maximum=_MAX_COUNT)
    learning_rate = None if lr is None else _learning_rate(lr)

    plan = scale_setup(
        devices,
        per_device_batch,
        target_devices,
        grad_accumulation=grad_accumulation,
        learning_rate=learning_rate,
        max_per_device_batch=max_per_device_batch,
    )
    if as_json:
        print(json.dumps(plan.to_dict(), indent=2))
    else:
        print(_render(plan))


def _learning_rate(text: str) -> float:
    """The ``--lr`` value as a float: positive and finite (1e400 reads as inf, 1e-400 as 0)."""
    try:
        value, written = float(text), decimal.Decimal(text.strip())
    except (ValueError, decimal.InvalidOperation):
        raise BadInput(f"--lr {text!r}: expected a positive number like 1e-3") from None
    if math.isnan(value) or written <= 0:
        raise BadInput(f"--lr {text}: expected a positive number like 1e-3")
    if written.is_infinite():
        raise BadInput(f"--lr {text}: expected a finite positive number like 1e-3")
    if math.isinf(value):
        raise BadInput(f"--lr {text}: too large for a float (it reads as inf); expected a number like 1e-3")
    if value == 0:
        raise BadInput(f"--lr {text}: too small for a float (it reads as 0); expected a number like 1e-3")
    return value


def _render(plan) -> str:
    ref = plan.reference
    lr = f", learning rate {plan.base_learning_rate:g}" if plan.base_learning_rate is not None else ""
    lines = [
        f"reference: {ref.devices} device(s) × {ref.per_device_batch} per device × {ref.grad_accumulation} "
        f"accumulation step(s) = effective batch {ref.effective_batch}{lr}",
        f"target:    {plan.target_devices} device(s)",
        "",
    ]
    if plan.exact:
        rows = [("keeps the effective batch", plan.keep)]
    else:
        rows = [
            (f"closest {'below' if o.effective_batch < ref.effective_batch else 'above'}", o)
            for o in plan.closest
        ]
    if plan.fewer_steps is not None:
        rows.append(("fewest micro-steps", plan.fewer_steps))
    if plan.same_per_device_batch is not None:
        rows.append((f"keeps {ref.per_device_batch} per device", plan.same_per_device_batch))
    header = f"{'':<28}{'per device':>10}  {'accumulation':>12}  {'effective batch':>15}"
    if plan.base_learning_rate is not None:
        header += f"  {'lr: none':>10}  {'linear':>10}  {'sqrt':>10}"
    lines.append(header)
    for label, option in rows:
        mark = "*" if option == plan.keep and not plan.exact else " "
        ratio = option.effective_batch / ref.effective_batch
        row = (
            f"{mark} {label:<26}{option.per_device_batch:>10}  {option.grad_accumulation:>12}  "
            f"{f'{option.effective_batch} ({ratio:.3g}×)':>15}"
        )
        if option.learning_rate:
            row += "".join(f"  {option.learning_rate[rule]:>10.4g}" for rule in ("none", "linear", "sqrt"))
        lines.append(row)
    if not plan.exact:
        lines.append("* the nearest effective batch")
    lines.append("")
    lines += [f"! {warning}" for warning in plan.warnings]
    lines.append(
        "Seed both runs alike (torchdoctor.seed_everything(seed)); expect matching loss curves, not identical "
        "bits: the order of floating-point sums changes with the device count."
    )
    return "\n".join(lines)
