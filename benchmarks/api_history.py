"""Which release of a library added or removed a public name, read from the released packages themselves.

`--build` downloads one wheel per minor release (its last patch) of the libraries a training script imports
(`pip download --no-deps` into /tmp/v_wheels, never into the repository), reads each release's public names
statically (`ast` over the modules listed in `MODULES`, their `.pyi` stubs, star imports and the lazy
`_import_structure` / `_SUBMOD_ATTRS` dicts; the downloaded code is never imported), and writes
src/torchdoctor/explain/catalog/api_history.tsv: only the names (and modules) that some release read has and
another does not, each with the first release read that has it, the last one that has it and the first after it
that does not, and the replacement where the package's own source says one (`replacements`).

torch's wheels for Linux are gigabytes; its macOS wheels (about 60 MB: arm64 from 1.13, x86_64 before) carry the
same Python files and the generated `torch/_C/_VariableFunctions.pyi` (the operators torch/__init__.py copies into
`torch`), so those are read.

Left out, so that a row never names a release wrongly: names taken from another library (typing's Optional); a
module's names served only by its `__getattr__` (numpy's aliases of 1.20-1.23: api_changes.py has those by hand);
numpy before 1.20 (no `__init__.pyi`: its type aliases are made at import); a name gone for a while and back; modules
below a private one (torch._inductor's insides); transformers' TensorFlow and Flax classes.

    python benchmarks/api_history.py --build                 # download (cached in /tmp/v_wheels) and write
    python benchmarks/api_history.py --build --only numpy    # one package (the others' rows kept)
    python benchmarks/api_history.py                         # the rows per package in the committed table
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from torchdoctor.explain.kinds.api_history import TABLE, load

WHEELS = Path("/tmp/v_wheels")
MINORS = {
    # from 1.20, the first with numpy/__init__.pyi: 1.19's type aliases (np.float_) are made at import only
    "numpy": [f"1.{m}" for m in range(20, 27)] + [f"2.{m}" for m in range(0, 4)],
    "transformers": [f"4.{m}" for m in range(0, 58)],
    "huggingface_hub": [f"0.{m}" for m in range(10, 37)] + ["1.0", "1.1"],
    "accelerate": [f"0.{m}" for m in range(10, 35)] + [f"1.{m}" for m in range(0, 12)],
    "peft": [f"0.{m}" for m in range(2, 18)],
    "datasets": ["1.18"]
    + [f"2.{m}" for m in range(0, 22)]
    + [f"3.{m}" for m in range(0, 7)]
    + ["4.0", "4.1"],
    "torch": [f"1.{m}" for m in range(8, 14)] + [f"2.{m}" for m in range(0, 10)],
    # 1.7's wheels carry metadata current pip refuses ("torch (>=1.9.*)") and its sdist does not build its
    # metadata: not read (kinds/release_pins.py says "after 1.6, by 1.8" for what changed there)
    "pytorch_lightning": [f"1.{m}" for m in (0, 1, 2, 3, 4, 5, 6, 8, 9)] + [f"2.{m}" for m in range(0, 6)],
    # the `lightning` package has carried lightning.pytorch since 1.8
    "lightning": ["1.8", "1.9"] + [f"2.{m}" for m in range(0, 6)],
    "deepspeed": [f"0.{m}" for m in range(5, 18)],
    "trl": [f"0.{m}" for m in range(4, 26)],
    "diffusers": [f"0.{m}" for m in range(3, 36)],
    "torchvision": [f"0.{m}" for m in range(9, 25)],
    "torchaudio": [f"0.{m}" for m in range(8, 14)] + [f"2.{m}" for m in range(0, 10)],
    # 0.9 moved the old Field/BucketIterator API to torchtext.legacy, 0.12 removed it; 0.18 is the last release
    "torchtext": [f"0.{m}" for m in range(6, 19)],
    # timm's minors are few (0.9 -> 1.0 is one step): its 1.0 line is read at some of its patches
    "timm": ["0.3", "0.4", "0.5", "0.6", "0.9", "1.0.3", "1.0.9", "1.0.12", "1.0.15", "1.0.19"],
    "bitsandbytes": [f"0.{m}" for m in range(35, 49)],
    "sentence_transformers": ["0.4", "1.0", "1.1", "1.2"]
    + [f"2.{m}" for m in range(0, 8)]
    + [f"3.{m}" for m in range(0, 5)]
    + ["4.0", "4.1", "5.0", "5.1"],
    "torchmetrics": [f"0.{m}" for m in range(2, 12)] + [f"1.{m}" for m in range(0, 9)],
    # the BERT package before transformers (2018-2019): its 0.6 patches changed the optimisers' names
    "pytorch_pretrained_bert": ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6.0", "0.6.1", "0.6.2"],
    # its minors are few (0.1 to 0.5): patches of its 0.1-0.3 lines are read too
    "segmentation_models_pytorch": [
        "0.1.0",
        "0.1.3",
        "0.2.0",
        "0.2.1",
        "0.3.0",
        "0.3.2",
        "0.3.4",
        "0.4",
        "0.5",
    ],
    # horovod.torch from 0.13 (mid-2018) to 0.28, its last minor (no 0.17: UNRELEASED)
    "horovod": [f"0.{m}" for m in range(13, 29) if f"0.{m}" != "0.17"],
    # webdataset's 0.1 line renamed its API within the minor (ShardList and WebDataset(splitter=) are in 0.1.62,
    # gone in 0.1.73, webdataset/webdataset#219), so its patches on either side are read; then 0.2 (the v2 API,
    # nodesplitter=) at its first, two middle and its last patch, and 1.0
    "webdataset": ["0.1.62", "0.1.73", "0.1.103", "0.2.4", "0.2.48", "0.2.86", "0.2", "1.0"],
}
# minors inside a package's range that were never released (PyPI's release history), written to the table as
# '#unreleased' lines so that a fix says "came in horovod 0.18" and pins '<0.18' across the gap, where an unread
# minor (pytorch_lightning 1.7, whose wheels pip refuses) keeps "after 1.6, by 1.8" and '==1.6.*'
UNRELEASED = {
    # horovod went from 0.16.4 to 0.18.0 (its CHANGELOG and PyPI have no 0.17)
    "horovod": ["0.17"],
}
# the modules whose names are read (their __init__ for a package); every module's existence is read too
MODULES = {
    "numpy": ["numpy", "numpy.linalg", "numpy.random", "numpy.lib", "numpy.testing"],
    "transformers": [
        "transformers",
        "transformers.utils",
        "transformers.optimization",
        "transformers.integrations",
        "transformers.generation",
        "transformers.modeling_utils",
        "transformers.trainer_utils",
        "transformers.pytorch_utils",
        "transformers.file_utils",
        "transformers.deepspeed",
        "transformers.generation_utils",
        "transformers.generation.utils",
        "transformers.trainer",
        "transformers.training_args",
        "transformers.cache_utils",
        "transformers.modeling_attn_mask_utils",
        "transformers.utils.import_utils",
        "transformers.models.auto",
        # the model families training scripts patch most (their attention classes come and go)
        "transformers.models.llama.modeling_llama",
        "transformers.models.mistral.modeling_mistral",
        "transformers.models.qwen2.modeling_qwen2",
        "transformers.models.gpt2.modeling_gpt2",
        "transformers.models.bert.modeling_bert",
        "transformers.models.t5.modeling_t5",
    ],
    "huggingface_hub": [
        "huggingface_hub",
        "huggingface_hub.utils",
        "huggingface_hub.file_download",
        "huggingface_hub.hf_api",
        "huggingface_hub.constants",
    ],
    "accelerate": ["accelerate", "accelerate.utils", "accelerate.state", "accelerate.accelerator"],
    "peft": ["peft", "peft.utils", "peft.tuners"],
    "datasets": ["datasets", "datasets.utils"],
    "torch": [
        "torch",
        "torch.cuda",
        "torch.cuda.amp",
        "torch.amp",
        "torch.nn",
        "torch.nn.functional",
        "torch.nn.attention",
        "torch.distributed",
        "torch.distributed.fsdp",
        "torch.distributed.tensor",
        "torch.distributed.tensor.parallel",
        "torch.distributed._tensor",
        "torch.distributed.device_mesh",
        "torch.distributed.checkpoint",
        "torch.distributed.algorithms",
        "torch.nn.parallel",
        "torch.backends.cuda",
        "torch.fx",
        "torch.export",
        "torch.ao.quantization",
        "torch.utils.data",
        "torch.utils.checkpoint",
        "torch.optim",
        "torch.optim.lr_scheduler",
        "torch.autograd",
        "torch.linalg",
        "torch.special",
        "torch.func",
        "torch.compiler",
    ],
    "pytorch_lightning": [
        "pytorch_lightning",
        "pytorch_lightning.callbacks",
        "pytorch_lightning.loggers",
        "pytorch_lightning.strategies",
        "pytorch_lightning.plugins",
        "pytorch_lightning.plugins.training_type",
        "pytorch_lightning.accelerators",
        "pytorch_lightning.profiler",
        "pytorch_lightning.profilers",
        "pytorch_lightning.utilities",
        "pytorch_lightning.utilities.seed",
        "pytorch_lightning.utilities.cli",
        "pytorch_lightning.utilities.distributed",
        "pytorch_lightning.utilities.rank_zero",
        "pytorch_lightning.cli",
        "pytorch_lightning.core",
        "pytorch_lightning.metrics",
        "pytorch_lightning.trainer",
    ],
    "lightning": [
        "lightning",
        "lightning.pytorch",
        "lightning.pytorch.callbacks",
        "lightning.pytorch.loggers",
        "lightning.pytorch.strategies",
        "lightning.pytorch.plugins",
        "lightning.pytorch.utilities",
        "lightning.pytorch.cli",
        "lightning.fabric",
        "lightning.fabric.strategies",
        "lightning.fabric.utilities",
    ],
    "deepspeed": [
        "deepspeed",
        "deepspeed.ops.adam",
        "deepspeed.ops",
        "deepspeed.comm",
        "deepspeed.accelerator",
        "deepspeed.utils",
        "deepspeed.utils.zero_to_fp32",
        "deepspeed.runtime.zero",
        "deepspeed.runtime.zero.partition_parameters",
        "deepspeed.runtime.utils",
        "deepspeed.moe.layer",
        "deepspeed.moe.utils",
        "deepspeed.checkpoint",
        "deepspeed.pipe",
    ],
    "trl": ["trl", "trl.trainer", "trl.trainer.utils", "trl.models", "trl.core", "trl.import_utils"],
    "diffusers": [
        "diffusers",
        "diffusers.models",
        "diffusers.models.attention_processor",
        "diffusers.schedulers",
        "diffusers.pipelines",
        "diffusers.loaders",
        "diffusers.utils",
        "diffusers.training_utils",
        "diffusers.optimization",
    ],
    "torchvision": [
        "torchvision",
        "torchvision.models",
        "torchvision.models.detection",
        "torchvision.transforms",
        "torchvision.transforms.functional",
        "torchvision.transforms.v2",
        "torchvision.datasets",
        "torchvision.ops",
        "torchvision.io",
        "torchvision.utils",
    ],
    "torchaudio": [
        "torchaudio",
        "torchaudio.functional",
        "torchaudio.transforms",
        "torchaudio.models",
        "torchaudio.pipelines",
        "torchaudio.io",
        "torchaudio.utils",
        "torchaudio.backend",
        "torchaudio.compliance.kaldi",
    ],
    "torchtext": [
        "torchtext",
        "torchtext.data",
        "torchtext.data.utils",
        "torchtext.datasets",
        "torchtext.vocab",
        "torchtext.legacy",
        "torchtext.legacy.data",
        "torchtext.transforms",
        "torchtext.functional",
        "torchtext.models",
    ],
    "timm": [
        "timm",
        "timm.data",
        "timm.layers",
        "timm.models.layers",
        "timm.models.registry",
        "timm.models.helpers",
        "timm.optim",
        "timm.scheduler",
        "timm.utils",
        "timm.loss",
    ],
    "bitsandbytes": [
        "bitsandbytes",
        "bitsandbytes.nn",
        "bitsandbytes.optim",
        "bitsandbytes.functional",
        "bitsandbytes.utils",
    ],
    "sentence_transformers": [
        "sentence_transformers",
        "sentence_transformers.losses",
        "sentence_transformers.evaluation",
        "sentence_transformers.models",
        "sentence_transformers.util",
        "sentence_transformers.readers",
        "sentence_transformers.datasets",
        "sentence_transformers.training_args",
        "sentence_transformers.trainer",
    ],
    "torchmetrics": [
        "torchmetrics",
        "torchmetrics.classification",
        "torchmetrics.functional",
        "torchmetrics.functional.classification",
        "torchmetrics.regression",
        "torchmetrics.text",
        "torchmetrics.image",
        "torchmetrics.detection",
        "torchmetrics.utilities",
    ],
    "pytorch_pretrained_bert": [
        "pytorch_pretrained_bert",
        "pytorch_pretrained_bert.optimization",
        "pytorch_pretrained_bert.modeling",
        "pytorch_pretrained_bert.tokenization",
        "pytorch_pretrained_bert.file_utils",
    ],
    "segmentation_models_pytorch": [
        "segmentation_models_pytorch",
        "segmentation_models_pytorch.encoders",
        "segmentation_models_pytorch.losses",
        "segmentation_models_pytorch.metrics",
        "segmentation_models_pytorch.utils",
    ],
    "horovod": ["horovod", "horovod.torch", "horovod.torch.functions", "horovod.torch.mpi_ops"],
    "webdataset": ["webdataset"],
}
# generated stubs whose names a module copies into itself at import (torch/__init__.py: for name in
# dir(_C._VariableFunctions): ... globals()[name] = obj)
COPIED = {"torch": ["torch/_C/_VariableFunctions.pyi"]}
# the wheel to ask pip for: a Python and platform each release has a wheel for
WHEEL_FOR = {
    "numpy": lambda minor: [
        "--python-version",
        "3.9" if minor < "1.23" else "3.11",
        # the oldest releases' wheels are tagged manylinux2010 or manylinux2014 only
        *("--platform", "manylinux_2_28_x86_64", "--platform", "manylinux2014_x86_64"),
        *("--platform", "manylinux2010_x86_64"),
    ],
    # macOS wheels (about 60 MB; Linux's carry CUDA): arm64 from 1.13, x86_64 before
    "torch": lambda minor: (
        ["--python-version", "3.10", "--platform", "macosx_14_0_arm64"]
        if minor.startswith("2.") or minor == "1.13"
        else ["--python-version", "3.9", "--platform", "macosx_10_9_x86_64"]
    ),
}


def _macos(arm64_from: tuple[int, int], python: str = "3.10", older_python: str = "3.9"):
    """pip's arguments for a macOS wheel of a torch-family package: arm64 from ``arm64_from``, x86_64 before (the
    Linux wheels carry CUDA; the Python files are the same)."""

    def arguments(minor: str) -> list[str]:
        arm64 = tuple(int(p) for p in minor.split(".")[:2]) >= arm64_from
        return (
            ["--python-version", python, "--platform", "macosx_14_0_arm64"]
            if arm64
            else ["--python-version", older_python, "--platform", "macosx_10_9_x86_64"]
        )

    return arguments


WHEEL_FOR.update(
    {
        "torchvision": _macos((0, 13)),
        "torchaudio": _macos((0, 13)),
        # torchtext 0.7 has no wheel for 3.9
        "torchtext": lambda minor: _macos((0, 14), older_python="3.8" if minor == "0.7" else "3.9")(minor),
    }
)
# read from the source distribution (the .py files in the tar; nothing is built): DeepSpeed publishes no wheels,
# bitsandbytes' wheels before 0.43 carry every CUDA build (100 MB; from 0.43 there is no sdist and its wheels are
# 60 MB), sentence_transformers published no wheel before 2.3, horovod publishes no wheels
SDISTS = {
    "deepspeed": None,
    "bitsandbytes": {f"0.{m}" for m in range(35, 43)},
    "sentence_transformers": {"0.4", "1.0", "1.1", "1.2", "2.0", "2.1", "2.2"},
    "horovod": None,
    # ColossalAI publishes no wheels (api_keywords.py reads it)
    "colossalai": None,
}
# other packages of the same project whose names a package re-exports as its own (pytorch_lightning 1.8+ imports
# its seed_everything, rank_zero_only, ... from lightning_lite, later lightning_fabric)
SAME_PROJECT = {"pytorch_lightning": ("lightning_lite", "lightning_fabric")}
MODULE_DEPTH = 3  # module existence: transformers.models.llama, torch.distributed.fsdp (not every file below)


def replacements(package: str, names: dict[str, dict]) -> dict[tuple[str, str], str]:
    """(module, name) -> what replaces it, as the package's own source says in its last releases with it."""
    found: dict[tuple[str, str], str] = {}
    if package == "numpy":
        # numpy/_expired_attrs_2_0.py (2.0+): __expired_attributes__ = {name: "Use `...` instead." ...}
        for version_names in names.values():
            for name, message in version_names.get("numpy.__expired_attributes__", {}).items():
                named = re.search(r"`([^`]+)`", message)  # the name its migration note says to use
                if named and "np." in named.group(1):
                    found[("numpy", name)] = named.group(1)
    found.update({key: text for key, text in HAND.items() if key[0].split(".")[0] == package})
    return found


