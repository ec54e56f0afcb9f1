"""Which release of a library accepts which keyword argument, read from the released packages themselves.

`--build` reads the wheels api_history.py downloads (one per minor release, its last patch, cached in
/tmp/v_wheels; `download` fetches any missing) of every package it reads (`READ`: api_history's `MINORS`, and
`KEYWORD_MINORS`: ColossalAI and pytorch-metric-learning, read for their keywords only)
and writes src/torchdoctor/explain/catalog/api_keywords.tsv: for every public class (its ``__init__``) and every
public function of each package (api_callables.py reads them: the same modules api_members.py reads), the
keywords some release accepts and another does not, each with the first release read that accepts it, the last
one that does, the first after it that does not, and the keyword that replaces it where the package's own
deprecation text names one. Read statically with `ast` (the downloaded code is never imported):

- a class's keywords are its ``__init__``'s parameters (positional-or-keyword and keyword-only), or, for a
  ``@dataclass``, its fields and its bases' fields (TrainingArguments, LoraConfig); a class without its own
  ``__init__`` takes its base's, the bases followed through the module's imports within the package;
- a function's are its parameters (torch.load, init_process_group, load_dataset);
- a name defined in several modules of a release with other keywords is undecided there, except the ones
  `CALLABLES` pins to the file a script means (torch.load is torch/serialization.py's, not torch.hub's).

A release whose callable takes ``**kwargs`` raises no TypeError under its name for any keyword (from_pretrained
and load_dataset pass them on), but may refuse it further in (torchmetrics 0.8's Metric raises ValueError): it
says nothing about a keyword it does not name, and a change beside it is not named. Only the releases where the
callable exists and is decided count: a keyword is "missing" from a release only when the callable is there
without it, and a change is named only where the releases on both sides of it were read and decided. A keyword
gone for a while and back has no one release to name and is left out. A ``#namesakes`` line names a callable
with rows that several packages read define (transformers' and Lightning's Trainer, torch's and torchaudio's
load): the log must say which one it is.

    python benchmarks/api_keywords.py --build     # read the cached wheels and write the table
    python benchmarks/api_keywords.py             # the rows per package in the committed table
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import api_callables
from api_callables import ANY, INHERITED
from api_history import MINORS, download, package_files, version_of, write

from torchdoctor.explain.kinds.api_keywords import TABLE, load

_OPTIMIZERS = ("adam", "adamw", "sgd", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "radam", "lbfgs")
_TRL_MODULES = (
    "sft_trainer",
    "sft_config",
    "dpo_trainer",
    "dpo_config",
    "grpo_trainer",
    "grpo_config",
    "reward_trainer",
    "ppo_trainer",
    "ppo_config",
    "kto_trainer",
    "kto_config",
    "orpo_trainer",
    "orpo_config",
)
# the callables the table was first built from (package -> (files, the classes or functions read in them; "*" =
# every public class of the file)): now only where a name is defined in several modules of a release, the file a
# script means by it (`PINNED`: torch.load is torch/serialization.py's), and the tests' record of what was new
CALLABLES: dict[str, list[tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "transformers": [
        (("transformers/training_args.py",), ("TrainingArguments",)),
        (("transformers/training_args_seq2seq.py",), ("Seq2SeqTrainingArguments",)),
        (("transformers/trainer.py",), ("Trainer",)),
        (("transformers/trainer_seq2seq.py",), ("Seq2SeqTrainer",)),
        (("transformers/modeling_utils.py",), ("PreTrainedModel.from_pretrained",)),
    ],
    "accelerate": [(("accelerate/accelerator.py",), ("Accelerator",))],
    "peft": [
        (
            ("peft/tuners/lora.py", "peft/tuners/lora/config.py", "peft/utils/config.py", "peft/config.py"),
            ("LoraConfig",),
        ),
        # mapping_func.py from 0.15 (mapping.py re-exports it there)
        (("peft/mapping_func.py", "peft/mapping.py"), ("get_peft_model",)),
        (("peft/utils/other.py",), ("prepare_model_for_kbit_training",)),
    ],
    "deepspeed": [
        (("deepspeed/__init__.py",), ("initialize",)),
        (("deepspeed/comm/comm.py", "deepspeed/utils/distributed.py"), ("init_distributed",)),
    ],
    "sentence_transformers": [
        (("sentence_transformers/SentenceTransformer.py",), ("SentenceTransformer",)),
        (("sentence_transformers/training_args.py",), ("SentenceTransformerTrainingArguments",)),
        (("sentence_transformers/trainer.py",), ("SentenceTransformerTrainer",)),
    ],
    "datasets": [(("datasets/load.py",), ("load_dataset",))],
    "trl": [
        (
            tuple(f"trl/trainer/{name}.py" for name in _TRL_MODULES),
            (
                "SFTTrainer",
                "SFTConfig",
                "DPOTrainer",
                "DPOConfig",
                "GRPOTrainer",
                "GRPOConfig",
                "RewardTrainer",
                "PPOTrainer",
                "PPOConfig",
                "KTOTrainer",
                "KTOConfig",
                "ORPOTrainer",
                "ORPOConfig",
            ),
        )
    ],
    "pytorch_lightning": [(("pytorch_lightning/trainer/trainer.py",), ("Trainer",))],
    "lightning": [(("lightning/pytorch/trainer/trainer.py",), ("Trainer",))],
    "torch": [
        (("torch/utils/data/dataloader.py",), ("DataLoader",)),
        (("torch/serialization.py",), ("load", "save")),
        (("torch/nn/parallel/distributed.py",), ("DistributedDataParallel",)),
        (("torch/distributed/distributed_c10d.py",), ("init_process_group",)),
        (tuple(f"torch/optim/{name}.py" for name in _OPTIMIZERS), ("*",)),
        (("torch/optim/lr_scheduler.py",), ("*",)),
        # the loss modules: CrossEntropyLoss's label_smoothing came in 1.10 (pytorch/pytorch#63122)
        (("torch/nn/modules/loss.py",), ("*",)),
        (("torch/distributed/fsdp/fully_sharded_data_parallel.py",), ("FullyShardedDataParallel",)),
        (("torch/cuda/amp/grad_scaler.py", "torch/amp/grad_scaler.py"), ("GradScaler",)),
        (("torch/cuda/amp/autocast_mode.py", "torch/amp/autocast_mode.py"), ("autocast",)),
    ],
}
# where a release's deprecation warnings for a callable's keywords are, when not in its own file (Lightning 1.x:
# "Setting `Trainer(gpus=...)` is deprecated in v1.7 ... Please use `Trainer(accelerator='gpu', devices=...)`")
DEPRECATIONS_IN = {"pytorch_lightning": ("pytorch_lightning/trainer/connectors/accelerator_connector.py",)}


# "`evaluation_strategy` is deprecated ... Use `eval_strategy` instead", "Setting `Trainer(gpus=...)` is deprecated
# in v1.7 ... Please use `Trainer(accelerator='gpu', devices=...)` instead": the first name the deprecation text's
# "use `...`" names that the next release accepts
_DEPRECATED = r"[^\n]{0,160}?deprecated[\s\S]{0,300}?[Uu]se (?:the )?`(?P<use>[^`]{1,120})`"


def renamed(text: str, keyword: str, accepted_next: set[str]) -> str:
    """The keyword the source's deprecation text for ``keyword`` says to use, when the next release accepts it."""
    # @deprecate_kwarg("tokenizer", new_name="processing_class"): the decorator names it
    decorated = re.search(rf"deprecate_kwarg\(\s*[\"']{keyword}[\"']\s*,\s*new_name=[\"'](\w+)", text)
    if decorated and decorated[1] in accepted_next:
        return decorated[1]
    for found in re.finditer(rf"(?:`(?:--)?{keyword}\b|\b{keyword}=\.\.\.|\({keyword}=)" + _DEPRECATED, text):
        use = found["use"]
        # the name that takes the old keyword's value (devices={gpus!r}, devices=...) before any other it names
        carried = re.findall(rf"(\w+)=(?:\{{{keyword}\b|\.\.\.)", use)
        for name in carried + re.findall(r"(?:--)?([A-Za-z_]\w*)", use):
            if name in accepted_next and name != keyword:
                return name
    return ""


