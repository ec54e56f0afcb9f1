"""Trainers that train on one GPU only, refusing a run on several: Unsloth's own check and LLaMA-Factory's.

Unsloth's open-source release trains on one GPU (``multi_gpu_unsupported``, read by ray_cluster.py's recogniser of
that kind). The check it adds to trl's SFTTrainer, DPOTrainer and KTOTrainer ``train()`` (``unsloth/tokenizer_utils.py``)
raises "Unsloth currently does not support multi GPU setups - but we are working on it!" where nvidia-smi shows the
memory used grown by 1 GB or more on more than one GPU since import (without nvidia-smi, more than one device
visible); earlier releases' get_max_steps raised it for ``training_args.world_size > 1``, and
``__init__.py`` prints it in a warning where CUDA_VISIBLE_DEVICES lists several GPUs, then sets it to the first (the
run goes on, on one GPU). Likely: memory another process used on a second GPU since the import trips the check too.

LLaMA-Factory (``llamafactory/hparams/parser.py``, get_train_args, 0.8 on) refuses ``use_unsloth`` under a DeepSpeed
config of ZeRO stage 3: "Unsloth is incompatible with DeepSpeed ZeRO-3." (hiyouga/LlamaFactory#6940: the free
Unsloth release does not train on several GPUs; its maintainer's way to fused kernels there is
``enable_liger_kernel``). Likely: the same refusal is LLaMA-Factory's option check as much as a GPU count.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Hit, Pattern, first

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = (
    "third_party:llamafactory-unsloth-zero3",
    "third_party:unsloth-multi-gpu-not-supported",
)
ANCHORS = (
    "Unsloth is incompatible with DeepSpeed ZeRO-3",
    "Unsloth currently does not support multi GPU setups",
)
MATCH = (
    r"(?P<unsloth_zero3>Unsloth is incompatible with DeepSpeed ZeRO-3)|"
    r"(?P<unsloth_gpus>Unsloth currently does not support multi GPU setups)"
)
FACTS = (
    # unsloth/__init__.py's warning goes on: it keeps the first GPU of CUDA_VISIBLE_DEVICES
    R(r"(?P<unsloth_first_gpu>We will override CUDA_VISIBLE_DEVICES to first device: ?\w{0,10})"),
)
# the warning's hits: the run goes on, on one GPU
WARNED = ("unsloth_first_gpu",)

_ONE_GPU = (
    "run the job as one process on one GPU (CUDA_VISIBLE_DEVICES=0 python train.py, not torchrun or accelerate "
    "launch with several processes; set it before anything imports torch)"
)
_SEVERAL = (
    "For several GPUs, train without Unsloth: transformers' or TRL's trainers under DDP, FSDP or DeepSpeed, with "
    "liger-kernel's fused kernels for the speed (use_liger_kernel=True in the TrainingArguments)."
)


def explain(hits: list[Hit]) -> tuple[str, str] | None:
    """(summary, fix) for Unsloth's or LLaMA-Factory's refusal of several GPUs, or None when neither was read."""
    if first(hits, "unsloth_zero3"):
        return (
            "LLaMA-Factory refuses use_unsloth under DeepSpeed ZeRO-3: Unsloth's open-source release trains on one GPU",
            "Either keep Unsloth and train on one GPU (use_unsloth: true, no deepspeed config, "
            "CUDA_VISIBLE_DEVICES=0 llamafactory-cli train ...), or keep DeepSpeed and the GPUs and drop use_unsloth: "
            "LLaMA-Factory's enable_liger_kernel: true gives fused kernels that train on several GPUs.",
        )
    if first(hits, "unsloth_first_gpu"):
        return (
            "Unsloth saw several GPUs in CUDA_VISIBLE_DEVICES and kept only the first: its open-source release "
            "trains on one GPU",
            f"To choose the GPU yourself, {_ONE_GPU}. {_SEVERAL}",
        )
    if first(hits, "unsloth_gpus"):
        return (
            "Unsloth refused to train on several GPUs: its open-source release trains on one (it checks at "
            "train() for a world size above 1, or for memory in use on more than one GPU since it was imported)",
            f"Either {_ONE_GPU}; the check also counts memory another process took on a second GPU since the "
            f"import (nvidia-smi shows it): hide the other GPUs with CUDA_VISIBLE_DEVICES. {_SEVERAL}",
        )
    return None