# names a package sets on itself at import with setattr, which no static reading sees: present in every release
# read until one binds them plainly, so the release that "added" them is not known
SET_AT_IMPORT = {
    # torchaudio/backend/utils.py set_audio_backend (0.8-2.1): for func in ['save', 'load', 'load_wav', 'info']:
    # setattr(torchaudio, func, getattr(module, func)); torchaudio/_backend/__init__.py (2.1): torchaudio.info = ...
    "torchaudio": {"save", "load", "load_wav", "info"},
}


# Replacements the removing release's own deprecation text names (read in the last wheel that has the name):
HAND = {
    # webdataset 0.1.73 dropped ShardList for SimpleShardList (its README's multinode example); the package printed
    # no deprecation, its maintainer named the new names (webdataset/webdataset#219: "ShardList is now called
    # SimpleShardList, and splitter is now called nodesplitter")
    # SimpleShardList, and 0.1's ShardList(urls, splitter=...) / WebDataset(splitter=...) as 2's nodesplitter;
    # the wheels: DataPipeline and split_by_node from 0.1.103, WebDataset(nodesplitter=) from 0.2.4 (0.1.73 and
    # 0.1.103's WebDataset function takes no node splitter)
    ("webdataset", "ShardList"): (
        "wds.SimpleShardList (a node split: wds.DataPipeline(wds.SimpleShardList(urls), wds.split_by_node, ...) "
        "from 0.1.103, or wds.WebDataset(urls, nodesplitter=wds.split_by_node) from 0.2.4; 0.1.73 has neither)"
    ),
    # transformers/optimization.py (4.x until 4.46): "This implementation of AdamW is deprecated ... Use the
    # PyTorch implementation torch.optim.AdamW instead"
    ("transformers", "AdamW"): "torch.optim.AdamW",
    ("transformers.optimization", "AdamW"): "torch.optim.AdamW",
    # transformers/utils/import_utils.py (4.39-4.44): "`is_torch_tpu_available` is deprecated ... Please use the
    # `is_torch_xla_available` instead."
    ("transformers", "is_torch_tpu_available"): "is_torch_xla_available",
    ("transformers.utils", "is_torch_tpu_available"): "is_torch_xla_available",
    # transformers/generation/utils.py (4.34-4.38): "`top_k_top_p_filtering` is scheduled for removal in v4.39.
    # Use `TopKLogitsWarper` and `TopPLogitsWarper` instead."
    ("transformers", "top_k_top_p_filtering"): "TopKLogitsWarper and TopPLogitsWarper",
    # huggingface_hub/file_download.py (0.10-0.25): "`cached_download` is the legacy way to download files from
    # the HF hub, please consider upgrading to `hf_hub_download`"
    ("huggingface_hub", "cached_download"): "hf_hub_download",
    ("huggingface_hub.file_download", "cached_download"): "hf_hub_download",
    # datasets/load.py (2.x): "'load_metric' is deprecated and will be removed in the next major version of
    # datasets. Use 'evaluate.load' instead, from the new library 🤗 Evaluate"
    ("datasets", "load_metric"): "evaluate.load (pip install evaluate)",
    # huggingface_hub/utils/_hf_folder.py (0.x): HfFolder's token methods are deprecated for get_token / login
    ("huggingface_hub", "HfFolder"): "huggingface_hub.get_token() / huggingface_hub.login()",
    # transformers/deepspeed.py (4.33-4.x): "transformers.deepspeed module is deprecated and will be removed in a
    # future version. Please import deepspeed modules directly from transformers.integrations"
    ("transformers.deepspeed", ""): "transformers.integrations",
    # peft/utils/other.py (0.4-0.9): "prepare_model_for_int8_training is deprecated and will be removed in a
    # future version. Use prepare_model_for_kbit_training instead."
    ("peft", "prepare_model_for_int8_training"): "prepare_model_for_kbit_training",
    ("peft.utils", "prepare_model_for_int8_training"): "prepare_model_for_kbit_training",
    # torchvision/transforms/functional_tensor.py (0.15-0.16): "deprecated in 0.15 and will be **removed in 0.17**
    # ... You probably just need to use APIs in torchvision.transforms.functional or in
    # torchvision.transforms.v2.functional"
    ("torchvision.transforms.functional_tensor", ""): "torchvision.transforms.functional",
    # torchvision/transforms/transforms.py (0.2-0.11): "The use of the transforms.Scale transform is deprecated,
    # please use transforms.Resize instead." (RandomSizedCrop: "... please use transforms.RandomResizedCrop")
    ("torchvision.transforms", "Scale"): "torchvision.transforms.Resize",
    ("torchvision.transforms", "RandomSizedCrop"): "torchvision.transforms.RandomResizedCrop",
    # pytorch_lightning/_graveyard/cli.py (1.9): "`pytorch_lightning.utilities.cli.LightningCLI` was deprecated in
    # v1.7.0 and is no longer supported as of v1.9.0. Please use `pytorch_lightning.cli.LightningCLI` instead"
    ("pytorch_lightning.utilities.cli", "LightningCLI"): "pytorch_lightning.cli.LightningCLI",
    # pytorch_lightning/metrics/*.py (1.3-1.4): "Use :class:`torchmetrics.Metric`. Will be removed in v1.5.0."
    ("pytorch_lightning.metrics", ""): "the torchmetrics package (pip install torchmetrics)",
    # diffusers/models/cross_attention.py (0.12-0.19): "Importing from cross_attention is deprecated. Please import
    # from diffusers.models.attention_processor instead."
    ("diffusers.models.cross_attention", ""): "diffusers.models.attention_processor",
    # diffusers/models/unet_2d_condition.py (0.25-0.28): "... is deprecated and this will be removed in a future
    # version. Please use `from diffusers.models.unets.unet_2d_condition import UNet2DConditionOutput`, instead."
    ("diffusers.models.unet_2d_condition", ""): "diffusers.models.unets.unet_2d_condition",
}