# packages read for their keywords only (api_history.py's table of names does not read them), each at its
# releases: ColossalAI (its Booster plugins; few minors, so every release from 0.2 is read, each a source tar),
# pytorch-metric-learning (its losses and DistributedLossWrapper, whose forward passes keywords on from 2.6)
KEYWORD_MINORS = {
    "colossalai": [f"0.2.{p}" for p in range(9)]
    + [f"0.3.{p}" for p in range(10)]
    + [f"0.4.{p}" for p in range(10)]
    + ["0.5.0"],
    "pytorch_metric_learning": ["0.9"] + [f"1.{m}" for m in range(8)] + [f"2.{m}" for m in range(10)],
}
# every package api_history reads, and those, each at its releases
READ = {**MINORS, **KEYWORD_MINORS}
# {package: {a name defined in several modules: the files a script means by it}}
PINNED = {
    package: {name: files for files, names in entries for name in names if name != "*" and "." not in name}
    for package, entries in CALLABLES.items()
}
# lightning.pytorch is pytorch_lightning renamed: one callable, not namesakes
SAME_LINE = {"lightning": "pytorch_lightning"}


def rows_for(package: str) -> tuple[list[str], list[tuple], set[str]]:
    """(the releases read, the rows: callable, keyword, added, last, removed, replacement; every public name
    read in some release)."""
    releases: list[tuple[str, dict[str, frozenset | None], api_callables.Callables, Path]] = []
    for minor in READ[package]:
        wheel = download(package, minor)
        if wheel is None:
            continue
        started = time.monotonic()
        callables = api_callables.read(wheel, package)
        found = callables.every(PINNED.get(package, {}))
        for definitions in callables.classes.values():
            for definition in definitions:
                definition.methods = {}  # read into ``found``; only the files and bases are kept
        releases.append((version_of(wheel), found, callables, wheel))
        if package == "transformers" and found.get("TrainingArguments"):
            INHERITED["TrainingArguments"] = (
                INHERITED.get("TrainingArguments", frozenset()) | found["TrainingArguments"]
            )
        decided = sum(1 for k in found.values() if k is not None)
        print(
            f"  {package} {releases[-1][0]}: {decided} of {len(found)} callables decided "
            f"({time.monotonic() - started:.1f} s)",
            file=sys.stderr,
        )
    versions = [v for v, _, _, _ in releases]
    rows = []
    for callable_ in sorted({c for _, found, _, _ in releases for c, k in found.items() if k is not None}):
        # only the releases that have the callable, decided, say anything about its keywords
        having = [
            (at, found[callable_]) for at, (_, found, _, _) in enumerate(releases) if found.get(callable_)
        ]
        # a private keyword (Embedding's _freeze) is the library's own, never the user's
        for keyword in sorted(
            k for k in frozenset().union(*(k for _, k in having)) - {ANY} if not k.startswith("_")
        ):
            # a release whose callable takes **kwargs but does not name the keyword raises no TypeError for it,
            # yet may refuse it further in (torchmetrics 0.8's Metric): it says nothing about this keyword
            said = [(at, keyword in k) for at, k in having if keyword in k or ANY not in k]
            seen = [s for _, s in said]
            if all(seen) or not any(seen):
                continue
            first = seen.index(True)
            last = len(seen) - 1 - seen[::-1].index(True)
            if not all(seen[first : last + 1]):
                continue
            # a release between the two sides of the change not read, undecided, without the callable or silent
            # on the keyword: the change may be in it, so no one release is named
            if (first > 0 and said[first][0] - said[first - 1][0] > 1) or (
                last + 1 < len(said) and said[last + 1][0] - said[last][0] > 1
            ):
                continue
            added = versions[said[first][0]] if first > 0 else ""
            removed = versions[said[last + 1][0]] if last + 1 < len(said) else ""
            rows.append([callable_, keyword, added, versions[said[last][0]] if removed else "", removed, ""])
    _replacements(package, rows, releases)
    return versions, [tuple(r) for r in rows], {c for _, found, _, _ in releases for c in found}


