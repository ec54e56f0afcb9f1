"""Releases of trainer and data libraries that changed what training code calls.

Each is read from what its source prints (release_changes.py's companion: versions.py's ``dependency_version``
leads with either).

- trl's trainers read their options from trl's own config classes: ``trl/trainer/dpo_trainer.py`` (and
  ``sft_trainer.py``, ``kto_trainer.py``, ``bco_trainer.py``, ``orpo_trainer.py``... from trl 0.9) does
  ``if args.model_init_kwargs is None:`` (``ref_model_init_kwargs`` for a reference model), names that only
  ``DPOConfig``, ``SFTConfig`` and their siblings define; BCO's even refuses with "Please use `BCOConfig` instead
  `TrainingArguments`". "'TrainingArguments' object has no attribute 'model_init_kwargs'" is a trl trainer given
  transformers' TrainingArguments: code written for a trl before the configs took the options. Certain;
- webdataset (after 0.2.90; 0.2.95 and 0.2.96 carry it) makes ``tar_file_expander`` yield an end-of-shard marker,
  ``eof_value: Optional[Any] = {}`` (``webdataset/tariterators.py``: "we yield an EOF marker at the end of each
  shard so that samples from different shards don't get mixed up"). OpenCLIP's training data code, and the many
  projects that copied it, calls that expander and then reads every item as a file
  (``group_by_keys_nothrow``: ``fname, value = filesample["fname"], filesample["data"]``), so the empty marker
  raises ``KeyError: 'fname'``. That source line is printed for nothing else; certain with the KeyError beside it;
- pandas 1.4 deprecated ``DataFrame.append`` and ``Series.append`` ("The frame.append method is deprecated and will
  be removed from pandas in a future version. Use pandas.concat instead.", ``pandas/core/frame.py``) and pandas
  2.0.0 removed them (with ``iteritems``, deprecated in 1.5): "'DataFrame' object has no attribute 'append'" is
  code written for pandas 1.x. A Spark or polars DataFrame has no ``append`` either and prints the same words, so
  it is certain only with pandas in the log;
- fsspec 2023.10.0 made ``LocalFileSystem.protocol`` the tuple ``("file", "local")``; datasets releases before it
  took a cache as remote when ``fs.protocol != "file"`` (``datasets/filesystems/__init__.py``
  ``is_remote_filesystem``), and ``DatasetBuilder.as_dataset`` (``datasets/builder.py``) then refuses the local
  cache: "Loading a dataset cached in a LocalFileSystem is not supported." Later datasets test
  ``isinstance(fs, LocalFileSystem)``. A local filesystem is never refused otherwise: certain;
- fsspec 2023.12.0 rewrote its glob (``fsspec/utils.py`` ``glob_translate``) and refuses a ``**`` that is not a
  whole path component: "Invalid pattern: '**' can only be an entire path component". The data-file patterns of
  datasets before 2.18.0 (``datasets/data_files.py``, "**[-._ 0-9/]train[-._ 0-9]*" and the like) have one, so
  ``load_dataset`` of any Hub dataset without a loading script fails there; 2.18.0 (#6687) reads the new globs.
  datasets 2.14.6 to 2.17 pin ``fsspec<=2023.10.0``, and 2.14.5 and earlier set no upper bound: an old datasets
  beside a newer fsspec (another package's requirement pulled it). CPython's pathlib prints the same words for a
  pattern of the code's own (``Path.glob('a**')``, before 3.13): certain only with fsspec or datasets in the log;
 ``datasets/load.py`` (``dataset_module_factory``) raises "Dataset scripts
  are no longer supported, but found <name>.py" for a local folder or a Hub repository whose loader is a Python
  script (the 3.x releases ran it after ``trust_remote_code=True``). The code or the dataset was written for
  datasets 3.x: certain;
- Lightning refuses a scheduler that is not an instance of ``LRSchedulerTypeTuple`` unless the LightningModule
  overrides ``lr_scheduler_step`` (``pytorch_lightning/core/optimizer.py`` ``_validate_scheduler_api``, 1.6 on):
  "The provided lr scheduler `{}` doesn't follow PyTorch's LRScheduler API". Up to pytorch_lightning 1.8.3 the
  tuple was ``(torch.optim.lr_scheduler._LRScheduler, ReduceLROnPlateau)`` (``pytorch_lightning/utilities/types.py``);
  torch 2.0 made ``LRScheduler`` the base of its schedulers (api_history.tsv: torch.optim.lr_scheduler.LRScheduler
  from the 2.0 release), ``_LRScheduler`` a subclass kept for old code, so torch's own StepLR is no longer one.
  1.8.4 imports ``LRScheduler`` when torch has it ("Fixed LRScheduler import for PyTorch 2.0", #15940). A class
  named in ``torch/optim/lr_scheduler.py``'s ``__all__`` is torch's, never the custom scheduler the message means:
  certain; any other class (timm's, a script's own) is left to the hook the message names.

- transformers 4.31 to 4.42 check ``rope_scaling`` as a two-field dict (``models/llama/configuration_llama.py``
  ``_rope_scaling_validation``: "`rope_scaling` must be a dictionary with two fields, `type` and `factor`, got
  {...}"); 4.43 introduced the ``rope_type`` form Llama 3.1 ships ({'factor': 8.0, 'low_freq_factor': 1.0, ...,
  'rope_type': 'llama3'}). Certain where the dict printed has ``rope_type``; a hand-written two-field dict with a
  mistake prints the same words: likely.

- webdataset 0.2 rebuilt its API on ``DataPipeline`` and dropped the 0.1 ``Composable`` helpers: 0.1's
  ``ddp_equalize`` (``webdataset/dataset.py``, "Use with `loader = loader.ddp_equalize(number_of_batches)`", the
  multinode documentation's recipe) is on none of 0.2's ``WebDataset``, ``WebLoader``, ``DataPipeline`` or
  ``FluidWrapper``, whose ``with_epoch(n)`` does its job. CPython's "'WebLoader' object has no attribute
  'ddp_equalize'" on one of those classes is code written for 0.1 run with 0.2 or later; nothing else prints it:
  certain;
- OGB's dataset classes (``ogb/graphproppred/dataset_pyg.py``, ``dataset_dgl.py``, ``dataset.py`` and the
  nodeproppred, linkproppred and lsc ones alike; LRGB's and DGL's copies say the same) check the release tag of a
  dataset folder already on disk (``RELEASE_v<version>.txt``, the version from the installed ogb's master.csv) and,
  where it is not the one this ogb expects, print "<name> has been updated." and ask ``input('Will you update the
  dataset now? (y/N)')``. A batch job, a launcher's worker or anything else without a terminal on its standard
  input ends there with CPython's "EOFError: EOF when reading a line": the copy on disk and the installed ogb are
  of different releases. Certain with the EOFError in the log; the question alone (answered at a terminal) is no
  failure. ogb's other question, "This will download <n>GB. Will you proceed? (y/N)" (``ogb/utils/url.py``
  ``decide_download``), is a first download of a large dataset, not a release: not read here.

`change(facts)` says which of them a line is; `decisive(facts, ctx)` whether the log makes it certain.
"""