# --- reading one wheel ----------------------------------------------------------------------------------------


class Wheel:
    """The Python files of one downloaded wheel, read as text (never imported)."""

    def __init__(self, path: Path):
        self.files = package_files(path)
        self.trees: dict[str, ast.Module | None] = {}

    def sources(self, module: str) -> list[str]:
        """The files that make up ``module``: its .py and its .pyi stub, as a module or a package."""
        base = module.replace(".", "/")
        candidates = (base + ".py", base + ".pyi", base + "/__init__.py", base + "/__init__.pyi")
        return [c for c in candidates if c in self.files]

    def tree(self, path: str) -> ast.Module | None:
        if path not in self.trees:
            try:
                self.trees[path] = ast.parse(self.files[path])
            except SyntaxError:  # a release's file this Python cannot parse: its names stay unread
                self.trees[path] = None
        return self.trees[path]

    def modules(self, package: str) -> set[str]:
        """Every module of ``package`` down to MODULE_DEPTH dots, tests left out."""
        found = set()
        for path in self.files:
            parts = path.removesuffix(".pyi").removesuffix(".py").split("/")
            if parts[0] != package or "tests" in parts or "testing" in parts[1:]:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            # private modules as a leaf (torch._six, huggingface_hub.utils._errors), not torch._inductor's insides
            private = any(p.startswith("_") for p in parts[1:-1])
            if len(parts) <= MODULE_DEPTH and all(p.isidentifier() for p in parts) and not private:
                found.add(".".join(parts))
        return found