def _replacements(package: str, rows: list[list[str]], releases: list) -> None:
    """Fill in each removed keyword's replacement from the deprecation text of the last release with it (its
    callable's file, and `DEPRECATIONS_IN`): those files are read again for those rows only."""
    at = {version: index for index, (version, _, _, _) in enumerate(releases)}
    texts: dict[tuple[int, tuple[str, ...]], str] = {}
    for row in (r for r in rows if r[4]):
        index = at[row[3]]
        _, _, callables, wheel = releases[index]
        files = (*callables.files_of(row[0].split(".")[0]), *DEPRECATIONS_IN.get(package, ()))
        if (index, files) not in texts:
            texts[(index, files)] = "\n".join(package_files(wheel, set(files)).values())
        row[5] = renamed(texts[(index, files)], row[1], set(releases[at[row[4]]][1].get(row[0]) or ()))


def build(table: Path, header: list[str], rows_of) -> None:
    """Every package of `READ` through ``rows_of`` (package -> (releases, rows, every public name read)),
    written to ``table`` under ``header`` with a '#namesakes' line for each callable with rows that several
    packages define (also api_signatures.py's)."""
    started = time.monotonic()
    packages: dict[str, tuple[list[str], list[tuple]]] = {}
    defined: dict[str, set[str]] = {}
    for package in READ:
        print(f"{package}:", file=sys.stderr)
        versions, rows, names = rows_of(package)
        packages[package] = (versions, rows)
        for name in names:
            defined.setdefault(name, set()).add(SAME_LINE.get(package, package))
    with_rows = {row[0] for _, rows in packages.values() for row in rows}
    namesakes = [
        "\t".join(["#namesakes", name, *sorted(defined[name])])
        for name in sorted(with_rows)
        if len(defined[name]) > 1
    ]
    took = time.monotonic() - started
    releases = sum(len(v) for v, _ in packages.values())
    built = f"# Built in {took / 60:.0f} min on 2 shared cores (nice 19), from {releases} releases of {len(packages)} packages."
    write(table, [*header, built, *namesakes], packages)
    print(f"built in {took:.0f} s", file=sys.stderr)


