"""Certainty, ninth round (task CERT9): readings that led with certainty on a message other causes print too.

Made likely, the other reading named:

- ATen's dispatch refusal of a reduced-precision dtype by a *CPU* kernel ("addmm_impl_cpu_" not implemented for
  'Half', "slow_conv2d_cpu", "cholesky_cpu"): the kernel's name says the half tensors were on the CPU, not why.
  The threads posting it are a model run on the CPU on purpose and, as often, a torch that sees no GPU (a CPU-only
  build installed by conda: SCIR-HI/Huatuo-Llama-Med-Chinese#43; a driver it cannot use: lyogavin/airllm#23), whose
  script's "cuda if available" fell back to the CPU. So it is likely, `cuda_unavailable` named with its check.

- torch's DataLoader refusing a sampler beside shuffle=True, and autograd refusing detach_() on a view, raised with
  an installed package's frames below the user's code: that package made the call, a bug of its release (flair's
  default shuffle beside a custom sampler, flairNLP/flair#2737; MultiVae's hard-coded shuffle, MultiVae#33; PyG's
  loaders before pyg-team/pytorch_geometric#5457; invariant-point-attention's detach_(), fixed in the library,
  lucidrains/invariant-point-attention#9). Likely then, `library_version_bug` named
  (`recognisers.unless_a_library_called`); from the user's code, torch's own frames or with no traceback, certain.

- a torch name the releases' table (api_history.tsv) says the installed torch lacks, beside a torch the log itself
  shows installed that has it (collect_env's "PyTorch version:"): the table's reading "the installed torch is too
  old / too new" is contradicted by the log, so the torch imported is another one (another environment or Python,
  a file or folder named torch on the path). Likely, that said; with a torch shown that lacks it, or none shown,
  certain as before.

Kept certain, pinned below: the same refusal by a GPU kernel (a library's float32-only CUDA op, the one cause).
"""

from __future__ import annotations

import traceback

import pytest
import torch
from explaining import certain, explained, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")


@pytest.mark.parametrize(
    "line",
    [
        # huggingface/transformers#27769, SCIR-HI/Huatuo-Llama-Med-Chinese#43 (a CPU-only torch from conda)
        "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'\n",
        # zai-org/VisualGLM-6B#30: the image encoder's convolution, next
        "RuntimeError: \"slow_conv2d_cpu\" not implemented for 'Half'\n",
    ],
    ids=["addmm", "conv2d"],
)
def test_a_cpu_kernel_refusing_half_is_only_likely_a_torch_without_gpu_named(line):
    found = likely_with(line, "half_unsupported_op", "log.cuda_unavailable")
    assert "on the CPU" in found.summary and "model.float()" in found.fix
    assert "torch.cuda.is_available()" in found.fix and "CPU-only build" in found.fix, found.fix


def test_torchs_own_cpu_kernel_refusal_is_read_the_same():
    x = torch.randn(4, 4).half()
    with pytest.raises((NotImplementedError, RuntimeError)) as raised:
        torch.linalg.cholesky(x @ x.T)  # "cholesky_cpu" not implemented for 'Half'
    log = "".join(traceback.format_exception(raised.value))
    likely_with(log, "half_unsupported_op", "log.cuda_unavailable")


def test_a_gpu_kernel_without_half_stays_certain_and_names_no_cpu_reading():
    # 300.txt's line (zzangjinsun/NLSPN_ECCV20#7): DCN's CUDA op built for float32 only, under apex O1
    found = certain(
        "RuntimeError: \"deform_conv_forward_cuda\" not implemented for 'Half'\n", "half_unsupported_op"
    )
    assert "on the GPU" in found.summary and "alternatives" not in found.details
    assert "is_available" not in found.fix


SITE = "/opt/conda/lib/python3.9/site-packages"
SHUFFLE = "ValueError: sampler option is mutually exclusive with shuffle\n"
DETACH = "RuntimeError: Can't detach views in-place. Use detach() instead\n"


