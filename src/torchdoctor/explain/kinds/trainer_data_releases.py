"""Releases of trainer and data libraries that changed what training code calls, each read from what their
source prints (release_changes.py's companion: versions.py's ``dependency_version`` leads with either).

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
  ``isinstance(fs, LocalFileSystem)``. A local filesystem is never refused otherwise: certain.

`change(facts)` says which of them a line is; `decisive(facts, ctx)` whether the log makes it certain.
"""

from __future__ import annotations

import re

R = re.compile

_Q = "'"
# what pandas 2.0 removed from DataFrame and Series, and what replaces it
PANDAS_REMOVED = {
    "append": "pd.concat([df, other], ignore_index=True) (one row: pd.concat([df, pd.DataFrame([row])]))",
    "iteritems": "items()",
}
WEBDATASET_LINE = 'fname, value = filesample["fname"], filesample["data"]'
LOCAL_CACHE = "Loading a dataset cached in a LocalFileSystem is not supported"
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
)
# printed for other causes too: another library's DataFrame without append, the marker's line without its KeyError
GENERIC = (
    WEBDATASET_LINE,
    *(
        f"'{owner}' object has no attribute '{name}'"
        for owner in ("DataFrame", "Series")
        for name in PANDAS_REMOVED
    ),
)
TEMPLATES = (
    "third_party:trl-trainer-given-training-arguments",
    "third_party:webdataset-eof-marker-in-group-by-keys",
    "third_party:pandas-2-removed-frame-append",
    "third_party:datasets-local-cache-refused-with-new-fsspec",
)
CHANGE = R(
    rf"{_Q}TrainingArguments{_Q} object has no attribute {_Q}(?P<trl_config_field>(?:ref_)?model_init_kwargs){_Q}|"
    r"(?P<wds_eof>fname, value = filesample\[\"fname\"\], filesample\[\"data\"\])|"
    rf"{_Q}(?P<pandas_owner>DataFrame|Series){_Q} object has no attribute "
    rf"{_Q}(?P<pandas_removed>{'|'.join(PANDAS_REMOVED)}){_Q}|"
    rf"(?P<datasets_local_cache>{LOCAL_CACHE})"
)
# what makes a generic line certain, wherever the log says it: (the line's fact, the log's fact, its literal, pattern)
_DECIDED_BY = (
    ("wds_eof", "saw_fname_keyerror", "KeyError: 'fname'", R(r"(?P<saw_fname_keyerror>KeyError: 'fname')")),
    ("pandas_removed", "saw_pandas", "pandas", R(r"(?P<saw_pandas>\bpandas\b)")),
)
CONTEXT = tuple((literal, pattern) for _, _, literal, pattern in _DECIDED_BY)


def decisive(facts: dict, ctx_facts: dict) -> bool:
    """Whether the log makes a generic line of this module certain: the KeyError beside the webdataset line,
    pandas named beside the missing DataFrame method."""
    return any(facts.get(line) and seen in ctx_facts for line, seen, _, _ in _DECIDED_BY)


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for the release change among ``facts`` (the named groups of `CHANGE`), else None."""
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
    return None
