"""The messages users of multi-GPU training post most, by family (docs/explain.md, "The messages users post most,
by family"), each read from the code that prints it: the line as its source fills it, the other wordings other
releases print, and near misses that must not be named with that kind.

The sources: transformers/models/auto/configuration_auto.py (AutoConfig.from_pretrained: the ValueError of 4.37+,
the bare KeyError before it), transformers/hf_argparser.py (parse_args_into_dataclasses), transformers'
modeling_utils.py and quantizers/quantizer_bnb_*bit.py (the bitsandbytes check), aten's Distributions.cpp
(multinomial), transformers' modeling_utils.py (_check_and_enable_flash_attn_2), c10/util/TypeCast.h (checked_convert), aten's LinearAlgebra.cpp and cuda/Blas.cpp (addmm's dtype
checks), aten/src/ATen/cudnn/Exceptions.h and native/cudnn/Conv.cpp (cuDNN's statuses).
"""

from __future__ import annotations

import io

import pytest
from explaining import names_its_kind, template

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def findings(text: str):
    """Every finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))


# transformers 4.23's traceback of AutoConfig looking up a model type it does not have (jianghoucheng/AlphaEdit#27)
KEYERROR_LOOKUP = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/AlphaEdit/experiments/evaluate.py", line 118, in main\n'
    "    model = AutoModelForCausalLM.from_pretrained(model_name).cuda()\n"
    '  File "/usr/local/lib/python3.9/site-packages/transformers/models/auto/auto_factory.py", line 434, in '
    "from_pretrained\n"
    "    config, kwargs = AutoConfig.from_pretrained(\n"
    '  File "/usr/local/lib/python3.9/site-packages/transformers/models/auto/configuration_auto.py", line 790, in '
    "from_pretrained\n"
    '    config_class = CONFIG_MAPPING[config_dict["model_type"]]\n'
    '  File "/usr/local/lib/python3.9/site-packages/transformers/models/auto/configuration_auto.py", line 497, in '
    "__getitem__\n"
    "    raise KeyError(key)\n"
    "KeyError: 'llama'\n"
)

# (line as printed, kind, confidence, words the summary or fix must hold)
NAMED = [
    # AutoConfig, 4.37-4.47: the checkpoint's model type is not in this release's CONFIG_MAPPING
    (
        "ValueError: " + template("transformers:model-type-not-recognised", "qwen2") + "\n",
        "dependency_version",
        "likely",
        ["qwen2", "pip install -U transformers", "trust_remote_code=True"],
    ),
    # 4.48+ adds how to update on the lines after it; under torchrun every rank prints it
    (
        "[rank0]: ValueError: The checkpoint you are trying to load has model type `gemma2` but Transformers does "
        "not recognize this architecture. This could be because of an issue with the checkpoint, or because your "
        "version of Transformers is out of date.\n\n"
        "You can update Transformers with the command `pip install --upgrade transformers`.\n",
        "dependency_version",
        "likely",
        ["gemma2", "transformers_version"],
    ),
    # before 4.37 the same lookup raised a bare KeyError: read where the log shows that lookup
    (
        KEYERROR_LOOKUP,
        "dependency_version",
        "likely",
        ["llama", "before 4.37", "pip install -U transformers"],
    ),
    # torch.distributed.launch (torch 2.x) passing --local-rank=0 to a script parsed by HfArgumentParser
    # (huggingface/transformers#22171: transformers 4.27, whose TrainingArguments take only --local_rank)
    (
        "ValueError: "
        + template("transformers:arguments-not-used-by-hfargumentparser", "['--local-rank=0']")
        + "\n",
        "local_rank_argument",
        "certain",
        ["--local-rank", "torchrun", "4.46"],
    ),
    # the deepspeed launcher's --local_rank=N to a script whose own dataclasses have no local_rank field
    (
        "ValueError: Some specified arguments are not used by the HfArgumentParser: ['--local_rank=1', "
        "'--deepspeed', 'ds_config.json']\n",
        "local_rank_argument",
        "certain",
        ["local_rank: int = -1", "LOCAL_RANK"],
    ),
    # generate()'s sampling from logits that are NaN (multinomial's check, as newer releases word it)
    (
        "RuntimeError: " + template("aten:multinomial-probability-tensor-invalid") + "\n",
        "nan_overflow",
        "likely",
        ["bfloat16", "isfinite(logits)"],
    ),
    # the older wording without backticks, from an RL trainer's rollout (StarsfieldAI/R1-V#69)
    (
        "    idx_next = torch.multinomial(probs, num_samples=1)\n"
        "RuntimeError: probability tensor contains either inf, nan or element < 0\n",
        "nan_overflow",
        "likely",
        ["NaN", "grad_norm: nan"],
    ),
    # a score set to 2**30 in a float16 model's generation helper (QwenLM/Qwen#32)
    (
        "    scores[i, self.eos_token_id] = float(2**30)\n"
        "RuntimeError: " + template("aten:value-cannot-be-converted-without-overflow") + "\n",
        "nan_overflow",
        "likely",
        ["65504", "torch.finfo(x.dtype).min", "bfloat16"],
    ),
    # torch 2.0's addmm check, which named no dtype (modelscope/facechain#322)
    (
        "    return F.linear(input, self.weight, self.bias)\n"
        "RuntimeError: " + template("aten:mat1-and-mat2-same-dtype-unnamed") + "\n",
        "dtype_mismatch",
        "likely",
        ["does not name them", "autocast", "x.to(next(model.parameters()).dtype)"],
    ),
    # the CUDA addmm (cuda/Blas.cpp, 2.1+): caffe2's names for the dtypes
    (
        "RuntimeError: "
        + template("aten:expected-mat1-and-mat2-same-dtype", "float", "c10::BFloat16")
        + "\n",
        "dtype_mismatch",
        "likely",
        ["float and c10::BFloat16"],
    ),
    # an MSVC build names the type "struct c10::Half"
    (
        "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: struct c10::Half != float\n",
        "dtype_mismatch",
        "likely",
        ["c10::Half and float"],
    ),
    # cuDNN's handle made on a full GPU (yukkyo/PyTorch-FilterResponseNormalizationLayer#4)
    (
        "RuntimeError: " + template("torch_native:cudnn-status-not-initialized") + "\n",
        "cuda_oom",
        "likely",
        ["CUDNN_STATUS_NOT_INITIALIZED", "nvidia-smi", "LD_LIBRARY_PATH"],
    ),
    # torch 0.3's CuDNNError printed the status with its number (chenyuntc/pytorch-book#3)
    (
        "CuDNNError: 1: CUDNN_STATUS_NOT_INITIALIZED\n",
        "cuda_oom",
        "likely",
        ["CUDNN_STATUS_NOT_INITIALIZED"],
    ),
    (
        "RuntimeError: " + template("torch_native:cudnn-status-internal-error") + "\n",
        "cuda_oom",
        "likely",
        ["CUDNN_STATUS_INTERNAL_ERROR", "benchmark = False"],
    ),
    # Conv.cpp's try_all with a traceback's "Exception raised from" (ShiqiYu/OpenGait#3)
    (
        "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution\n"
        "Exception raised from try_all at /pytorch/aten/src/ATen/native/cudnn/Conv.cpp:692 (most recent call "
        "first):\n",
        "cuda_oom",
        "likely",
        ["smaller batch size", "workspaces"],
    ),
    (
        "RuntimeError: " + template("torch_native:cudnn-no-valid-convolution-algorithms-old") + "\n",
        "cuda_oom",
        "likely",
        ["no valid convolution algorithms available in CuDNN"],
    ),
    # attn_implementation='flash_attention_2' without the package (hiyouga/EasyR1#384, transformers 4.36-4.5x)
    (
        "ImportError: " + template("transformers:flash-attn-2-toggled-on-not-installed") + "\n",
        "dependency_version",
        "certain",
        ["flash-attn", "attn_implementation='sdpa'"],
    ),
    (
        "ImportError: " + template("transformers:flash-attn-2-toggled-on-version", "2.1.0", "2.0.4") + "\n",
        "dependency_version",
        "certain",
        ["2.0.4", "--no-build-isolation"],
    ),
    # transformers 4.31's modeling_utils.py on a CPU runtime: bitsandbytes counts as missing without CUDA
    (
        "ImportError: " + template("transformers:load-in-8bit-requires-accelerate") + "\n",
        "cuda_unavailable",
        "likely",
        ["load_in_8bit=True", "4.34", "pip install -U accelerate bitsandbytes"],
    ),
    # 4.38-4.43's quantizer, the same check
    (
        "ImportError: " + template("transformers:bnb-quantization-requires-accelerate", "8") + "\n",
        "cuda_unavailable",
        "likely",
        ["bitsandbytes 8-bit quantization", "torch.cuda.is_available()"],
    ),
    # 4.44+ split it: the bitsandbytes half
    (
        "ImportError: " + template("transformers:bnb-quantization-requires-latest-bitsandbytes", "4") + "\n",
        "cuda_unavailable",
        "likely",
        ["bitsandbytes 4-bit quantization", "0.43.1"],
    ),
]


@pytest.mark.parametrize(("text", "kind", "confidence", "words"), NAMED)
def test_source_line_names_its_kind(text, kind, confidence, words):
    names_its_kind(text, kind, confidence, words)


def test_float16_constant_names_no_nan_of_the_data():
    """A constant past float16's range is the model's dtype, not an op's domain or the data: no such alternative."""
    finding = names_its_kind(
        "RuntimeError: value cannot be converted to type at::Half without overflow\n",
        "nan_overflow",
        "likely",
        [],
    )
    assert finding.details.get("alternatives", []) == []


