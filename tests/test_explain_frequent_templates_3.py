"""The messages users of multi-GPU training post most in the launcher, FSDP/checkpoint, build and numerics
families (docs/explain.md, "The messages users post most, by family (session 38)"), each read from the code that
prints it, filled as it fills it.

The sources: tensorboardX/x2num.py (check_nan, on every value the SummaryWriter converts), apex/amp/handle.py
(scale_loss's skipped step), torch 1.9's clip_grad_norm_ (its FutureWarning on a non-finite norm), the
gradient norm transformers' Trainer and mmcv log, bitsandbytes/functional.py (its C functions called on the library
cextension.py left None), CUDA's cudaErrorTooManyPeers (711; 60 before CUDA 10) as torch, NCCL and the driver
API print it, uv's failed source builds (crates/uv-build, 0.4 and before; crates/uv/src/commands/diagnostics.rs,
0.5+), and a traceback's `raise` source line above the message it raises, filled (deepspeed/launcher/runner.py,
transformers/trainer.py), and accelerate's own argument parsers by their names (accelerate/commands/accelerate_cli.py,
launch.py).
"""

from __future__ import annotations

import io

import pytest
from explaining import explained, names_its_kind, template

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def findings(text: str):
    """Every finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))


# (the log, the kind, its confidence, words its summary or fix must hold)
NAMED = [
    # tensorboardX's check_nan through logging's root logger (Thundernet_Pytorch#45: the loss went nan)
    (
        "[epoch  3][iter    0/ 110] loss: 0.5, lr: 1.00e-10\n"
        "WARNING:root:" + template("third_party:tensorboardx-nan-or-inf-found") + "\n"
        "WARNING:root:" + template("third_party:tensorboardx-nan-or-inf-found") + "\n",
        "nan_overflow",
        "likely",
        ["TensorBoard", "add_scalar", "learning rate"],
    ),
    # its older print, under Open MPI's tag (ChenRocks/UNITER#28), beside apex's normal halving of the scale
    (
        "[1,0]<stdout>:Warning: NaN or Inf found in input tensor.\n"
        "[1,0]<stdout>:"
        + template("third_party:apex-amp-gradient-overflow-skipping-step", "0", "32768.0")
        + "\n",
        "nan_overflow",
        "likely",
        ["TensorBoard"],
    ),
    # the gradient norm transformers' Trainer logs (4.38+; zai-org/GLM-4#174) and mmcv's text logger
    # (Divadi/SOLOFusion#19), and torch 1.9's warning from clip_grad_norm_ (megvii-research/PETR#175)
    (
        "{'loss': 0.1459, 'grad_norm': 5.28125, 'learning_rate': 0.000261, 'epoch': 5.36}\n"
        "{'loss': 0.2096, 'grad_norm': nan, 'learning_rate': 0.00026000000000000003, 'epoch': 5.38}\n",
        "nan_overflow",
        "likely",
        ["'grad_norm': nan", "learning rate"],
    ),
    (
        "2023-08-05 20:34:00,438 - mmdet - INFO - Iter [100/5274] lr: 2.500e-05, eta: 1:52:54, time: 1.297, "
        "data_time: 0.079, memory: 15212, loss: 1.2, grad_norm: nan\n",
        "nan_overflow",
        "likely",
        ["grad_norm: nan"],
    ),
    (
        "/env/lib/python3.8/site-packages/mmcv/runner/hooks/optimizer.py:31: FutureWarning: "
        + template("torch:clip-grad-norm-non-finite-continuing")
        + "\n  return clip_grad.clip_grad_norm_(params, **self.grad_clip)\n",
        "nan_overflow",
        "likely",
        ["clip_grad_norm_"],
    ),
    # apex's scale halved below 1: every step overflows (whai362/PVT#94); apex's fix, not DeepSpeed's config
    (
        template("third_party:apex-amp-gradient-overflow-skipping-step", "0", "0.0625")
        + "\n"
        + template("third_party:apex-amp-gradient-overflow-skipping-step", "0", "0.03125")
        + "\n",
        "nan_overflow",
        "likely",
        ["apex", "0.0625", "torch.autocast", "bf16"],
    ),
    # CUDA 9's error number as torch 1.1's THCGeneral printed it (pytorch/pytorch#25019)
    (
        "RuntimeError: cuda runtime error (60) : "
        + template("cuda_runtime:too-many-peers")
        + " at /opt/conda/conda-bld/pytorch_1556653114079/work/aten/src/THC/THCGeneral.cpp:164\n",
        "gpu_p2p",
        "certain",
        ["8 peer", "CUDA_VISIBLE_DEVICES", "torchrun"],
    ),
    # torch 2.x's CUDA error (haotian-liu/LLaVA#1076) and NCCL's WARN of the same error (NVIDIA/nccl-tests#324)
    (
        "RuntimeError: CUDA error: peer mapping resources exhausted\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
        "might be incorrect.\n",
        "gpu_p2p",
        "certain",
        ["device_map"],
    ),
    (
        "ubuntu:33207:33207 [0] allocator.cc:79 NCCL WARN Cuda failure 711 'peer mapping resources exhausted'\n",
        "gpu_p2p",
        "certain",
        ["NCCL_P2P"],
    ),
    # bitsandbytes' functions called on the library it left None: an 8-bit optimizer's step on a Mac
    # (maitrix-org/llm-reasoners#45) and the 4-bit quantizer (bitsandbytes-foundation/bitsandbytes#693)
    (
        '  File "/env/lib/python3.10/site-packages/bitsandbytes/functional.py", line 1002, in optimizer_update_32bit\n'
        "    str2optimizer32bit[optimizer_name][0](\n"
        "AttributeError: 'NoneType' object has no attribute 'cadam32bit_grad_fp32'\n",
        "extension_import",
        "likely",
        ["cadam32bit_grad_fp32", "torch.cuda.is_available()", "adamw_torch"],
    ),
    (
        "AttributeError: 'NoneType' object has no attribute 'cquantize_blockwise_fp16_nf4'\n",
        "extension_import",
        "likely",
        ["bitsandbytes"],
    ),
    # uv 0.4 building flash-attn from source (genmoai/mochi#22)
    (
        "error: Failed to prepare distributions\n"
        "  Caused by: Failed to fetch wheel: flash-attn==2.6.3\n"
        "  Caused by: " + template("build_tools:uv-build-backend-failed-to-build-wheel", "1") + "\n"
        "--- stdout:\n",
        "cuda_build",
        "likely",
        ["prebuilt"],
    ),
    # accelerate's own parsers by their names: the top-level one reports a launch option the installed release
    # does not have (hollowstrawberry/kohya-colab#123: --quiet), launch.py's as accelerate-launch runs it
    # (wochenlong/lora-scripts-next#324: an option's value moved away by a GUI's command line)
    (
        "usage: accelerate <command> [<args>]\nAccelerate CLI tool: error: unrecognized arguments: --quiet\n",
        "launch_command",
        "certain",
        ["accelerate launch", "--quiet", "newer release"],
    ),
    (
        "Accelerate launch command: error: argument --num_cpu_threads_per_process/--num-cpu-threads-per-process: "
        "expected one argument\n",
        "launch_command",
        "certain",
        ["accelerate launch --help"],
    ),
    # uv 0.5+ names the package
    (
        "  " + template("build_tools:failed-to-build-2", "flash-attn==2.7.4.post1") + "\n"
        "  ├─▶ The build backend returned an error\n",
        "cuda_build",
        "likely",
        ["flash-attn"],
    ),
]


@pytest.mark.parametrize(("text", "kind", "confidence", "words"), NAMED)
def test_source_line_names_its_kind(text, kind, confidence, words):
    names_its_kind(text, kind, confidence, words)


def test_uv_build_without_torch_is_build_isolation():
    """uv's failed build whose setup found no torch: the isolation is the cause, the failed build its effect."""
    names_its_kind(
        "  " + template("build_tools:failed-to-build-2", "flash-attn==2.7.4.post1") + "\n"
        "  ├─▶ The build backend returned an error\n"
        "  ╰─▶ Call to `setuptools.build_meta:__legacy__.build_wheel` failed (exit status: 1)\n"
        "      [stderr]\n"
        "      ModuleNotFoundError: No module named 'torch'\n",
        "build_isolation",
        "likely",
        ["--no-build-isolation"],
    )