def package_files(path: Path, wanted: set[str] | None = None) -> dict[str, str]:
    """{path as installed: text} of the Python files of a wheel or a source tar (``wanted`` only, when given)."""
    keep = (lambda n: n in wanted) if wanted is not None else (lambda n: n.endswith((".py", ".pyi")))
    if path.name.endswith(".tar.gz"):
        return _sdist_files(path, keep)
    with zipfile.ZipFile(path) as archive:
        return {n: archive.read(n).decode("utf-8", "replace") for n in archive.namelist() if keep(n)}


def _sdist_files(path: Path, keep) -> dict[str, str]:
    """A source tar's files by the path they install to: without the top folder ("deepspeed-0.5.10/") and a src/
    layout's "src/" (pytorch_lightning 1.7)."""
    files = {}
    with tarfile.open(path) as archive:
        for member in archive.getmembers():
            inside = member.name.split("/", 1)[-1].removeprefix("src/")
            if not (member.isfile() and keep(inside)):
                continue
            handle = archive.extractfile(member)
            if handle is not None:
                files.setdefault(inside, handle.read().decode("utf-8", "replace"))
    return files


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _statements(body: list[ast.stmt]):
    """The module-level statements, into if/try/with blocks (conditional imports), not into functions."""
    for node in body:
        yield node
        # `if TYPE_CHECKING:` repeats for type checkers what the lazy dict already lists (transformers star-imports
        # every model there): its orelse is what runs
        checking = isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for field in (
            ("orelse", "finalbody", "handlers") if checking else ("body", "orelse", "finalbody", "handlers")
        ):
            inner = getattr(node, field, None)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not inner:
                continue
            for item in inner:
                yield from _statements(item.body if isinstance(item, ast.ExceptHandler) else [item])