# (a line that shares an anchor's words but is another message, the kind it must not be named)
NEAR_MISSES = [
    # a KeyError of the script's own dict, with no AutoConfig lookup in the log
    (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        '    x = d["llama"]\n'
        "KeyError: 'llama'\n",
        "dependency_version",
    ),
    # a script's own argument unknown to its dataclasses: not the launcher's
    (
        "ValueError: Some specified arguments are not used by the HfArgumentParser: ['--scale_factor', '2']\n",
        "local_rank_argument",
    ),
    # "overflow" of another dtype's conversion
    ("RuntimeError: value cannot be converted to type float without overflow\n", "nan_overflow"),
    # addmm's shape check shares the words "mat1 and mat2"
    ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x1568 and 6272x10)\n", "dtype_mismatch"),
    # cuDNN's version check is its own kind
    (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 9, 2) but found runtime "
        "version (8, 5, 0).\n",
        "cuda_oom",
    ),
    # accelerate missing alone (4.45+), no bitsandbytes check
    (
        "ImportError: Using `bitsandbytes` 8-bit quantization requires Accelerate: `pip install "
        "'accelerate>=0.26.0'`\n",
        "cuda_unavailable",
    ),
]


@pytest.mark.parametrize(("text", "kind"), NEAR_MISSES)
def test_near_miss_is_not_that_kind(text, kind):
    assert f"log.{kind}" not in [f.id for f in findings(text)]
