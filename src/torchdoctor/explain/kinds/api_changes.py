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
  ``torchtext.legacy``, and 0.12.0 deleted ``torchtext.legacy`` (its release notes and ``legacy/README``). The
  importer is not always the user's code: pytorch-lightning's ``utilities/apply_func.py`` imports ``Batch`` from
  ``torchtext.data`` up to 1.2.2, from ``torchtext.legacy.data`` whenever torchtext >= 0.9 is installed from 1.2.3
  to 1.5.9, and only for a torchtext older than 0.11 from 1.5.10 on (Lightning#10724; Lightning#11662 is 1.5.9
  under torchtext 0.12). Where the traceback's innermost frame is in an installed package, the fix names it;
- NumPy 1.24 removed the aliases ``np.float``, ``np.int``, ``np.bool``, ``np.object``, ``np.str``, ``np.complex``
  (deprecated in 1.20);
- Lightning 1.8 removed the ``LightningModule``/``Callback`` hooks ``on_epoch_start``/``on_epoch_end`` (and
  ``on_batch_*``, ``on_pretrain_routine_*``), and 2.0 removed ``training_epoch_end``/``validation_epoch_end``/
  ``test_epoch_end``: ``trainer/configuration_validator.py`` raises "The `LightningModule.{hook}` hook was removed
  in v1.8. Please use `LightningModule.{alternative}` instead." (1.8-1.9) and "Support for `{hook}` has been
  removed in v2.0.0. `{Model}` implements this method. You can use the `on_{hook}` hook instead." (2.x) for
  a module that still defines them: nothing else prints either;
- torchmetrics 0.11 made ``task`` the required first argument of its task wrappers (``Accuracy``, ``AUROC``,
  ``F1Score``, ``ConfusionMatrix``... are classes whose ``__new__(cls, task, ...)`` builds the binary,
  multiclass or multilabel metric) and of the functional metrics; CPython's "{}() missing 1 required positional
  argument: 'task'" for a ``__new__`` is likely that (other functions take a ``task`` too), certain with a
  metric's name on the line;
- transformers 3.0 made ``tokenizer.max_len`` a read-only property (``tokenization_utils_base.py``: "The
  `max_len` attribute has been deprecated ... use `model_max_length` instead", no setter: assigning it raises
  "can't set attribute") and 4.0 removed it ("'{}Tokenizer' object has no attribute 'max_len'"); a reading is
  only likely, since a library's own stale code (transformers' ``glue.py`` until huggingface/transformers#10220)
  reads it too;
- peft 0.8 added ``target_modules="all-linear"`` (``peft/utils/constants.py`` ``INCLUDE_LINEAR_LAYERS_SHORTHAND``;
  api_history.tsv: first in 0.8.2, absent from 0.7.1); an older peft looks for a module named "all-linear" and
  raises "Target modules all-linear not found in the base model.";
- Pillow dropped ``PIL.PILLOW_VERSION`` (``PIL/__init__.py``: "PILLOW_VERSION was removed in Pillow 9.0.0";
  7.0.0 had dropped it once), which torchvision before 0.5.0 imports in ``transforms/functional.py``;
- Lightning 1.2.0 to 1.7.x exported its training-type plugins from ``pytorch_lightning.plugins`` (``DDPPlugin``,
  ``DDPSpawnPlugin``, ``DataParallelPlugin``, ...; ``DDPFullyShardedPlugin`` from 1.4.0): 1.6 deprecated them for
  ``pytorch_lightning.strategies``' ``*Strategy`` classes ("The `pl.plugins.training_type.ddp_spawn.DDPSpawnPlugin`
  is deprecated in v1.6 and will be removed in v1.8") and 1.8.0 removed them; before 1.2.0 they did not exist. So
  "cannot import name 'DDPSpawnPlugin'" is a Lightning older than 1.2 or newer than 1.7 (the tags' ``plugins/
  __init__.py``);
