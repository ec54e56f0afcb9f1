"""A run that trains on the CPU while it was meant for the GPU: the warnings that say so.

Users bring these as "training is very slow", "nvidia-smi shows no process", "more GPUs change nothing", with a
log that holds no error: the run worked, on the CPU. Each warning is printed where the choice was made:

- Lightning's ``_log_device_info`` (``lightning/pytorch/trainer/setup.py`` in 2.x, the accelerator connector in
  1.x) prints "GPU available: True (cuda), used: False" ("GPU available: True, used: False" before 1.7) and warns
  "GPU available but not used." followed by the setting to use, which changed with the releases: "Set the --gpus
  flag when calling the script." (0.x), "Set the gpus flag in your trainer `Trainer(gpus=1)` or script
  `--gpus=1`." (1.0-1.5), "Set `accelerator` and `devices` using `Trainer(accelerator='gpu', devices=N)`."
  (1.6-1.9), "You can set it by doing `Trainer(accelerator='gpu')`." (2.x, a ``PossibleUserWarning``): torch sees
  a GPU, the Trainer was given none. Its accelerator connector also warns where 16-bit precision was asked of a
  Trainer that resolved to the CPU: "You passed `Trainer(accelerator='cpu', precision=16)` but native AMP is not
  supported on CPU. Using `precision='bf16'` instead." (1.5-1.9; 2.x: "... precision='16-mixed')` but AMP with fp16
  is not supported on CPU. Using `precision='bf16-mixed'` instead."), printed also where accelerator was left to
  'auto' and torch saw no GPU.
- torch's ``GradScaler.__init__`` (``torch/cuda/amp/grad_scaler.py``, 1.6+; ``torch/amp/grad_scaler.py`` later)
  warns "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling." and ``autocast`` for
  device_type 'cuda' "User provided device_type of 'cuda', but CUDA is not available. Disabling"
  (``torch/autocast_mode.py``, 1.10 on) or "CUDA is not available or torch_xla is imported. Disabling autocast."
  (``torch/amp/autocast_mode.py``, 2.13.0 here): the code asked for CUDA's mixed precision in a process where torch
  sees no GPU, so the model runs in float32 wherever it is, which is the CPU unless something else failed. Despite
  the later wording, both check ``torch.cuda.amp.common.amp_definitely_not_available()``: no CUDA and no torch_xla
  installed, so a TPU run does not print them.

A warning: a finding only where the log shows no error (``fallback``: beside an error, the error leads), and only
likely (a run meant for the CPU prints them too; the log does not say it was meant for a GPU).
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "drivers and GPUs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_NO_CUDA_FIX = (
    "torch sees no GPU in this process, so autocast and the GradScaler switched themselves off and the model "
    "trains on the CPU in float32 (slow; more GPUs change nothing). Check: python -c 'import torch; "
    "print(torch.__version__, torch.version.cuda, torch.cuda.is_available())'. None for torch.version.cuda is a "
    "CPU-only build (pip install torch from the CUDA index that matches the driver); otherwise CUDA_VISIBLE_DEVICES "
    "is empty or names no GPU, the container was started without the GPUs (docker run --gpus all), or the driver "
    "is not loaded (nvidia-smi)."
)


def _on_cpu(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    lightning = any("lightning_gpu_unused" in h.facts for h in hits)
    if not lightning and any("lightning_cpu_precision" in h.facts for h in hits):
        return (
            "Lightning's Trainer resolved to the CPU although 16-bit precision was asked for, and trains in bf16 on "
            "the CPU instead (a warning, the run went on)" + on_ranks(hits),
            "The Trainer runs on the CPU: accelerator='cpu' was passed, or accelerator='auto' found no GPU torch "
            "can use. For the GPU: Trainer(accelerator='gpu', devices=N, precision='16-mixed'), and where it then "
            "says no GPU is available, check torch itself: " + _NO_CUDA_FIX,
        )
    if lightning:
        return (
            "Lightning found a GPU but the Trainer trains on the CPU: it was given no GPU accelerator (a warning, "
            "the run went on)" + on_ranks(hits),
            "Give the Trainer the GPUs: Trainer(accelerator='gpu', devices=N) (devices='auto' or -1 for every "
            "visible GPU; Lightning 1.x before 1.6: Trainer(gpus=N)). A Trainer on the CPU is why such a run is "
            "slow, shows no process in nvidia-smi and does not get faster with more GPUs. Where the code already "
            "says accelerator='gpu', the Trainer built is another one: a config file or command line (LightningCLI "
            "--trainer.accelerator, Hydra) overriding it, or accelerator='cpu' left from a test run.",
        )
    return (
        "torch switched off CUDA's mixed precision (autocast / GradScaler) because CUDA is not available in this "
        "process: the model trains on the CPU (a warning, the run went on)" + on_ranks(hits),
        _NO_CUDA_FIX,
    )


TRAINED_ON_CPU = Recogniser(
    kind="trained_on_cpu",
    title="the run trained on the CPU, not the GPU",
    anchors=(
        "GPU available but not used.",
        "GPU available: True",
        "GradScaler is enabled, but CUDA is not available.",
        "User provided device_type of 'cuda', but CUDA is not available. Disabling",
        "CUDA is not available or torch_xla is imported. Disabling autocast.",
        "is not supported on CPU. Using `precision='bf16",
    ),
    templates=(
        "third_party:lightning-gpu-available-but-not-used-0-7",
        "third_party:lightning-gpu-available-but-not-used-1-0",
        "third_party:lightning-gpu-available-but-not-used-1-6",
        "third_party:lightning-gpu-available-but-not-used-2",
        "third_party:lightning-gpu-available-used-false",
        "torch_native:grad-scaler-enabled-cuda-not-available",
        "torch_native:autocast-cuda-not-available-device-type",
        "torch_native:autocast-cuda-not-available-or-torch-xla",
        "lightning:you-passed-trainer-accelerator-cpu-precision",
        "third_party:lightning-cpu-precision-16-native-amp",
    ),
    # the device line a healthy GPU run prints too ("used: True") is not this kind
    match=R(
        r"GPU available but not used\.|GPU available: True[^,\n]{0,12}, used: False|CUDA is not available|"
        r"is not supported on CPU\. Using `precision='bf16"
    ),
    facts=(
        R(r"(?P<lightning_cpu_precision>`Trainer\(accelerator='cpu', precision=)"),
        R(
            r"(?P<lightning_gpu_unused>GPU available but not used\.|GPU available: True[^,\n]{0,12}, used: False)"
        ),
    ),
    confirm=lambda hits, ctx: False,  # a warning: the log does not say the run was meant for a GPU
    fallback=True,
    describe=_on_cpu,
)


RECOGNISERS = (TRAINED_ON_CPU,)
