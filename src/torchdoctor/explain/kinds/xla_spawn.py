"""PyTorch/XLA's spawned processes finding the XLA device already set up by the process that spawned them.

``xmp.spawn`` (``torch_xla/distributed/xla_multiprocessing.py``) starts one process per TPU core (XRT) or per
chip (PJRT), and each must set up its own device. A process that acquired the XLA device before spawning
(``xm.xla_device()`` or a tensor moved to it at module level, ``xr.world_size()``, a notebook cell that trained on
one core first) leaves its children the device it holds:

- XRT (torch_xla 1.x): every child's ``_setup_replication`` calls ``xla_replication_devices``
  (``torch_xla/core/xla_model.py``), which refuses a process that holds fewer devices than the TPU has: "Cannot
  replicate if number of devices (1) is different from 8". Lightning's TPU docs name the cause ("raised when the
  XLA device is called outside the spawn process"); a notebook restarted and run on all cores from the start
  trains (Lightning-AI/pytorch-lightning#7591). An ``nprocs`` or ``TPU_NUM_DEVICES`` that does not match the cores
  can print it as well: likely.
- PJRT (torch_xla 2.x): ``run_multiprocess`` (``torch_xla/_internal/pjrt.py``) refuses to spawn once the runtime
  is initialised: "Runtime is already initialized. Do not use the XLA device before calling xmp.spawn." The
  message states the cause: certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "launchers and schedulers"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

REPLICATE = "Cannot replicate if number of devices ("
PJRT_INITIALISED = "Do not use the XLA device before calling xmp.spawn"

BEFORE_SPAWN = R(
    r"Cannot replicate if number of devices \((?P<held_devices>\d{1,4})\) is different from "
    r"(?P<all_devices>\d{1,5})|(?P<runtime_initialised>Do not use the XLA device before calling xmp\.spawn)"
)

_TOUCH_NOTHING = (
    "Touch nothing of XLA in the process that calls xmp.spawn: no xm.xla_device(), .to(xla device), "
    "xr.world_size() / xm.xrt_world_size() or metrics at module level or in earlier notebook cells; call them "
    "inside the function given to xmp.spawn (with Lightning, let Trainer(accelerator='tpu') set the device up "
    "and do not call xm.xla_device() yourself; with accelerate, build the Accelerator inside the training "
    "function). In a notebook, restart the runtime and run only the multi-core training."
)


def _before_spawn(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "runtime_initialised"):
        return (
            "xmp.spawn refused to start the processes: the PJRT runtime was already initialised in the process "
            "that called it (the XLA device was used before the spawn)" + on_ranks(hits),
            _TOUCH_NOTHING,
        )
    held, total = first(hits, "held_devices", "1"), first(hits, "all_devices", "8")
    return (
        f"each process xmp.spawn started holds {held} XLA device(s) where replication needs all {total}: the "
        "device was most likely set up in the process that spawned them (the XLA device used before xmp.spawn), "
        "which leaves every child the one device it holds" + on_ranks(hits),
        _TOUCH_NOTHING
        + f" If nothing touched XLA before the spawn, start 1 process or all {total} (xmp.spawn nprocs, "
        "Trainer(devices=) / tpu_cores): under XRT, TPU_NUM_DEVICES sets how many cores the processes share.",
    )


XLA_DEVICE_BEFORE_SPAWN = Recogniser(
    kind="xla_device_before_spawn",
    templates=(
        "third_party:torch-xla-cannot-replicate-device-count",
        "third_party:torch-xla-runtime-initialized-before-spawn",
    ),
    title="the XLA device used before xmp.spawn",
    anchors=(REPLICATE, PJRT_INITIALISED),
    match=BEFORE_SPAWN,
    # PJRT's refusal states the cause; XRT's device count is printed for a wrong nprocs too
    confirm=lambda hits, ctx: any("runtime_initialised" in h.facts for h in hits),
    describe=_before_spawn,
)

RECOGNISERS = (XLA_DEVICE_BEFORE_SPAWN,)