def through(*frames: tuple[str, str]) -> str:
    """A traceback from the user's train.py through ``frames`` (file, code)."""
    lines = [
        "Traceback (most recent call last):\n",
        '  File "/home/ana/ner/train.py", line 31, in <module>\n',
    ]
    lines.append("    main()\n")
    lines += [f'  File "{file}", line 412, in f\n    {code}\n' for file, code in frames]
    return "".join(lines)


TORCH_LOADER = (
    f"{SITE}/torch/utils/data/dataloader.py",
    "raise ValueError('sampler option is mutually exclusive with '",
)


@pytest.mark.parametrize(
    "text",
    [
        # flairNLP/flair#2737: flair's trainer builds the DataLoader with its default shuffle beside the sampler
        through((f"{SITE}/flair/trainers/trainer.py", "batch_loader = DataLoader("), TORCH_LOADER) + SHUFFLE,
        # lucidrains/invariant-point-attention#9 as installed from PyPI: its forward detaches a view in place
        through(
            (f"{SITE}/torch/nn/modules/module.py", "return forward_call(*input, **kwargs)"),
            (f"{SITE}/invariant_point_attention/invariant_point_attention.py", "rotations.detach_()"),
        )
        + DETACH,
    ],
    ids=["flair-builds-the-loader", "a-library-detaches-a-view"],
)
def test_a_refusal_a_librarys_own_call_raised_is_only_likely_its_release_named(text):
    kind = "dataloader_sampler_shuffle" if "shuffle" in text.splitlines()[-1] else "inplace_detach_view"
    found = likely_with(text, kind, "log.library_version_bug")
    assert "pip install -U <package>" in found.fix, found.fix


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (SHUFFLE, "dataloader_sampler_shuffle"),
        (
            through(
                ("/home/ana/ner/data.py", "loader = DataLoader(ds, sampler=s, shuffle=True)"), TORCH_LOADER
            )
            + SHUFFLE,
            "dataloader_sampler_shuffle",
        ),
        # pytorch/pytorch#25814: torch's own zero_grad detaching a gradient the script made a view
        (through((f"{SITE}/torch/optim/optimizer.py", "p.grad.detach_()")) + DETACH, "inplace_detach_view"),
    ],
    ids=["no-traceback", "the-users-own-loader", "torchs-own-zero-grad"],
)
def test_the_same_refusal_from_the_users_code_stays_certain(text, kind):
    assert "alternatives" not in certain(text, kind).details


COMPILE = "AttributeError: module 'torch' has no attribute 'compile'\n"
SIX = "ModuleNotFoundError: No module named 'torch._six'\n"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "PyTorch version: 2.1.0\n" + COMPILE,
            "which torch has had since 2.0, and the log shows torch 2.1.0",
        ),
        (
            "PyTorch version: 1.13.1\n" + SIX,
            "which torch had until 2.0 removed it, and the log shows torch 1.13.1",
        ),
    ],
    ids=["compile-beside-2.1", "six-beside-1.13"],
)
def test_a_torch_name_missing_beside_a_torch_shown_that_has_it_is_only_likely(text, said):
    found = explained(text)
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely", found.summary
    assert said in found.summary and "torch.__file__" in found.fix, found.summary


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (COMPILE, "came in PyTorch 2.0"),
        ("PyTorch version: 1.13.1\n" + COMPILE, "came in PyTorch 2.0"),
        ("PyTorch version: 2.1.0\n" + SIX, "torch 2.0 removed it"),
        # older than the first release the table read (1.8): not known to have it
        ("PyTorch version: 1.7.1\n" + SIX, "torch 2.0 removed it"),
    ],
    ids=["compile-alone", "compile-beside-1.13", "six-beside-2.1", "six-beside-1.7"],
)
def test_the_same_name_missing_beside_a_torch_that_lacks_it_stays_certain(text, said):
    assert said in certain(text, "dependency_version").summary