# a `raise` line of a traceback quotes the message with its placeholders; the line under it is the one filled
RAISED = [
    (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/bin/deepspeed", line 6, in <module>\n'
        "    main()\n"
        '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/launcher/runner.py", line 230, in _parse_hostfile\n'
        '    raise ValueError(f"Hostfile contains a bad entry: {line}, unable to proceed with launching")\n'
        "ValueError: Hostfile contains a bad entry: 10.0.0.2 lots=8, unable to proceed with launching\n",
        "launch_command",
        "10.0.0.2 lots=8",
    ),
    (
        '  File "/usr/lib/python3.9/site-packages/transformers/trainer.py", line 2093, in _load_from_checkpoint\n'
        '    raise ValueError(f"Can\'t find a valid checkpoint at {resume_from_checkpoint}")\n'
        "ValueError: Can't find a valid checkpoint at /workspace/models/fsdp_debug/checkpoint-5\n",
        "checkpoint_path",
        "/workspace/models/fsdp_debug/checkpoint-5",
    ),
]


@pytest.mark.parametrize(("text", "kind", "value"), RAISED)
def test_raise_line_is_read_filled(text, kind, value):
    finding = explained(text)
    assert finding.id == f"log.{kind}", (finding.id, finding.summary)
    assert value in finding.summary and "{" not in finding.summary, finding.summary


# (a line that shares an anchor's words but is another message, the kind it must not be named)
NEAR_MISSES = [
    # apex halving the scale now and then, the run going on: no NaN reading
    (
        template("third_party:apex-amp-gradient-overflow-skipping-step", "0", "32768.0")
        + "\n"
        + template("third_party:apex-amp-gradient-overflow-skipping-step", "0", "16384.0")
        + "\n",
        "nan_overflow",
    ),
    # a gradient norm of inf under fp16: GradScaler's first steps overflow by design
    ("{'loss': 2.31, 'grad_norm': inf, 'learning_rate': 1e-05, 'epoch': 0.01}\n", "nan_overflow"),
    # None where a tensor was meant: a C-named attribute that is not bitsandbytes'
    ("AttributeError: 'NoneType' object has no attribute 'cuda'\n", "extension_import"),
    # a peer mapping that worked: NCCL's INFO line of its P2P channels
    ("node1:1234:1290 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUDA/read\n", "gpu_p2p"),
    # accelerate's usage line alone, no error
    ("usage: accelerate <command> [<args>]\n", "launch_command"),
    # uv's resolver failing is not a build
    (
        "  × No solution found when resolving dependencies:\n"
        "  ╰─▶ Because flash-attn==2.7.4 has no wheels with a matching platform tag, we can conclude that your "
        "requirements are unsatisfiable.\n",
        "cuda_build",
    ),
]


@pytest.mark.parametrize(("text", "kind"), NEAR_MISSES)
def test_near_miss_is_not_that_kind(text, kind):
    assert f"log.{kind}" not in [f.id for f in findings(text)]