def wants_build(argv: list[str] | None, doc: str) -> bool:
    """Whether the command line asks to read the wheels and rewrite the table (--build)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="store_true", help="read the wheels and rewrite the table")
    return parser.parse_args(argv).build


HEADER = [
    "# Keyword arguments that some releases of a library's callable accept and others do not, read from the",
    "# released wheels by benchmarks/api_keywords.py --build (ast over each release's source; never imported):",
    "# every public class (its __init__: own, a dataclass's fields, or its first base's within the package) and",
    "# every public function of the modules api_members.py reads, one release per minor. Only keywords NOT taken",
    "# by every release where the callable exists and is decided are kept (a release taking **kwargs says nothing",
    "# of a keyword it does not name; a name defined twice with other keywords is undecided; a keyword gone and",
    "# back has no row). Methods are written Class.method (CPython 3.10+'s name). A '#namesakes' line names a",
    "# callable with rows that several packages read define: the log must say which one it is.",
    "# A '#releases' line lists a package's releases read; a row: callable (as CPython 3.10+ names it, without",
    "# .__init__), keyword, added (first release read that accepts it; '' = every release read from the first),",
    "# last (last release accepting it; '' = still the newest read), removed (first release after it without",
    "# it), replacement (the keyword the package's deprecation text says to use instead).",
]


def main(argv: list[str] | None = None) -> int:
    if wants_build(argv, __doc__ or ""):
        build(TABLE, HEADER, rows_for)
        load.cache_clear()
    for package, (versions, rows) in load().items():
        renames = sum(1 for r in rows if r.replacement)
        print(
            f"{package:18} {versions[0]}..{versions[-1]} ({len(versions)} releases): {len(rows)} keywords of "
            f"{len({r.callable for r in rows})} callables, {renames} with a replacement"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