class Names:
    """Public names of a wheel's modules: what each binds at module level, star imports followed."""

    def __init__(self, wheel: Wheel, package: str, copied: list[str]):
        self.wheel, self.package, self.copied = wheel, package, copied
        self.cache: dict[str, tuple[set[str], set[str] | None]] = {}
        self.elsewhere: dict[str, set[str]] = {}  # per module: the names it imports from another library

    def of(self, module: str, depth: int = 0) -> tuple[set[str], set[str] | None]:
        """(every name bound, __all__ when it reads statically) of ``module``."""
        if module in self.cache or depth > 12:
            return self.cache.get(module, (set(), None))
        self.cache[module] = (set(), None)  # a cycle of star imports reads as empty
        bound: set[str] = set()
        exported: set[str] | None = None
        submodules: dict[str, str] = {}
        for path in self.wheel.sources(module):
            tree = self.wheel.tree(path)
            if tree is None:
                continue
            is_package = path.endswith(("__init__.py", "__init__.pyi"))
            for node in _statements(tree.body):
                stub = path.endswith(".pyi")
                exported = self._read(module, node, is_package, stub, bound, exported, submodules, depth)
        if module == self.package:
            for path in self.copied:
                tree = self.wheel.tree(path) if path in self.wheel.files else None
                for node in tree.body if tree else []:
                    if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("__"):
                        bound.add(node.name)
        # another library's name the module re-exports on purpose (pytorch_lightning 1.8's seed_everything, from
        # lightning_lite): its __all__ lists it
        bound |= self.elsewhere.pop(module, set()) & (exported or set())
        self.cache[module] = (bound, exported)
        return bound, exported

    def _read(self, module, node, is_package, stub, bound, exported, submodules, depth):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Import):
            # another library's module bound here (os, typing) is not this package's API; a stub's `x as x` is
            for alias in node.names:
                inside = alias.name.split(".")[0] == module.split(".")[0]
                if inside or (stub and alias.asname == alias.name):
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node, is_package)
            # importing a submodule binds it in its package at run time (`from .backend import x` in
            # torchaudio/__init__.py makes torchaudio.backend)
            if is_package and source.startswith(module + "."):
                bound.add(source[len(module) + 1 :].split(".")[0])
            # nor a name taken from another library (typing's Optional), unless a stub re-exports it (`x as x`)
            outside = source.split(".")[0] not in {module.split(".")[0], *SAME_PROJECT.get(self.package, ())}
            for alias in node.names:
                if outside and not (stub and alias.asname == alias.name):
                    self.elsewhere.setdefault(module, set()).add(alias.asname or alias.name)
                    continue
                if alias.name == "*":
                    names, exports = self.of(source, depth + 1)
                    bound.update(
                        exports if exports is not None else {n for n in names if not n.startswith("_")}
                    )
                else:
                    bound.add(alias.asname or alias.name)
                    submodules[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bound.add(name.id)
            exported = self._all(node, targets, exported, submodules, depth)
            self._lazy(node, targets, bound)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            exported = self._calls(node.value, exported, submodules, bound, depth)
        return exported

    def _other_all(self, node, submodules, depth) -> list[str]:
        # ``x.__all__`` where x is a submodule the module imported (numpy/core/__init__.py)
        if isinstance(node, ast.Attribute) and node.attr == "__all__" and isinstance(node.value, ast.Name):
            target = submodules.get(node.value.id)
            if target:
                names, exports = self.of(target, depth + 1)
                return sorted(exports if exports is not None else names)
        if isinstance(node, ast.BinOp):
            return self._other_all(node.left, submodules, depth) + self._other_all(
                node.right, submodules, depth
            )
        return _strings(node)

    def _all(self, node, targets, exported, submodules, depth):
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) or node.value is None:
            return exported
        names = set(self._other_all(node.value, submodules, depth))
        if isinstance(node, ast.AugAssign):
            return (exported or set()) | names
        return names

    def _lazy(self, node, targets, bound):
        # transformers' `_import_structure = {"module": ["Name", ...]}`, huggingface_hub's `_SUBMOD_ATTRS`, and
        # `_import_structure["module"] = [...]`
        for target in targets:
            # numpy/__init__.py: `__deprecated_attrs__["math"] = ...`, served by its module __getattr__
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                if target.value.id == "__deprecated_attrs__" and isinstance(target.slice, ast.Constant):
                    bound.add(str(target.slice.value))
            name = target.value if isinstance(target, ast.Subscript) else target
            if not (isinstance(name, ast.Name) and name.id in ("_import_structure", "_SUBMOD_ATTRS")):
                continue
            # the lazy module serves its keys' submodules as attributes too (transformers.trainer)
            keys = node.value.keys if isinstance(node.value, ast.Dict) else []
            if isinstance(target, ast.Subscript):
                keys = [target.slice]
            bound.update(
                k.value.split(".")[0]
                for k in keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            )
            if isinstance(node.value, ast.Dict):
                for value in node.value.values:
                    bound.update(_strings(value))
            elif node.value is not None:
                bound.update(_strings(node.value))

    def _calls(self, call, exported, submodules, bound, depth):
        func = call.func
        # numpy/core/numeric.py: extend_all(fromnumeric) appends that module's __all__ to its own
        if isinstance(func, ast.Name) and func.id == "extend_all" and call.args:
            got = self._other_all(ast.Attribute(value=call.args[0], attr="__all__"), submodules, depth)
            return (exported or set()) | set(got)
        if not isinstance(func, ast.Attribute) or func.attr not in ("extend", "append") or not call.args:
            return exported
        owner = func.value.value if isinstance(func.value, ast.Subscript) else func.value
        if not isinstance(owner, ast.Name):
            return exported
        arg = call.args[0]
        values = [arg.value] if func.attr == "append" and isinstance(arg, ast.Constant) else None
        if owner.id in ("_import_structure", "_SUBMOD_ATTRS"):
            bound.update(values if values is not None else _strings(arg))
        elif owner.id == "__all__":
            got = values if values is not None else self._other_all(arg, submodules, depth)
            return (exported or set()) | {v for v in got if isinstance(v, str)}
        return exported


