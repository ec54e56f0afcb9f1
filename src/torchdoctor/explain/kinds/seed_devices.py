"""Seeding every GPU fails: torch counts more GPUs than the runtime opened.

``torch.cuda.manual_seed_all`` (torch/cuda/random.py, which ``torch.manual_seed`` and every ``set_seed`` helper
call) hands ``_lazy_call`` a callback that seeds ``torch.cuda.default_generators[i]`` for each ``i`` in
``range(device_count())``. ``_lazy_call`` (torch/cuda/__init__.py) runs the callback at once only when CUDA is
already initialised and queues it otherwise, so a traceback through both frames is that callback failing, and
the only index it takes is the device count: ``device_count()`` (the GPUs torch parses from the visible-device
variables) was larger than the generators the runtime made at initialisation, and ``default_generators[i]``
raised ``IndexError: tuple index out of range``. On AMD GPUs torch before pytorch#142292 (merged December 2024;
torch 2.7 and later have it) parsed ``HIP_VISIBLE_DEVICES``/``CUDA_VISIBLE_DEVICES`` and ignored
``ROCR_VISIBLE_DEVICES``, which the ROCm runtime applies first (pytorch#140318: every process of a job that
isolates one GPU per process through ``ROCR_VISIBLE_DEVICES`` failed in ``manual_seed_all``). The same count
disagrees when the variables are changed inside the process after the GPUs were opened, so the finding is
likely, that reading named.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Hit, Pattern, on_ranks

FAMILY = "drivers and GPUs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the frame of torch's own manual_seed_all (torch_npu, XPU and MPS have their own random.py) and the line of its
# callback that indexes the generators, as a traceback prints them
SEED_ALL = R(
    r"cuda[/\\]random\.py\"?, line \d+, in (?P<seed_all>manual_seed_all)\b|"
    r"(?P<seed_generators>torch\.cuda\.default_generators\[i\])"
)
ANCHORS = ("in manual_seed_all", "torch.cuda.default_generators[i]")


def seed_all_devices(hits: list[Hit]) -> tuple[str, str]:
    """Summary and fix when seeding every GPU failed on the device count."""
    return (
        "seeding every GPU failed (torch.cuda.manual_seed_all): torch counted more GPUs from the visible-device "
        "variables than the runtime opened" + on_ranks(hits),
        "On AMD GPUs (ROCm) torch before pytorch#142292 ignored ROCR_VISIBLE_DEVICES when it counted GPUs "
        "(pytorch#140318): upgrade torch to 2.7 or later (pip install -U torch --index-url "
        "https://download.pytorch.org/whl/rocm<version>), or give each process the same GPUs through "
        "HIP_VISIBLE_DEVICES as through ROCR_VISIBLE_DEVICES (or only through one of them). Set the visible-device "
        "variables before the script starts (in the launch command), never in the script after torch has "
        "opened the GPUs.",
    )


CHANGED_VARIABLES = Alternative(
    "gpu_selection",
    "visible-device variables changed inside the process after torch opened the GPUs, or set to disagree",
    "Set CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES in the launch command, before Python "
    "starts, and give each process one consistent set; do not rewrite them in the script after the first CUDA "
    "call.",
    when=("seed_all", "seed_generators"),
)
