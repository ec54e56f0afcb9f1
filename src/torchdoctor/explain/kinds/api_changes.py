"""Names the libraries of a training script added, renamed or removed in a known release, one by one.

The messages are CPython's (``module '{}' has no attribute '{}'``, ``cannot import name '{}' from '{}'``, ``No
module named '{}'``, ``{}() got an unexpected keyword argument '{}'``, ``'{}' object has no attribute '{}'``) and
NumPy's own text for its expired aliases (``numpy/__init__.py`` ``__getattr__``: "`np.{n}` was a deprecated alias
for the builtin `{n}`"). What each name did, and when, is from the libraries' sources and release notes:

- Lightning 2.0 removed the Trainer flags ``gpus``, ``tpu_cores``, ``ipus``, ``num_processes`` (use ``devices``,
  PR 16171), ``auto_select_gpus`` (``devices="auto"``, PR 16184), ``resume_from_checkpoint`` (``trainer.fit(
  ckpt_path=...)``, PR 10061) and ``replace_sampler_ddp`` (``use_distributed_sampler``): its "Upgrade from 1.8 to
  2.0" guide;
- transformers' ``TrainingArguments.evaluation_strategy`` came in 3.4 (before it, ``evaluate_during_training``), was
  renamed ``eval_strategy`` in 4.41 (PR 30190; ``training_args.py`` warns "`evaluation_strategy` is deprecated and
  will be removed in version 4.46"), yet the field stayed through 4.50 and is gone from 4.51 (the released wheels:
  api_keywords.tsv);
- torchtext 0.9.0 moved ``Field``, ``BucketIterator``, ``TabularDataset`` and the rest of its old data API to
  ``torchtext.legacy``, and 0.12.0 deleted ``torchtext.legacy`` (its release notes and ``legacy/README``);
- NumPy 1.24 removed the aliases ``np.float``, ``np.int``, ``np.bool``, ``np.object``, ``np.str``, ``np.complex``
  (deprecated in 1.20);
- torch 2.0 removed ``torch._six`` (pytorch/pytorch#94709), and names came in known releases (``torch.device``,
  ``torch.no_grad``, ``torch.float32`` in 0.4.0; ``torch.argsort``, ``torch.tensordot`` in 1.0.0;
  ``torch.nn.Identity`` in 1.1.0; ``torch.cuda.amp`` in 1.6.0; ``torch.fx`` in 1.8.0; ``torch.compile`` in 2.0.0).

`change(text)` says which of them a message is: versions.py's ``dependency_version`` leads with it.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import api_keywords

R = re.compile

LIGHTNING_FLAGS = {
    "gpus": "devices=<the same number> (with accelerator='gpu')",
    "tpu_cores": "devices=<the same number> (with accelerator='tpu')",
    "ipus": "devices=<the same number> (with accelerator='ipu')",
    "num_processes": "devices=<the same number>",
    "auto_select_gpus": "devices='auto'",
    "resume_from_checkpoint": "trainer.fit(model, ckpt_path=<the checkpoint>)",
    "replace_sampler_ddp": "use_distributed_sampler",
}
NUMPY_ALIASES = {
    "float": "np.float64",
    "int": "np.int64",
    "bool": "np.bool_",
    "object": "np.object_",
    "str": "np.str_",
    "complex": "np.complex128",
}
TORCHTEXT_LEGACY = (
    "Field|RawField|NestedField|LabelField|ReversibleField|BucketIterator|BPTTIterator|Iterator|TabularDataset|"
    "Example|Batch|Pipeline"
)
# a torch name and the release it came in
TORCH_ADDED = {
    "torch.device": "0.4.0",
    "torch.no_grad": "0.4.0",
    "torch.float32": "0.4.0",
    "torch.argsort": "1.0.0",
    "torch.tensordot": "1.0.0",
    "torch.nn.Identity": "1.1.0",
    "torch.cuda.amp": "1.6.0",
    "torch.fx": "1.8.0",
    "torch.compile": "2.0.0",
}

_Q = "'"  # the lines are read with typographic quotes made straight (collect.straight_quotes)
CHANGE = R(
    rf"(?P<lightning_flag_call>(?:Trainer\.)?__init__|\binit)\(\) got an unexpected keyword argument "
    rf"{_Q}(?P<lightning_flag>{'|'.join(LIGHTNING_FLAGS)}){_Q}|"
    rf"\(\) got an unexpected keyword argument {_Q}(?P<evaluation_strategy>evaluation_strategy){_Q}|"
    rf"{_Q}\w*TrainingArguments{_Q} object has no attribute {_Q}(?P<eval_strategy>eval_strategy){_Q}|"
    rf"module {_Q}torchtext\.data{_Q} has no attribute {_Q}(?P<torchtext_legacy>{TORCHTEXT_LEGACY}){_Q}|"
    rf"cannot import name {_Q}(?P<torchtext_legacy2>{TORCHTEXT_LEGACY}){_Q} from {_Q}torchtext\.data{_Q}|"
    rf"No module named {_Q}(?P<torchtext_gone>torchtext\.legacy){_Q}|"
    rf"module {_Q}numpy{_Q} has no attribute {_Q}(?P<numpy_alias>{'|'.join(NUMPY_ALIASES)}){_Q}|"
    rf"`np\.(?P<numpy_alias2>{'|'.join(NUMPY_ALIASES)})` was a deprecated alias for the builtin|"
    # NumPy 2.0 moved numpy/core to numpy/_core: a pickle (or a module) made under NumPy 2 names numpy._core,
    # which NumPy 1.x has not
    rf"No module named {_Q}(?P<numpy_core>numpy\._core(?:\.\w{{1,40}})?){_Q}|"
    rf"No module named {_Q}(?P<torch_six>torch\._six){_Q}|module {_Q}torch{_Q} has no attribute {_Q}(?P<torch_six2>_six){_Q}|"
    rf"module {_Q}(?P<torch_module>torch(?:\.nn|\.cuda)?){_Q} has no attribute "
    rf"{_Q}(?P<torch_added>{'|'.join(sorted({n.rsplit('.', 1)[1] for n in TORCH_ADDED}))}){_Q}"
)


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for the known API change among ``facts`` (the named groups of `CHANGE`), else None."""
    if facts.get("lightning_flag"):
        flag = facts["lightning_flag"]
        return (
            f"the code passes Trainer({flag}=...), a flag Lightning 2.0 removed: the installed Lightning is newer "
            "than the code",
            f"Lightning 2.0 removed Trainer's {flag}: pass {LIGHTNING_FLAGS[flag]} instead, or install the "
            "Lightning the code was written for (pip install 'pytorch-lightning<2.0', or the version its "
            "requirements pin).",
        )
    if facts.get("evaluation_strategy"):
        # the releases from the wheels (api_keywords.tsv): the field stayed, deprecated, until 4.51 removed it
        (row,) = api_keywords.rows("TrainingArguments", "evaluation_strategy")
        removed, last = ".".join(row.removed.split(".")[:2]), ".".join(row.last.split(".")[:2])
        return (
            "the code passes evaluation_strategy to transformers' TrainingArguments, which exists only from "
            f"transformers 3.4 to {last}: the installed transformers is older or newer than the code",
            "With transformers 4.41 or newer, pass eval_strategy= instead (evaluation_strategy was renamed in "
            f"4.41 and removed in {removed}). With a transformers older than 3.4 (pip show transformers), upgrade "
            "it: pip install -U transformers. Or install the transformers version the code's requirements pin.",
        )
    if facts.get("eval_strategy"):
        return (
            "code reading TrainingArguments.eval_strategy met a TrainingArguments without it: transformers "
            "renamed evaluation_strategy to eval_strategy in 4.41, and the packages installed are on both sides "
            "of that change",
            "Either transformers is older than 4.41 while the calling code expects the new name (pip install -U "
            "transformers), or a library's own TrainingArguments (setfit's, for one) has not caught up with a "
            "transformers >= 4.41: upgrade that library, or pin transformers below 4.41 (pip install "
            "'transformers<4.41').",
        )
    if facts.get("torchtext_legacy") or facts.get("torchtext_legacy2") or facts.get("torchtext_gone"):
        name = facts.get("torchtext_legacy") or facts.get("torchtext_legacy2") or "torchtext.legacy"
        return (
            f"the code uses torchtext's old data API ({name}), which torchtext 0.9.0 moved to torchtext.legacy "
            "and 0.12.0 removed: the installed torchtext is newer than the code",
            "Install a torchtext that still has it, with the torch it was built for: torchtext 0.10.0 with torch "
            "1.9.0 (or 0.11 with torch 1.10), importing from torchtext.legacy.data, or torchtext 0.8 with torch "
            "1.7 for the old torchtext.data path. Or port the data pipeline to torchtext's new API (its "
            "legacy_tutorial migration notebook).",
        )
    alias = facts.get("numpy_alias") or facts.get("numpy_alias2")
    if alias:
        return (
            f"the code uses np.{alias}, an alias NumPy 1.24 removed: the installed NumPy is newer than the code",
            f"Replace np.{alias} with the builtin {alias} (or {NUMPY_ALIASES[alias]} where the NumPy type was "
            "meant), in the code or by upgrading the package that uses it; or pin numpy<1.24 until it is "
            "updated.",
        )
    if facts.get("numpy_core"):
        return (
            f"NumPy 1.x met a reference to {facts['numpy_core']}, a module NumPy 2.0 created (numpy/core moved to "
            "numpy/_core): what is loaded was written under NumPy 2",
            "A pickle (a dataset file, a checkpoint with NumPy values, a cached index) saved under NumPy 2 names "
            "numpy._core, which the NumPy 1.x installed here lacks: upgrade NumPy (pip install -U 'numpy>=2', "
            "with a torch 2.3 or later that supports it), or re-save the file under NumPy 1.x, or convert it "
            "to plain lists/tensors where NumPy 2 is installed.",
        )
    if facts.get("torch_six") or facts.get("torch_six2"):
        return (
            "torch is installed but has no module torch._six: torch 2.0 removed it, and the code importing it "
            "was written for torch 1.x",
            "Replace what it took from torch._six: from torch import inf for torch._six.inf, str for "
            "string_classes, int for int_classes, collections.abc for container_abcs; or upgrade the package "
            "that imports it to a release written for torch 2 (apex, old timm and mmcv releases did), or "
            "install the torch 1.x the code pins.",
        )
    name = f"{facts.get('torch_module')}.{facts.get('torch_added')}"
    if name in TORCH_ADDED:
        release = TORCH_ADDED[name]
        return (
            f"the code uses {name}, which came in PyTorch {release}: the installed PyTorch is older than the code",
            f"Upgrade PyTorch to {release} or newer (pip install -U torch with the --index-url of your CUDA; "
            "python -c 'import torch; print(torch.__version__)' shows the one installed).",
        )
    return None