def _model_exports(wheel: Wheel) -> set[str]:
    """transformers 4.4x+ builds its top level from each model module's own ``__all__`` (define_import_structure)."""
    found = set()
    for path, text in wheel.files.items():
        if path.startswith("transformers/models/") and path.endswith(".py"):
            # only the module-level list is parsed (the modeling files are large)
            for literal in _ALL_LITERAL.findall(text):
                try:
                    found.update(_strings(ast.parse(literal, mode="eval").body))
                except SyntaxError:
                    continue
    return found


_TF_OR_FLAX = re.compile(r"(?:TF|Flax)[A-Z]|tf_|flax_")
_ALL_LITERAL = re.compile(r"^__all__ = (\[[^\]]*\])", re.M)


def _expired(wheel: Wheel) -> dict[str, str]:
    path = "numpy/_expired_attrs_2_0.py"
    tree = wheel.tree(path) if path in wheel.files else None
    for node in tree.body if tree else []:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            return {
                k.value: v.value
                for k, v in zip(node.value.keys, node.value.values, strict=False)
                if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
            }
    return {}


def read_wheel(package: str, path: Path) -> dict[str, set[str] | dict]:
    """{module: its public names} for one release, plus "<package>.<module>" for every module it has."""
    wheel = Wheel(path)
    names = Names(wheel, package, COPIED.get(package, []))
    found: dict = {}
    for module in MODULES[package]:
        if wheel.sources(module):
            bound, _ = names.of(module)
            found[module] = {n for n in bound if not n.startswith("_")}
    if package == "transformers":
        # a PyTorch run meets transformers' PyTorch classes: its TensorFlow and Flax ones (TFBertModel) are left out
        found = {m: {n for n in names if not _TF_OR_FLAX.match(n)} for m, names in found.items()}
    if package == "transformers" and "define_import_structure" in wheel.files.get(
        "transformers/__init__.py", ""
    ):
        found["transformers"] |= {n for n in _model_exports(wheel) if not _TF_OR_FLAX.match(n)}
    found[""] = wheel.modules(package)
    # a submodule the release has is an attribute of its package once anything imported it (a lazy module serves it
    # on access, transformers.models): whether the package's own __init__ imports it is not what a release changed
    for module, names in found.items():
        if module:
            names |= {
                m[len(module) + 1 :]
                for m in found[""]
                if m.rpartition(".")[0] == module and not m.rpartition(".")[2].startswith("_")
            }
    if package == "numpy":
        found["numpy.__expired_attributes__"] = _expired(wheel)
    return found


