"""Which release of a library accepts which keyword argument, read from the released packages themselves.

`--build` reads the wheels api_history.py downloaded (one per minor release, its last patch, in /tmp/v_wheels;
Lightning's `pytorch_lightning` and `lightning` wheels are downloaded here the same way) and writes
src/torchdoctor/explain/catalog/api_keywords.tsv: for the public callables users pass keywords to (`CALLABLES`),
the keywords some release accepts and another does not, each with the first release read that accepts it, the
last one that does, the first after it that does not, and the keyword that replaces it where the package's own
deprecation text names one. Read statically with `ast` (the downloaded code is never imported):

- a class's keywords are its ``__init__``'s parameters (positional-or-keyword and keyword-only), or, for a
  ``@dataclass``, its fields and its bases' fields (TrainingArguments, LoraConfig); a class without its own
  ``__init__`` takes its base's, found by name in the files read;
- a function's are its parameters (torch.load, init_process_group, load_dataset).

A release whose callable takes ``**kwargs`` accepts every keyword as far as CPython is concerned (no TypeError is
raised under that name: from_pretrained and load_dataset pass them on), so its explicit parameters say nothing. Only the releases where the
callable exists count: a keyword is "missing" from a release only when the callable is there without it. A
keyword gone for a while and back has no one release to name and is left out.

    python benchmarks/api_keywords.py --build     # read the cached wheels and write the table
    python benchmarks/api_keywords.py             # the rows per package in the committed table
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

from api_history import MINORS, download, package_files, version_of, write

from torchdoctor.explain.kinds.api_keywords import TABLE, load

# the Lightning lines read here only (api_history reads no names of theirs); 1.7's wheels carry metadata that
# current pip refuses ("torch (>=1.9.*)"), so 1.7 is not read
LIGHTNING = {
    "pytorch_lightning": [f"1.{m}" for m in (0, 1, 2, 3, 4, 5, 6, 8, 9)] + [f"2.{m}" for m in range(0, 6)],
    "lightning": [f"2.{m}" for m in range(0, 6)],
}
# trl: its trainers and their configs (SFTTrainer's tokenizer, dataset_text_field, max_seq_length moved between them)
TRL = {"trl": [f"0.{m}" for m in range(4, 26)]}
RELEASES = {
    **{p: MINORS[p] for p in ("transformers", "accelerate", "peft", "datasets", "torch")},
    **LIGHTNING,
    **TRL,
    **{p: MINORS[p] for p in ("deepspeed", "sentence_transformers")},
}
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
# package -> (files, the classes or functions read in them; "*" = every public class of the file)
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
# where a class's bases are looked for when the file itself does not define them
BASES_IN = {
    "peft": ("peft/utils/config.py", "peft/config.py"),
    "transformers": ("transformers/training_args.py",),
    # PPOConfig (0.12+) subclasses OnPolicyConfig, defined there
    "trl": ("trl/trainer/utils.py",),
}
# where a release's deprecation warnings for a callable's keywords are, when not in its own file (Lightning 1.x:
# "Setting `Trainer(gpus=...)` is deprecated in v1.7 ... Please use `Trainer(accelerator='gpu', devices=...)`")
DEPRECATIONS_IN = {"pytorch_lightning": ("pytorch_lightning/trainer/connectors/accelerator_connector.py",)}


ANY = "**"


def _parameters(function: ast.FunctionDef) -> list[str]:
    args = function.args
    named = [a.arg for a in args.args + args.kwonlyargs if a.arg not in ("self", "cls")]
    if args.kwarg is not None:
        named.append(ANY)  # **kwargs: that release raises no TypeError under this name for any keyword
    # transformers' @deprecate_kwarg("tokenizer", new_name="processing_class") (utils/deprecation.py, 4.46+)
    # still takes the old keyword: it renames it before the call
    for decorator in function.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and ast.unparse(decorator.func).endswith("deprecate_kwarg")
            and decorator.args
            and isinstance(decorator.args[0], ast.Constant)
        ):
            named.append(str(decorator.args[0].value))
    return named


def _dataclass(node: ast.ClassDef) -> bool:
    return any("dataclass" in ast.unparse(d) for d in node.decorator_list)


def _fields(node: ast.ClassDef) -> list[str]:
    return [
        s.target.id
        for s in node.body
        if isinstance(s, ast.AnnAssign)
        and isinstance(s.target, ast.Name)
        and "ClassVar" not in ast.unparse(s)
    ]


class Release:
    """The classes and functions of the files one wheel holds for ``CALLABLES`` (parsed, never imported)."""

    def __init__(self, path: Path, package: str):
        wanted = {f for files, _ in CALLABLES[package] for f in files}
        wanted |= set(BASES_IN.get(package, ())) | set(DEPRECATIONS_IN.get(package, ()))
        packages = {f.removesuffix(".py") + "/__init__.py" for f in wanted}
        files = package_files(path, wanted | packages)
        # a module beside a package of the same name (peft 0.6's tuners/lora.py and tuners/lora/) is never
        # imported: the package is
        self.text = {
            f: files[f]
            for f in sorted(wanted)
            if f in files and f.removesuffix(".py") + "/__init__.py" not in files
        }
        # every definition of a class name in the files read: two files that define it differently (torch.cuda.amp's
        # autocast and GradScaler subclass torch.amp's, with other keywords) are named alike by CPython, so neither
        # is read; a copy left behind (peft 0.6's tuners/lora.py beside tuners/lora/config.py) agrees and is
        self.classes: dict[str, list[ast.ClassDef]] = {}
        self.functions: dict[tuple[str, str], ast.FunctionDef] = {}
        for file, text in self.text.items():
            try:
                tree = ast.parse(text)
            except SyntaxError:  # a release this Python cannot parse: its keywords stay unread
                continue
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, []).append(node)
                elif isinstance(node, ast.FunctionDef):
                    self.functions[(file, node.name)] = node

    def keywords_of_class(self, name: str, depth: int = 0) -> set[str] | None:
        if depth > 6:
            return None
        found = {frozenset(k) for n in self.classes.get(name, []) if (k := self._of(n, depth)) is not None}
        return set(found.pop()) if len(found) == 1 else None

    def _of(self, node: ast.ClassDef, depth: int) -> set[str] | None:
        init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is not None:
            return set(_parameters(init))
        own = set(_fields(node)) if _dataclass(node) else set()
        for base in node.bases:
            name = ast.unparse(base).split(".")[-1]
            inherited = self.keywords_of_class(name, depth + 1)
            if inherited is None:
                # a base from another package (trl's configs subclass transformers' TrainingArguments): every
                # field any release of it has, so a field an override drops is not read as removed
                inherited = INHERITED.get(name)
            if inherited is not None:
                return own | inherited
            if name in self.classes:  # a base read but not decided (defined twice, differently): nor is this
                return None
        return own if _dataclass(node) else None

    def keywords(self, files: tuple[str, ...], name: str) -> dict[str, set[str]]:
        """{the callable's name as CPython prints it: its keywords} for ``name`` in ``files`` ("*": every class)."""
        if "." in name:  # a method: Class.method
            cls, method = name.split(".")
            nodes = self.classes.get(cls, [])
            node = nodes[0] if len(nodes) == 1 else None
            found = [
                s for s in (node.body if node else []) if isinstance(s, ast.FunctionDef) and s.name == method
            ]
            return {name: set(_parameters(found[0]))} if found else {}
        if name == "*":
            here = {n for f in files if f in self.text for n in self._classes_in(f)}
            got = {n: self.keywords_of_class(n) for n in here if not n.startswith("_")}
            return {n: k for n, k in got.items() if k}
        function = next((self.functions[(f, name)] for f in files if (f, name) in self.functions), None)
        if function is not None:
            return {name: set(_parameters(function))}
        got = self.keywords_of_class(name)
        return {name: got} if got is not None else {}

    def _classes_in(self, file: str) -> list[str]:
        try:
            return [n.name for n in ast.parse(self.text[file]).body if isinstance(n, ast.ClassDef)]
        except SyntaxError:
            return []


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


# {a class of another package read earlier in the build: every keyword any of its releases takes}
INHERITED: dict[str, set[str]] = {}


def gap(versions: list[str], earlier: str, later: str) -> bool:
    """Whether a release read lies between ``earlier`` and ``later``."""
    return versions.index(later) - versions.index(earlier) > 1


def rows_for(package: str) -> tuple[list[str], list[tuple]]:
    """(the releases read, the rows: callable, keyword, added, last, removed, replacement)."""
    releases: list[tuple[str, Release, dict[str, set[str]]]] = []
    for minor in RELEASES[package]:
        wheel = download(package, minor)
        if wheel is None:
            continue
        release = Release(wheel, package)
        found: dict[str, set[str]] = {}
        for files, names in CALLABLES[package]:
            for name in names:
                found.update(release.keywords(files, name))
        releases.append((version_of(wheel), release, found))
        if package == "transformers":
            INHERITED.setdefault("TrainingArguments", set()).update(found.get("TrainingArguments", ()))
        print(f"  {package} {releases[-1][0]}: {len(found)} callables", file=sys.stderr)
    versions = [v for v, _, _ in releases]
    rows = []
    for callable_ in sorted({c for _, _, found in releases for c in found}):
        # only the releases that have the callable say anything about its keywords
        having = [(v, r, f[callable_]) for v, r, f in releases if callable_ in f]
        # a private keyword (Embedding's _freeze) is the library's own, never the user's
        for keyword in sorted(
            k for k in set().union(*(k for _, _, k in having)) - {ANY} if not k.startswith("_")
        ):
            seen = [keyword in k or ANY in k for _, _, k in having]
            first = seen.index(True)
            last = len(seen) - 1 - seen[::-1].index(True)
            if all(seen) or not all(seen[first : last + 1]):
                continue
            added = having[first][0] if first > 0 else ""
            removed = having[last + 1][0] if last + 1 < len(having) else ""
            # a release between the two where the callable was not decided (defined twice, differently): the
            # change may be in it, so no one release is named
            if (added and gap(versions, having[first - 1][0], added)) or (
                removed and gap(versions, having[last][0], removed)
            ):
                continue
            replacement = ""
            if removed:
                text = "\n".join(having[last][1].text.values())
                replacement = renamed(text, keyword, having[last + 1][2])
            rows.append((callable_, keyword, added, having[last][0] if removed else "", removed, replacement))
    return versions, rows


def build_table(table: Path, header: list[str], rows_of) -> None:
    """Every package of RELEASES through ``rows_of`` (package -> (releases, rows)), written to ``table`` under
    ``header`` (also api_signatures.py's)."""
    packages = {}
    for package in RELEASES:
        print(f"{package}:", file=sys.stderr)
        packages[package] = rows_of(package)
    write(table, header, packages)


def wants_build(argv: list[str] | None, doc: str) -> bool:
    """Whether the command line asks to read the wheels and rewrite the table (--build)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="store_true", help="read the wheels and rewrite the table")
    return parser.parse_args(argv).build


HEADER = [
    "# Keyword arguments that some releases of a library's callable accept and others do not, read from the",
    "# released wheels by benchmarks/api_keywords.py --build (ast over each release's source; never imported).",
    "# A '#releases' line lists a package's releases read; a row: callable (as CPython 3.10+ names it, without",
    "# .__init__), keyword, added (first release read that accepts it; '' = every release read from the first),",
    "# last (last release accepting it; '' = still the newest read), removed (first release after it without",
    "# it), replacement (the keyword the package's deprecation text says to use instead).",
]


def main(argv: list[str] | None = None) -> int:
    if wants_build(argv, __doc__ or ""):
        build_table(TABLE, HEADER, rows_for)
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