from __future__ import annotations

from torchdoctor.explain.kinds import api_history
from torchdoctor.explain.recognisers import Pattern

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_Q = "'"
# what pandas 2.0 removed from DataFrame and Series, and what replaces it
PANDAS_REMOVED = {
    "append": "pd.concat([df, other], ignore_index=True) (one row: pd.concat([df, pd.DataFrame([row])]))",
    "iteritems": "items()",
}
WEBDATASET_LINE = 'fname, value = filesample["fname"], filesample["data"]'
LOCAL_CACHE = "Loading a dataset cached in a LocalFileSystem is not supported"
FSSPEC_GLOB = "Invalid pattern: '**' can only be an entire path component"
NO_SCRIPTS = "Dataset scripts are no longer supported"
NOT_LRSCHEDULER = "doesn't follow PyTorch's LRScheduler"
# transformers 4.31-4.42's LlamaConfig._rope_scaling_validation (and the configs copied from it), as printed and as
# pasted without its backticks
# webdataset 0.2's classes (webdataset/compat.py, pipeline.py): the 0.1 name code written for the old API calls
WDS_CLASSES = ("WebLoader", "WebDataset", "DataPipeline", "FluidWrapper")
WDS_EQUALIZE = tuple(f"'{owner}' object has no attribute 'ddp_equalize'" for owner in WDS_CLASSES)
# ogb's question about a dataset folder of another release (and the copies of it in LRGB and DGL)
OGB_UPDATE = "Will you update the dataset now?"
ROPE_SCALING = (
    "`rope_scaling` must be a dictionary with two fields",
    "rope_scaling must be a dictionary with two fields",
)
# the classes torch/optim/lr_scheduler.py's __all__ lists, 1.x to 2.x (ReduceLROnPlateau aside: Lightning's tuple
# names it itself)
TORCH_SCHEDULERS = (
    "LambdaLR|MultiplicativeLR|StepLR|MultiStepLR|ConstantLR|LinearLR|ExponentialLR|SequentialLR|"
    "CosineAnnealingLR|ChainedScheduler|CyclicLR|CosineAnnealingWarmRestarts|OneCycleLR|PolynomialLR"
)
ANCHORS = (
    "'TrainingArguments' object has no attribute 'model_init_kwargs'",
    "'TrainingArguments' object has no attribute 'ref_model_init_kwargs'",
    WEBDATASET_LINE,
    *(
        f"'{owner}' object has no attribute '{name}'"
        for owner in ("DataFrame", "Series")
        for name in PANDAS_REMOVED
    ),
    LOCAL_CACHE,
    FSSPEC_GLOB,
    NOT_LRSCHEDULER,
    NO_SCRIPTS,
    *ROPE_SCALING,
    *WDS_EQUALIZE,
    OGB_UPDATE,
)
# printed for other causes too: another library's DataFrame without append, the marker's line without its KeyError
GENERIC = (
    WEBDATASET_LINE,
    *(
        f"'{owner}' object has no attribute '{name}'"
        for owner in ("DataFrame", "Series")
        for name in PANDAS_REMOVED
    ),
    # a rope_scaling of the two-field form's own mistakes prints it too: certain with the newer form's rope_type
    *ROPE_SCALING,
    # the question answered at a terminal is no failure: certain with the EOFError it ends a job without one on
    OGB_UPDATE,
    # pathlib's glob refuses a pattern of the code's own in the same words: certain with fsspec or datasets
    FSSPEC_GLOB,
)
TEMPLATES = (
    "third_party:trl-trainer-given-training-arguments",
    "third_party:webdataset-eof-marker-in-group-by-keys",
    "third_party:pandas-2-removed-frame-append",
    "third_party:datasets-local-cache-refused-with-new-fsspec",
    "third_party:fsspec-glob-double-star-component",
    "third_party:lightning-scheduler-not-lrscheduler-api",
    "datasets:dataset-scripts-are-no-longer-supported",
    "third_party:transformers-rope-scaling-two-fields",
    "third_party:webdataset-0-1-ddp-equalize",
    "third_party:ogb-dataset-has-been-updated-prompt",
)
CHANGE = R(
    rf"{_Q}TrainingArguments{_Q} object has no attribute {_Q}(?P<trl_config_field>(?:ref_)?model_init_kwargs){_Q}|"
    r"(?P<wds_eof>fname, value = filesample\[\"fname\"\], filesample\[\"data\"\])|"
    rf"{_Q}(?P<pandas_owner>DataFrame|Series){_Q} object has no attribute "
    rf"{_Q}(?P<pandas_removed>{'|'.join(PANDAS_REMOVED)}){_Q}|"
    rf"(?P<datasets_local_cache>{LOCAL_CACHE})|"
    r"(?P<fsspec_glob>Invalid pattern: '\*\*' can only be an entire path component)|"
    rf"{NO_SCRIPTS}, but found (?P<datasets_script>[^\s{{}}]{{1,200}})|"
    rf"The provided lr scheduler `(?P<pl_torch_scheduler>{TORCH_SCHEDULERS})` {NOT_LRSCHEDULER}|"
    r"`?rope_scaling`? must be a dictionary with two fields, `?type`? and `?factor`?, got (?P<rope_scaling>[^\n]{1,400})|"
    rf"{_Q}(?P<wds_class>{'|'.join(WDS_CLASSES)}){_Q} object has no attribute {_Q}ddp_equalize{_Q}|"
    r"(?P<ogb_update>Will you update the dataset now\?)"
)
# what makes a generic line certain, wherever the log says it: (the line's fact, the log's fact, its literal, pattern)
_DECIDED_BY = (
    ("wds_eof", "saw_fname_keyerror", "KeyError: 'fname'", R(r"(?P<saw_fname_keyerror>KeyError: 'fname')")),
    ("pandas_removed", "saw_pandas", "pandas", R(r"(?P<saw_pandas>\bpandas\b)")),
    # fsspec's glob_translate in the traceback, or datasets' load_dataset above it
    ("fsspec_glob", "saw_fsspec", "fsspec", R(r"(?P<saw_fsspec>\bfsspec[/\\]|datasets[/\\]load\.py)")),
    ("fsspec_glob", "saw_fsspec", "load_dataset", R(r"(?P<saw_fsspec>\bload_dataset\()")),
    (
        "ogb_update",
        "saw_eof_at_input",
        "EOF when reading a line",
        R(r"(?P<saw_eof_at_input>EOFError: EOF when reading a line)"),
    ),
)
CONTEXT = tuple((literal, pattern) for _, _, literal, pattern in _DECIDED_BY)