# --- downloading ----------------------------------------------------------------------------------------------


def _sdist(package: str, minor: str) -> bool:
    return package in SDISTS and (SDISTS[package] is None or minor in SDISTS[package])


def download(package: str, minor: str) -> Path | None:
    """The wheel (or, for SDISTS, the source tar) of ``package``'s last ``minor`` patch, from the cache or pip;
    None when it has none."""
    folder = WHEELS / package / minor
    pattern = "*.tar.gz" if _sdist(package, minor) else "*.whl"
    found = sorted(folder.glob(pattern))
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    spec = f"{package}=={minor}.*"
    extra = WHEEL_FOR[package](minor) if package in WHEEL_FOR else []
    binary = ["--no-binary", ":all:"] if _sdist(package, minor) else ["--only-binary", ":all:"]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", *binary, "-q", "-d", str(folder)]
    result = subprocess.run(["nice", "-n", "19", *cmd, *extra, spec], capture_output=True, text=True)
    found = sorted(folder.glob(pattern))
    if not found:
        print(f"  {spec}: none ({result.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
        return None
    return found[0]


def version_of(path: Path) -> str:
    """The release a downloaded file holds: a wheel's second field, a source tar's last ("sentence-transformers-
    2.2.2.tar.gz")."""
    if path.name.endswith(".tar.gz"):
        return path.name.removesuffix(".tar.gz").rsplit("-", 1)[1]
    return path.name.split("-")[1]


def rows_for(package: str) -> tuple[list[str], list[tuple]]:
    """(the releases read, the rows of the names that some of them have and others not)."""
    releases: list[tuple[str, dict]] = []
    for minor in MINORS[package]:
        wheel = download(package, minor)
        if wheel is not None:
            releases.append((version_of(wheel), read_wheel(package, wheel)))
            print(f"  {package} {version_of(wheel)}", file=sys.stderr)
    versions = [v for v, _ in releases]
    presence: dict[tuple[str, str], list[bool]] = {}
    for at, (_, found) in enumerate(releases):
        for module, names in found.items():
            if module.endswith("__expired_attributes__"):
                continue
            keys = [(m, "") for m in names] if module == "" else [(module, n) for n in names]
            for key in keys:
                presence.setdefault(key, [False] * len(releases))[at] = True
    replaced = replacements(package, {v: f for v, f in releases})
    rows = []
    for (module, name), seen in sorted(presence.items()):
        first = seen.index(True)
        last = len(seen) - 1 - seen[::-1].index(True)
        # in every release, or gone for a while and back (np.bmat in 1.21 only): no one release to name
        if all(seen) or not all(seen[first : last + 1]):
            continue
        added = versions[first] if first > 0 and name not in SET_AT_IMPORT.get(module, ()) else ""
        removed = versions[last + 1] if last + 1 < len(versions) else ""
        if not added and not removed:
            continue
        rows.append(
            (
                module,
                name,
                added,
                versions[last] if removed else "",
                removed,
                replaced.get((module, name), ""),
            )
        )
    return versions, rows


def build(only: list[str]) -> None:
    """Download, read and write the table (the packages not in ``only`` keep their committed rows)."""
    committed = load() if TABLE.exists() else {}
    # a committed row is a Change (its package first); a row written is without it
    kept = {p: (v, [tuple(c)[1:] for c in r]) for p, (v, r) in committed.items() if only and p not in only}
    for package in MINORS:
        if not only or package in only:
            print(f"{package}:", file=sys.stderr)
            kept[package] = rows_for(package)
    lines = [
        "# Names that some releases of a library have and others do not, read from the released wheels by",
        "# benchmarks/api_history.py --build (ast over each release's modules; never imported).",
        "# A '#releases' line lists a package's releases read, an '#unreleased' line the minors in its range that",
        "# were never released (horovod 0.17); a row: module, name ('' = the module itself),",
        "# added (first release read that has it; '' = every release read from the first), last (last release",
        "# that has it; '' = still in the newest read), removed (first release after it without it), replacement.",
    ]
    write(TABLE, lines, kept, UNRELEASED)
    load.cache_clear()


def write(
    table: Path,
    header: list[str],
    packages: dict[str, tuple[list[str], list[tuple]]],
    unreleased: dict[str, list[str]] | None = None,
) -> None:
    """``table``: the ``header`` comment lines, then each package's '#releases' line, its '#unreleased' line
    (``unreleased``: the minors in its range never released) and its rows (also api_keywords.py's table)."""
    lines = list(header)
    for package, (versions, rows) in packages.items():
        lines.append("\t".join(["#releases", package, *versions]))
        if (unreleased or {}).get(package):
            lines.append("\t".join(["#unreleased", package, *unreleased[package]]))
        lines += ["\t".join(row) for row in rows]
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{table}: {table.stat().st_size} bytes", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--build", action="store_true", help="download the wheels and rewrite the table")
    parser.add_argument("--only", action="append", default=[], help="a package to rebuild (repeatable)")
    args = parser.parse_args(argv)
    if args.build:
        build(args.only)
    for package, (versions, rows) in load().items():
        modules = sum(1 for r in rows if not r.name)
        print(
            f"{package:16} {versions[0]}..{versions[-1]} ({len(versions)} releases): {len(rows) - modules} "
            f"names, {modules} modules"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