- Lightning 2.0 dropped strategies it registered in 1.9.5 (``strategy_registry.register`` in ``strategies/*.py``:
  ``dp``, ``ddp_sharded``, ``ddp_sharded_spawn`` and their ``_find_unused_parameters_false``, ``ddp_fully_sharded``,
  ``fsdp_native``, ``horovod``, ``bagua``, ``colossalai``, ``tpu_spawn``): for those names the accelerator
  connector's "You selected an invalid strategy name: `strategy='dp'`" is a Lightning newer than the code, not a
  misspelling (any other name is trainer_arguments.py's reading);
- NVIDIA apex removed ``apex.amp``, ``apex.parallel`` (its DistributedDataParallel and SyncBatchNorm) and
  ``apex.RNN`` on 2025-05-08 (NVIDIA/apex#1896, commit cb65b8e: "remove old features: amp, ddp, and rnn"; the tag
  25.05 still has them, 25.07 does not), long deprecated for torch.amp and torch's own DDP. CPython's "cannot
  import name 'amp' from 'apex'" is that, or another package named apex (PyPI's "apex" is not NVIDIA's): read
  through the generic anchor, so only likely;
- torch 2.0 removed ``torch._six`` (pytorch/pytorch#94709), which DeepSpeed imported unconditionally until 0.8.2
  (``runtime/utils.py``, ``zero/stage3.py``, ``stage_1_and_2.py``; deepspeedai/DeepSpeed#2863 falls back to
  ``torch.inf``), and names came in known releases (``torch.device``,
  ``torch.no_grad``, ``torch.float32`` in 0.4.0; ``torch.argsort``, ``torch.tensordot`` in 1.0.0;
  ``torch.nn.Identity`` in 1.1.0; ``torch.cuda.amp`` in 1.6.0; ``torch.fx`` in 1.8.0; ``torch.compile`` in 2.0.0);
- flash-attn 2.0 renamed the variable-length functions of ``flash_attn/flash_attn_interface.py``,
  ``flash_attn_unpadded_func`` to ``flash_attn_varlen_func`` (and the ``_qkvpacked``/``_kvpacked`` ones alike), with
  the same arguments (its README's "Upgrading from FlashAttention (1.x)"); packages written for 1.x import the old
  name (transformer-engine's ``attention.py`` picks the 2.x name by flash-attn's version only in later releases).

`change(text)` says which of them a message is: versions.py's ``dependency_version`` leads with it.
"""

from __future__ import annotations

from torchdoctor.explain.kinds import api_keywords
from torchdoctor.explain.recognisers import Pattern

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

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
# flash-attn 1.x's variable-length functions and their flash-attn 2.0 names
FLASH_ATTN_2_NAMES = {
    "flash_attn_unpadded_func": "flash_attn_varlen_func",
    "flash_attn_unpadded_qkvpacked_func": "flash_attn_varlen_qkvpacked_func",
    "flash_attn_unpadded_kvpacked_func": "flash_attn_varlen_kvpacked_func",
}

# Lightning 1.2-1.7's training-type plugins (pytorch_lightning/plugins/__init__.py) and the 1.6+ class each became;
# accelerate has a DeepSpeedPlugin and other packages their own SingleDevicePlugin/ParallelPlugin: not read
LIGHTNING_PLUGINS = {
    "DDPPlugin": "DDPStrategy",
    "DDPSpawnPlugin": "DDPSpawnStrategy",
    "DataParallelPlugin": "DataParallelStrategy",
    "DDPShardedPlugin": "DDPShardedStrategy",
    "DDPSpawnShardedPlugin": "DDPSpawnShardedStrategy",
    "DDP2Plugin": "DDP2Strategy",
    "DDPFullyShardedPlugin": "DDPFullyShardedStrategy",
    "HorovodPlugin": "HorovodStrategy",
    "TPUSpawnPlugin": "TPUSpawnStrategy",
    "SingleTPUPlugin": "SingleTPUStrategy",
    "TrainingTypePlugin": "Strategy",
}
# the strategies Lightning 1.9.5 registers and 2.0.0 does not, and what 2.0 offers instead
LIGHTNING_STRATEGIES_GONE = {
    "dp": "strategy='ddp' (DataParallel is gone: one process per GPU, launched by the Trainer or torchrun)",
    "ddp_sharded": "strategy='fsdp' (fairscale's sharding is gone)",
    "ddp_sharded_find_unused_parameters_false": "strategy='fsdp'",
    "ddp_sharded_spawn": "strategy='fsdp'",
    "ddp_sharded_spawn_find_unused_parameters_false": "strategy='fsdp'",
    "ddp_fully_sharded": "strategy='fsdp'",
    "fsdp_native": "strategy='fsdp'",
    "fsdp_native_full_shard_offload": "strategy='fsdp_cpu_offload'",
    "horovod": "strategy='ddp' (Horovod support is gone)",
    "bagua": "strategy='ddp' (or the lightning-bagua package)",
    "colossalai": "the lightning-colossalai package's strategy",
    "tpu_spawn": "strategy='xla' (with accelerator='tpu')",
    "tpu_spawn_debug": "strategy='xla_debug'",
}

# torchmetrics' task wrappers: with one of these names before __new__ the missing task is certainly theirs
METRIC_WRAPPERS = (
    "Accuracy",
    "AUROC",
    "F1Score",
    "FBetaScore",
    "Precision",
    "Recall",
    "ConfusionMatrix",
    "AveragePrecision",
    "Specificity",
    "StatScores",
    "JaccardIndex",
    "ROC",
)
_TASK_MISSING = "() missing 1 required positional argument: 'task'"
# the anchors of these releases' messages (versions.py's DEPENDENCY_VERSION lists them)
ANCHORS = (
    "hook was removed in v1.8",
    "has been removed in v2.0.0.",
    *(f"{name}.__new__{_TASK_MISSING}" for name in METRIC_WRAPPERS),
    "__new__" + _TASK_MISSING,
    *(f"{name}{_TASK_MISSING}" for name in ("accuracy", "auroc", "f1_score", "precision", "recall")),
    "object has no attribute 'max_len'",
    "tokenizer.max_len =",
    "Target modules all-linear not found in the base model",
    "cannot import name 'PILLOW_VERSION'",
    *(f"cannot import name '{name}'" for name in LIGHTNING_PLUGINS),
    "You selected an invalid strategy name",
)
# printed for other causes too: a bare __new__ or a function of the user's own taking a task; max_len read by a
# library's own stale code (the `also` below)
GENERIC = (
    "__new__" + _TASK_MISSING,
    *(f"{name}{_TASK_MISSING}" for name in ("accuracy", "auroc", "f1_score", "precision", "recall")),
    "object has no attribute 'max_len'",
)
TEMPLATES = (
    "third_party:lightning-hook-removed-in-1-8",
    "third_party:lightning-callback-hook-removed-in-1-8",
    "third_party:lightning-epoch-end-removed-in-2-0",
    # the same check as Lightning 2.6's configuration_validator.py spells it, read from that file
    "lightning:support-for-training-epoch-end-has",
    "lightning:support-for-validation-epoch-end-has",
    "lightning:support-for-has-been-removed-in",
    "third_party:torchmetrics-task-missing",
    "third_party:transformers-tokenizer-max-len",
    "third_party:peft-target-modules-not-found",
    "lightning:you-selected-an-invalid-strategy-name",
)
MAX_LEN_IN_LIBRARY = (
    "library_version_bug",
    "a library's own code still reading tokenizer.max_len (transformers' glue.py before 4.4)",
    "Upgrade the package whose frame reads tokenizer.max_len (pip install -U <package>; transformers 4.4 fixed "
    "glue_convert_examples_to_features, huggingface/transformers#10220), or pass max_length= to it explicitly.",
)

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
    # pandas 2.0 deleted pandas/core/indexes/numeric.py (Int64Index, UInt64Index, Float64Index, NumericIndex:
    # pandas-dev/pandas#51139, the 2.0 release notes' removals): a pickle made under pandas 1.x that holds such an
    # index names that module, which pandas 2 cannot import
    rf"No module named {_Q}(?P<pandas_numeric>pandas\.core\.indexes\.numeric){_Q}|"
    rf"No module named {_Q}(?P<torch_six>torch\._six){_Q}|module {_Q}torch{_Q} has no attribute {_Q}(?P<torch_six2>_six){_Q}|"
    rf"cannot import name {_Q}(?P<torch_six_name>container_abcs|int_classes|string_classes){_Q}|"
    rf"The `(?P<lightning18_owner>LightningModule|Callback)\.(?P<lightning18_hook>\w{{1,40}})` hook was removed in v1\.8|"
    rf"Support for `(?P<lightning20_hook>training_epoch_end|validation_epoch_end|test_epoch_end)` has been removed "
    rf"in v2\.0\.0|"
    rf"(?P<tm_call>\b\w{{1,40}}\.__new__|\b__new__|\b(?:accuracy|auroc|f1_score|fbeta_score|precision|recall|"
    rf"specificity|confusion_matrix|average_precision|stat_scores|jaccard_index|roc))\(\) missing 1 required "
    rf"positional argument: {_Q}task{_Q}|"
    rf"{_Q}(?P<tok_class>\w{{0,40}}Tokenizer\w{{0,10}}){_Q} object has no attribute {_Q}max_len{_Q}|"
    rf"(?P<tok_set>tokenizer\.max_len\s?=[^\n]{{1,80}}\n[^\n]{{0,40}}can{_Q}t set attribute)|"
    rf"Target modules (?P<peft_all_linear>all-linear) not found in the base model|"
    rf"cannot import name {_Q}(?P<pillow_version>PILLOW_VERSION){_Q} from {_Q}PIL|"
    rf"cannot import name {_Q}(?P<apex_removed>amp|parallel|RNN){_Q} from {_Q}apex{_Q}|"
    rf"module {_Q}apex{_Q} has no attribute {_Q}(?P<apex_removed2>amp|parallel|RNN){_Q}|"
    rf"cannot import name {_Q}(?P<pl_plugin>{'|'.join(LIGHTNING_PLUGINS)}){_Q}(?: from {_Q}pytorch_lightning[\w.]{{0,60}}{_Q})?|"
    rf"invalid strategy name: `?strategy={_Q}(?P<pl_strategy>{'|'.join(LIGHTNING_STRATEGIES_GONE)}){_Q}`?|"
    rf"(?:cannot import name {_Q}|module {_Q}flash_attn(?:\.flash_attn_interface)?{_Q} has no attribute {_Q})"
    rf"(?P<flash_attn_1_name>{'|'.join(FLASH_ATTN_2_NAMES)}){_Q}|"
    rf"module {_Q}(?P<torch_module>torch(?:\.nn|\.cuda)?){_Q} has no attribute "
    rf"{_Q}(?P<torch_added>{'|'.join(sorted({n.rsplit('.', 1)[1] for n in TORCH_ADDED}))}){_Q}"
)


# installed packages that import torchtext's old data API themselves: the releases that do, and the fix
TORCHTEXT_IMPORTERS = {
    "pytorch_lightning": (
        "pytorch-lightning 1.2.3 to 1.5.9 import torchtext.legacy.data in utilities/apply_func.py whenever "
        "torchtext 0.9 or newer is installed (up to 1.2.2, torchtext.data's Batch, which 0.9 moved)",
        "pip install 'pytorch-lightning>=1.5.10' (1.5.10 imports it only for a torchtext older than 0.11: "
        "Lightning#10724), or the newest release the project allows",
    ),
}


def _torchtext_legacy(facts: dict) -> tuple[str, str]:
    """torchtext's old data API missing, and who imports it: an installed package whose frame raised (named,
    with its releases where they are known), else the code."""
    name = facts.get("torchtext_legacy") or facts.get("torchtext_legacy2") or "torchtext.legacy"
    keep = (
        "install a torchtext that still has it, with the torch it was built for: torchtext 0.10.0 with torch "
        "1.9.0 (or 0.11 with torch 1.10), importing from torchtext.legacy.data, or torchtext 0.8 with torch 1.7 "
        "for the old torchtext.data path"
    )
    importer = facts.get("raised_in_package")
    if importer and importer != "torchtext":
        releases, upgrade = TORCHTEXT_IMPORTERS.get(
            importer, (f"pip show {importer} names the release installed", f"pip install -U {importer}")
        )
        return (
            f"the installed {importer} imports torchtext's old data API ({name}), which torchtext 0.9.0 moved to "
            "torchtext.legacy and 0.12.0 removed: that release of it is older than the installed torchtext",
            f"It is {importer}'s own import, not your code's: {releases}. Upgrade it to a release written for "
            f"this torchtext: {upgrade}. Or keep it and {keep}.",
        )
    known = "; ".join(releases for releases, _ in TORCHTEXT_IMPORTERS.values())
    return (
        f"the code uses torchtext's old data API ({name}), which torchtext 0.9.0 moved to torchtext.legacy "
        "and 0.12.0 removed: the installed torchtext is newer than the code",
        f"{keep[0].upper() + keep[1:]}. Or port the data pipeline to torchtext's new API (its legacy_tutorial "
        "migration notebook). If the import is not in your code but in an installed package (the traceback's "
        f"innermost frame names it; {known}), upgrade that package instead: "
        + "; ".join(upgrade for _, upgrade in TORCHTEXT_IMPORTERS.values())
        + ".",
    )


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for the known API change among ``facts`` (the named groups of `CHANGE`), else None."""
    if facts.get("lightning_flag"):
        flag = facts["lightning_flag"]
        return (
            f"the code passes Trainer({flag}=...), a flag Lightning 2.0 removed: the installed Lightning is newer "
            "than the code",
            f"Lightning 2.0 removed Trainer's {flag}: pass {LIGHTNING_FLAGS[flag]} instead, or install the "
            "Lightning the code was written for (pip install 'pytorch-lightning<2.0': 1.9.5 is the last 1.x, or "
            "the version its requirements pin).",
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
        return _torchtext_legacy(facts)
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
    if facts.get("pandas_numeric"):
        return (
            "pandas 2 met a reference to pandas.core.indexes.numeric, the module of Int64Index / Float64Index that "
            "pandas 2.0 removed: what is unpickled was written under pandas 1.x",
            "A pickle (a dataset file, a cached DataFrame or Series) saved under pandas 1.x with a numeric index "
            "names pandas.core.indexes.numeric, which the pandas 2 installed here lacks: install the pandas it was "
            "written with to read it (pip install 'pandas<2', 1.5.3 is the last 1.x), or once, under pandas 1.x, "
            "convert the file to a format without pickled classes (df.reset_index().to_parquet(...) or to_csv) "
            "and read that under pandas 2.",
        )
    if facts.get("lightning18_hook") or facts.get("lightning20_hook"):
        return _lightning_hook(facts)
    if facts.get("tm_call"):
        call = facts["tm_call"]
        return (
            f"{call}() is called without task, the argument torchmetrics 0.11 made required: the installed "
            "torchmetrics is newer than the code",
            "Pass the task where the metric is built: Accuracy(task='multiclass', num_classes=<the number of "
            "classes>) (or task='binary', or task='multilabel' with num_labels=...); the functional metrics take "
            "it too: accuracy(preds, target, task='multiclass', num_classes=...). Or use the class of that task "
            "directly (MulticlassAccuracy(num_classes=...)), or install the torchmetrics the code was written for "
            "(pip install 'torchmetrics<0.11').",
        )
    if facts.get("tok_class") or facts.get("tok_set"):
        reader = facts.get("tok_class")
        what = f"{reader}.max_len is read" if reader else "tokenizer.max_len is assigned"
        return (
            f"{what}, an attribute transformers 3.0 made read-only and 4.0 removed (renamed model_max_length): "
            "the installed transformers is newer than the code using it",
            "Use tokenizer.model_max_length instead of tokenizer.max_len, in the script or in the package that "
            "reads it (upgrade that package: transformers' own glue.py read it until 4.4, "
            "huggingface/transformers#10220), or pull the project's latest code if it has moved on; or install "
            "the transformers the code pins (max_len can be assigned up to 2.x and read up to 3.x).",
        )
    if facts.get("peft_all_linear"):
        return (
            'target_modules="all-linear" reached a peft older than 0.8, which has no such shorthand and looks '
            'for a module named "all-linear"',
            "Upgrade peft (pip install -U 'peft>=0.8'), or list the linear layers to adapt by their names in the "
            "model: target_modules=['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] "
            "for Llama-style models (print(model) shows them).",
        )
    if facts.get("flash_attn_1_name"):
        old_name = facts["flash_attn_1_name"]
        new_name = FLASH_ATTN_2_NAMES[old_name]
        return (
            f"the code uses {old_name}, flash-attn 1.x's name that flash-attn 2.0 renamed {new_name}: the "
            "installed flash-attn is newer than the code",
            f"Call {new_name} instead (the same arguments): from flash_attn.flash_attn_interface import "
            f"{new_name}. Where an installed package imports the old name (an older transformer-engine, a model's "
            "remote code), upgrade it to a release written for flash-attn 2 (pip install -U <that package>); or "
            "install flash-attn 1.x, which has the old name: pip install 'flash-attn<2'.",
        )
    if facts.get("apex_removed") or facts.get("apex_removed2"):
        part = facts.get("apex_removed") or facts["apex_removed2"]
        return (
            f"apex.{part} is gone from the installed apex: NVIDIA removed amp, parallel and RNN in May 2025 "
            "(NVIDIA/apex#1896; the tag 25.05 is the last with them), so the apex is newer than the code",
            "Use PyTorch's own: torch.autocast and torch.amp.GradScaler (torch.cuda.amp before torch 2.3) for "
            "amp.initialize / amp.scale_loss, torch.nn.parallel.DistributedDataParallel and "
            "torch.nn.SyncBatchNorm for apex.parallel. Or build apex at a commit that still has it: git clone "
            "https://github.com/NVIDIA/apex && cd apex && git checkout 25.05, then its pip install. A library "
            "that imports apex.amp only because apex is installed (an older transformers Trainer): upgrade it, "
            "or pip uninstall apex when nothing needs it.",
        )
    if facts.get("pl_plugin"):
        plugin = facts["pl_plugin"]
        return (
            f"the code imports {plugin}, a Lightning training-type plugin that exists only from Lightning 1.2 to "
            "1.7: the installed Lightning is older or newer than the code",
            f"pip show pytorch-lightning names the release installed. Newer than 1.7: use "
            f"pytorch_lightning.strategies.{LIGHTNING_PLUGINS[plugin]} (Trainer(strategy=...)), in the code or "
            "by upgrading the package that imports the plugin, or pin pip install 'pytorch-lightning>=1.2,<1.8'. "
            "Older than 1.2: upgrade it (pip install 'pytorch-lightning>=1.2'), or the version the code's "
            "requirements pin.",
        )
    if facts.get("pl_strategy"):
        strategy = facts["pl_strategy"]
        return (
            f"the code asks for strategy='{strategy}', which Lightning 1.9 registered and 2.0 removed: the "
            "installed Lightning is newer than the code",
            f"Use {LIGHTNING_STRATEGIES_GONE[strategy]} with Lightning 2.x, or install the Lightning the code was "
            "written for: pip install 'pytorch-lightning<2.0' (1.9.5 is the last release with it).",
        )
    if facts.get("pillow_version"):
        return (
            "the code imports PIL.PILLOW_VERSION, which the installed Pillow no longer has (Pillow 7.0.0 dropped "
            "it, 9.0.0 for good): torchvision before 0.5.0 imports it",
            "Upgrade torchvision to 0.5.0 or newer, with the torch it was built for (pip install -U torchvision), "
            "or whatever package imports PILLOW_VERSION (it should use PIL.__version__); or pin Pillow below 7 "
            "(pip install 'pillow<7') for the old torchvision.",
        )
    if facts.get("torch_six_name"):
        name = facts["torch_six_name"]
        return (
            f"the code imports {name}, a name of torch._six that newer torch releases dropped (torch 2.0 removed "
            "torch._six altogether): the package importing it was written for an older torch",
            f"Upgrade the package that imports {name} from torch._six to a release written for your torch (timm "
            "0.3.x imports it, timm 0.4.12 does not: pip install 'timm>=0.4.12'; old apex and mmcv releases did "
            "too), or replace the import: collections.abc for "
            "container_abcs, int for int_classes, str for string_classes; or install the torch the code pins.",
        )
    if facts.get("torch_six") or facts.get("torch_six2"):
        return (
            "torch is installed but has no module torch._six: torch 2.0 removed it, and the code importing it "
            "was written for torch 1.x",
            "Replace what it took from torch._six: from torch import inf for torch._six.inf, str for "
            "string_classes, int for int_classes, collections.abc for container_abcs; or upgrade the package "
            "that imports it to a release written for torch 2 (DeepSpeed before 0.8.2 does: pip install -U "
            "'deepspeed>=0.8.2', deepspeedai/DeepSpeed#2863; apex, old timm and mmcv releases did), or install "
            "the torch 1.x the code pins.",
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


# Lightning's removed hooks and what replaces them (trainer/configuration_validator.py, 1.8-1.9 and 2.x)
_LIGHTNING_HOOKS = {
    "training_epoch_end": "on_train_epoch_end",
    "validation_epoch_end": "on_validation_epoch_end",
    "test_epoch_end": "on_test_epoch_end",
    "on_epoch_start": "on_train_epoch_start / on_validation_epoch_start",
    "on_epoch_end": "on_train_epoch_end / on_validation_epoch_end",
    "on_batch_start": "on_train_batch_start",
    "on_batch_end": "on_train_batch_end",
    "on_pretrain_routine_start": "on_fit_start",
    "on_pretrain_routine_end": "on_fit_start",
}


def _lightning_hook(facts: dict) -> tuple[str, str]:
    hook = facts.get("lightning20_hook") or facts["lightning18_hook"]
    release = "2.0" if facts.get("lightning20_hook") else "1.8"
    instead = _LIGHTNING_HOOKS.get(hook, "its on_<train/validation/test>_... replacement")
    outputs = (
        " The new hook gets no outputs argument: append what validation_step/training_step returns to a list "
        "attribute in the step, read and clear it in the hook (Lightning-AI/lightning#16520 shows the migration)."
        if facts.get("lightning20_hook")
        else ""
    )
    return (
        f"the model (or a callback) defines {hook}, a hook Lightning {release} removed: the installed Lightning "
        "is newer than the code",
        f"Rename {hook} to {instead} in the LightningModule or callback.{outputs} Or install the Lightning the "
        f"code was written for (pip install 'pytorch-lightning<{release}', or the version its requirements pin).",
    )