def decisive(facts: dict, ctx_facts: dict) -> bool:
    """Whether the log makes a generic line of this module certain: the KeyError beside the webdataset line,
    pandas named beside the missing DataFrame method."""
    return any(facts.get(line) and seen in ctx_facts for line, seen, _, _ in _DECIDED_BY) or (
        "rope_type" in facts.get("rope_scaling", "")
    )


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for the release change among ``facts`` (the named groups of `CHANGE`), else None."""
    if facts.get("rope_scaling"):
        upgrade = (
            "Upgrade transformers to 4.43 or newer (pip install -U 'transformers>=4.43'), with the accelerate, "
            "peft and trl releases made for it; vLLM and other packages pinning an older transformers need their "
            "newer release too."
        )
        if "rope_type" in facts["rope_scaling"]:
            return (
                "the checkpoint's config.json gives rope_scaling in the form transformers 4.43 introduced (rope_type "
                "with its own fields, as Llama 3.1 and later ship), which the installed transformers (4.31-4.42) "
                "refuses: it takes only {'type': ..., 'factor': ...}",
                upgrade + " Only to stay on the old transformers: edit rope_scaling in the config to "
                "{'type': 'dynamic', 'factor': 8.0}, which changes the model's long-context behaviour.",
            )
        return (
            "rope_scaling is not the {'type': ..., 'factor': ...} dict the installed transformers (4.31-4.42) takes: "
            "a config written for a later transformers, or a rope_scaling of the config's own missing a field",
            "Give rope_scaling both fields, {'type': 'linear' or 'dynamic', 'factor': 2.0}, or, for a checkpoint "
            "whose config uses the newer rope_type form: " + upgrade,
        )
    if facts.get("trl_config_field"):
        field = facts["trl_config_field"]
        return (
            f"a trl trainer read args.{field}, which only trl's own config classes have: it was given "
            "transformers' TrainingArguments, as code written for an older trl did",
            "Build the trainer's arguments with its trl config class, which takes every TrainingArguments "
            "option too: DPOTrainer(args=DPOConfig(output_dir=..., beta=0.1, ...)), SFTTrainer(args=SFTConfig(...)), "
            "KTOConfig, ORPOConfig, BCOConfig, GRPOConfig for the others (from trl import DPOConfig); move the "
            "options the script passed to the trainer (beta, max_length, max_prompt_length) into it. Or install "
            "the trl the script was written for (pip install 'trl==<its pinned version>').",
        )
    if facts.get("wds_eof"):
        return (
            "the webdataset installed yields an end-of-shard marker ({}) from tar_file_expander, and the training "
            "data code (OpenCLIP's group_by_keys_nothrow, or a copy of it) reads every item as a file: KeyError "
            "'fname'. webdataset after 0.2.90 added the marker; the code was written before it",
            "Pass eof_value=None where the code calls tar_file_expander (OpenCLIP's data.py, "
            "tarfile_to_samples_nothrow), or skip items without a file in group_by_keys_nothrow (if 'fname' not "
            "in filesample: continue), as newer OpenCLIP does: upgrade open_clip_torch. Or pin the webdataset "
            "the code was written for: pip install 'webdataset==0.2.86'.",
        )
    if facts.get("pandas_removed"):
        name, owner = facts["pandas_removed"], facts.get("pandas_owner", "DataFrame")
        return (
            f"the code calls {owner}.{name}, which pandas 1.4-1.5 deprecated and pandas 2.0 removed (likely "
            "pandas; a Spark or polars DataFrame has no such method either): the installed pandas is newer than "
            "the code",
            f"Use {PANDAS_REMOVED[name]} instead of {owner}.{name}, or install the pandas the code was written "
            "for: pip install 'pandas<2' (1.5.3, the last 1.x).",
        )
    if facts.get("datasets_local_cache"):
        return (
            "datasets refused its own local cache: the datasets installed predates fsspec 2023.10, whose "
            "LocalFileSystem.protocol became ('file', 'local'), which that datasets takes for a remote filesystem",
            "Upgrade datasets (pip install -U datasets; the releases from late 2023 on test for LocalFileSystem "
            "itself), or keep the old datasets and pin fsspec below 2023.10: pip install 'fsspec<2023.10.0'.",
        )
    if facts.get("fsspec_glob"):
        return (
            "the glob was refused by fsspec 2023.12 or later ('**' only as a whole path component), and the "
            "datasets installed (before 2.18) builds its data-file patterns with '**' inside one: the fsspec is "
            "newer than that datasets reads",
            "Upgrade datasets: pip install -U 'datasets>=2.18' (it reads fsspec's new globs). Or keep the old "
            "datasets and install the fsspec it was released with: pip install 'fsspec<2023.9.0' (datasets 2.14.5 "
            "and earlier), 'fsspec<=2023.10.0' (2.14.6 to 2.17). If the traceback has no fsspec or datasets frame, "
            "the pattern is the code's own: write '**' as a whole component (data/**/*.json, not data/**.json).",
        )
    if facts.get("datasets_script"):
        script = facts["datasets_script"]
        return (
            f"datasets 4 no longer runs dataset loading scripts, and the dataset loaded is one ({script}): the "
            "installed datasets is newer than the code and the dataset were written for",
            "Install the last release that runs scripts: pip install 'datasets<4.0.0' (3.6.0; with "
            "trust_remote_code=True in load_dataset). Or keep datasets 4 and load the dataset's data files "
            "instead of its script: the Hub's Parquet conversion (load_dataset(name, revision='refs/convert/parquet'"
            "), a revision of the repository without the script, or load_dataset('json' / 'csv' / 'parquet', "
            "data_files=...) on the files the script read.",
        )
    if facts.get("pl_torch_scheduler"):
        return _lightning_before_lrscheduler(facts["pl_torch_scheduler"])
    if facts.get("wds_class"):
        return (
            f"webdataset's {facts['wds_class']} has no ddp_equalize: the code was written for webdataset 0.1 "
            "(its multinode recipe, loader.ddp_equalize(n)), and the webdataset installed is 0.2 or later, whose "
            "API dropped it",
            "On webdataset 0.2 and later use loader.with_epoch(n) (n: batches per rank per epoch, the number the "
            "code handed ddp_equalize), with the shards split between ranks (wds.split_by_node, or resampled=True "
            "with with_epoch); the current webdataset documentation's multinode example shows it. Or install the "
            "release the code was written for: pip install 'webdataset<0.2'.",
        )
    if facts.get("ogb_update"):
        return (
            "ogb asked whether to update a dataset folder already on disk (its release tag is not the one the "
            "installed ogb expects: the copy and the ogb are of different releases), and the job, with no terminal "
            "on its standard input, ended at the question (EOFError)",
            "Make the copy on disk the release the installed ogb expects: run the dataset's constructor once at a "
            "terminal and answer y, or delete the dataset's folder under the root the code gives it so that the job "
            "downloads it anew; with an old ogb, upgrade it first (pip install -U ogb), so that the new copy is the "
            "current release. Do this before launching several ranks, so that they do not all ask, or download, at once.",
        )
    return None


def _lightning_before_lrscheduler(scheduler: str) -> tuple[str, str]:
    row = api_history.lookup("torch.optim.lr_scheduler", "LRScheduler")
    torch_release = ".".join(row.added.split(".")[:2]) if row is not None and row.added else "2.0"
    return (
        f"Lightning refused torch's own {scheduler}: the installed Lightning tests schedulers against torch's old "
        f"_LRScheduler base, and from torch {torch_release} torch's schedulers derive from LRScheduler instead",
        f"The Lightning and the torch installed do not fit: pytorch_lightning before 1.8.4 (lightning_lite's "
        f"1.8.0 to 1.8.3 among them) predates torch {torch_release}. Upgrade Lightning to 1.8.4 or later (pip "
        f"install -U 'pytorch_lightning>=1.8.4', or a release of the library that pins it built for torch "
        f"{torch_release}), or install the torch the code was written for (torch<{torch_release}, a 1.13 or 1.12 "
        "release). Until then, a LightningModule that overrides lr_scheduler_step(self, scheduler, optimizer_idx, "
        "metric) with scheduler.step() gets past the check.",
    )
