"""Which release of a library accepts the keyword argument CPython says a callable did not take.

The messages are CPython's TypeError for a call (Python/ceval.c, Objects/call.c; the catalog's
system:python-unexpected-keyword-argument): ``{}() got an unexpected keyword argument '{}'``. From Python 3.10 the callable
is qualified (``TrainingArguments.__init__()``, ``Trainer.fit()``); before it is bare (``__init__()``), and only the
traceback's call line can say which class it was. The same line is printed for a keyword misspelt in the calling
code and for a class of the user's own that happens to share the library's name; so the table decides what is
known: a keyword that some release of that callable accepts and another does not (`catalog/api_keywords.tsv`,
written by ``benchmarks/api_keywords.py --build`` from the released wheels: every public class, method and
function of the packages read) is the code and the installed release disagreeing. Any other keyword is left to
the generic reading, and so is a name several packages define (its '#namesakes' line) where more than one of
them has a row for the keyword and the log does not say which package's it is. The release the log prints
installed (explain/printed_versions.py) decides beside the table: one that takes the keyword makes the reading
only likely (another installation imported, or the project's own class); one that does not is named.

    >>> [r.removed for r in rows("TrainingArguments", "evaluation_strategy")]
    ['4.51.3']
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import cache
from pathlib import Path
from typing import NamedTuple

from torchdoctor.explain import printed_versions
from torchdoctor.explain.first_failure import Raised, cut, installed_package
from torchdoctor.explain.kinds import api_history
from torchdoctor.explain.kinds.api_members import release_line, tied
from torchdoctor.explain.kinds.release_pins import (
    below,
    came,
    read_namesakes,
    read_table,
    spelled,
    went,
    within,
)

FAMILY = "library releases that disagree with the code"

TABLE = Path(__file__).resolve().parent.parent / "catalog" / "api_keywords.tsv"
# CPython 3.10+: "TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'";
# before: "__init__() got ...", or a function's bare name ("load() got ...")
KEYWORD = re.compile(
    r"(?<![\w.])(?P<kw_callable>(?:[A-Za-z_]\w{0,100}\.)?[A-Za-z_]\w{0,100})\(\) got "
    r"an unexpected keyword argument '(?P<kw_name>\w{1,100})'"
)
# classes the table has whose name another library's class shares, with other keywords: never certain
NAMESAKES = {
    "FullyShardedDataParallel": "fairscale's FullyShardedDataParallel",
    "DistributedDataParallel": "apex's DistributedDataParallel",
}
# a call's argument line, not its start: CPython before 3.8 shows the last line of a call spread over several
# (``period=0,`` under ``ModelCheckpoint(``); the call's name is on a line the traceback leaves out
_CAPITALISED_CALL = re.compile(r"(?<![\w.])[A-Z]\w{0,100}\s*\(")
# removed keywords whose value the deprecation text spreads over several (the table keeps the first it names):
# Lightning 1.0-1.1's ModelCheckpoint warns "Argument `filepath` is deprecated in v1.0 and will be removed in v1.2.
# Please use `dirpath` and `filename` instead." and splits it itself (callbacks/model_checkpoint.py: a folder is
# dirpath alone, else os.path.split gives dirpath and filename)
SPLIT = {
    ("ModelCheckpoint", "filepath"): (
        "dirpath and filename",
        "Split filepath= into dirpath= (its folder) and filename= (the name in it, a template such as "
        "'{epoch}-{val_loss:.2f}'); a filepath that is a folder is dirpath= alone",
    ),
}
# the package a table row belongs to, as `pip install` spells it
PIP_NAME = {
    "pytorch_lightning": "pytorch-lightning",
    "sentence_transformers": "sentence-transformers",
    "pytorch_metric_learning": "pytorch-metric-learning",
}


class Keyword(NamedTuple):
    """One keyword some releases of a callable accept and others do not."""

    package: str
    callable: str  # as CPython 3.10+ names it, without .__init__ (TrainingArguments, load, Adam)
    keyword: str
    added: str  # the first release read that accepts it; "" = every release read from the first
    last: str  # the last release that accepts it; "" = still in the newest read
    removed: str  # the first release after ``last`` without it
    replacement: str  # the keyword the package's own deprecation text says to use instead, when it says


@cache
def load() -> dict[str, tuple[list[str], list[Keyword]]]:
    """``{package: (the releases read, its rows)}`` from the committed table."""
    return {
        p: (releases, [Keyword(p, *c) for c in rows_])
        for p, (releases, rows_) in read_table(TABLE, 6).items()
    }


@cache
def namesakes() -> dict[str, frozenset[str]]:
    """{callable: the packages read that define one of that name}, for those with rows (the '#namesakes' lines)."""
    return read_namesakes(TABLE)


@cache
def _index() -> dict[tuple[str, str], list[Keyword]]:
    found: dict[tuple[str, str], list[Keyword]] = {}
    for _, rows_ in load().values():
        for row in rows_:
            found.setdefault((row.callable, row.keyword), []).append(row)
    return found


@cache
def _callables() -> dict[str, set[str]]:
    """{callable: the packages whose table has it}."""
    found: dict[str, set[str]] = {}
    for package, (_, rows_) in load().items():
        for row in rows_:
            found.setdefault(row.callable, set()).add(package)
    return found


def rows(callable_: str, keyword: str) -> list[Keyword]:
    """The table's rows for ``keyword`` of ``callable_`` (several when two packages share the name)."""
    return _index().get((callable_, keyword), [])


def named_callable(
    message_callable: str, call_line: str = "", known: Collection[str] | None = None, prose: bool = False
) -> str | None:
    """The callable a table knows (``known``; this table's by default), from CPython's name for it and the
    traceback's call line.

    ``TrainingArguments.__init__`` names the class; a bare ``__init__`` is known only when the call line calls
    exactly one class the table has (``args = TrainingArguments(output_dir=...)``), or, ``prose``, when the
    sentence quoting the error names exactly one ("When filepath is used as an argument in ModelCheckpoint it
    says TypeError: __init__() got ...")."""
    known = _callables() if known is None else known
    name = message_callable.removesuffix(".__init__")
    if name == "__init__":
        pattern = r"(?<!\w)([A-Z]\w{0,100})\b" if prose else r"(?<!\w)([A-Z]\w{0,100})\s*\("
        called = {c for c in re.findall(pattern, call_line) if c in known}
        return called.pop() if len(called) == 1 else None
    return name if name in known else None


def argument_line(code: str) -> bool:
    """Whether ``code`` is a line inside a call's arguments (it ends with a comma, or closes more brackets than it
    opens) that calls no class: what CPython before 3.8 printed for a call written over several lines.

    >>> argument_line("period=0,  # every validation"), argument_line("cb = ModelCheckpoint(period=0)")
    (True, False)
    """
    code = code.split("#", 1)[0].strip()
    if not code or _CAPITALISED_CALL.search(code):
        return False
    return code.endswith(",") or code.count(")") > code.count("(")


def only_class_with(keyword: str) -> str | None:
    """The one class of the table (a capitalised name, no method) whose releases differ on ``keyword``; None
    when none or several are.

    >>> only_class_with("filepath")
    'ModelCheckpoint'
    """
    classes = {c for (c, k) in _index() if k == keyword and "." not in c and c[:1].isupper()}
    return classes.pop() if len(classes) == 1 else None


# PEFT builds an adapter's config class from the keys of its adapter_config.json (peft/utils/config.py, later
# peft/config.py: PeftConfigMixin.from_pretrained, ``config = cls(**kwargs)``; later releases drop unknown keys
# with a warning instead): a key the installed PEFT's class does not take was written by a newer PEFT
_PEFT_CONFIG_LOAD = re.compile(r"(?:^|[\\/])peft[\\/](?:utils[\\/])?config\.py$")


def peft_config_with(keyword: str) -> str | None:
    """The PEFT config class an adapter's saved key ``keyword`` belongs to, where every PEFT config class whose
    releases differ on it agrees on which releases take it (LoraConfig where it is one); else None.

    >>> peft_config_with("use_rslora")
    'LoraConfig'
    """
    classes = sorted(
        c
        for (c, k), found in _index().items()
        if k == keyword and c.endswith("Config") and any(r.package == "peft" for r in found)
    )
    spans = {(r.added, r.last) for c in classes for r in rows(c, keyword) if r.package == "peft"}
    if len(spans) != 1:
        return None
    return "LoraConfig" if "LoraConfig" in classes else classes[0]


def loaded_by_peft(raised: Raised) -> bool:
    """Whether ``raised`` came from PEFT building a config class from a saved adapter's keys."""
    frame = raised.raised_in
    return (
        frame is not None
        and bool(_PEFT_CONFIG_LOAD.search(frame.file))
        and "(**kwargs)" in raised.raised_code
    )


def owned(callable_: str, found: list, raised: Raised, facts: dict, defined: dict) -> tuple[list, str]:
    """(the rows ``found`` of the one package the callable is taken to be, the other packages that define a
    callable of that name without such a row: the other reading) — ([], "") when the log does not tell which
    package's it is and several have a row, or it ties it to one without a row (a keyword that package takes
    in every release, or never took: not a release's). ``defined``: the table's '#namesakes'."""
    with_rows = {release_line(r.package) for r in found}
    defining = with_rows | {release_line(p) for p in defined.get(callable_, ())}
    line = tied(defining, raised, facts) if len(defining) > 1 else next(iter(defining), None)
    if line is None and len(with_rows) == 1:
        line = next(iter(with_rows))
    else:
        defining = {line}
    mine = [r for r in found if release_line(r.package) == line]
    return mine, ", ".join(sorted(defining - {line}))


def diagnosis(raised: Raised, facts: dict | None = None) -> tuple[str, str, bool] | None:
    """(summary, fix, certain) for CPython's TypeError ``raised`` on a keyword the table knows, else None.

    Certain where the log states an installed release of the callable's package that does not take the keyword
    (silent where it states one that does), or where another installed package makes the call (a library
    calling another: the installed pair disagrees). Otherwise likely: a call from the project's own code may be
    to a class or function of its own with the library's name, and a name several packages define that the log
    does not tie to one is read as the one whose releases differ, the others named. ``facts``: the log's
    context (the packages it names, the installed releases it states)."""
    if raised.type != "TypeError":
        return None
    facts = facts or {}
    found = KEYWORD.search(raised.message)
    # no traceback: the code line is the sentence quoting it (verdict.quoted_in_prose), or none
    prose = not raised.traceback
    callable_ = named_callable(found["kw_callable"], raised.raised_code, prose=prose) if found else None
    # the class is not on the line shown (CPython < 3.8, a call over several lines): the one class whose
    # releases differ on the keyword, never certain (the project's own class may take that keyword)
    inferred = (
        callable_ is None
        and found is not None
        and found["kw_callable"] == "__init__"
        and not prose
        and argument_line(raised.raised_code)
    )
    if inferred:
        callable_ = only_class_with(found["kw_name"])
    adapter = (
        callable_ is None
        and found is not None
        and found["kw_callable"] == "__init__"
        and loaded_by_peft(raised)
    )
    if adapter:
        callable_ = peft_config_with(found["kw_name"])
    if callable_ is None:
        return None
    found, others = owned(callable_, rows(callable_, found["kw_name"]), raised, facts, namesakes())
    if not found:
        return None
    row = found[0]
    installed = printed_versions.shown(facts, row.package)
    takes = within(load()[row.package][0], installed, row.added, row.last) if installed else None
    if takes:
        # the release the log prints takes it: not that release, whatever else it is
        other, check = api_history.imported_elsewhere(row.package, installed)
        article = "an" if row.callable[:1] in "AEIOU" else "a"
        return (
            f"{row.callable}() refused {row.keyword}=, which it takes in {row.package} {installed}, and {other}; "
            f"or {article} {row.callable} of the project's own that takes other keywords",
            check,
            False,
        )
    summary, fix = explain(found)
    caller = installed_package(raised.raised_in.file) if raised.raised_in else None
    certain = takes is False or (caller is not None and release_line(caller) != release_line(row.package))
    if takes is False:
        summary = api_history.named_installed(summary, row.package, installed)
    namesake = NAMESAKES.get(row.callable)
    certain = certain and not namesake and not inferred
    # Python 3.10+ names the class (LoraConfig.__init__()): the same load of a saved adapter
    adapter = adapter or (row.package == "peft" and loaded_by_peft(raised))
    if adapter:
        summary += (
            f" (PEFT read {row.keyword} from the saved adapter's adapter_config.json: the adapter was saved by a "
            f"peft that takes it)"
        )
        fix += (
            f'\nOr keep this peft and delete "{row.keyword}" from the adapter\'s adapter_config.json (only where '
            "it holds the default, e.g. false or null: a non-default value needs the newer peft)."
        )
    if inferred:
        shown = cut(raised.raised_code.split("#", 1)[0], 60)
        summary += (
            f" (the traceback shows the call's last line, `{shown}`, as Python before 3.8 does: "
            f"{row.callable} is the one class whose releases differ on {row.keyword}=)"
        )
    if namesake:
        summary += f"; or {namesake}, which takes other keywords"
    elif others and not certain and not adapter:
        summary += f"; or the {row.callable} of {others}, which takes other keywords"
    if caller is not None and release_line(caller) != release_line(row.package):
        fix += (
            f"\n{caller} makes the call: its release was written for another {row.package}; install the pair "
            f"its requirements name (pip show {caller} {PIP_NAME.get(row.package, row.package)})."
        )
    if not certain and not adapter:
        article = "an" if row.callable[:1] in "AEIOU" else "a"
        summary += f"; or {article} {row.callable} of the project's own that takes other keywords"
        fix += (
            f"\nIf {row.callable} is defined in the project (not imported from {row.package}), the "
            "keyword is the project's own: check its signature."
        )
    return summary, fix, certain


def explain(found: list[Keyword]) -> tuple[str, str]:
    """(summary, fix) for a keyword the installed release of the callable's package does not take."""
    row = found[0]
    package, pip_name = row.package, PIP_NAME.get(row.package, row.package)
    releases = load()[package][0]
    what = f"{row.callable}({row.keyword}=...)"
    bound = []
    if row.added:
        bound.append(came(releases, row.added, package))
    if row.removed:
        split = SPLIT.get((row.callable, row.keyword))
        renamed = (
            f", split into {split[0]}" if split else f", renamed {row.replacement}" if row.replacement else ""
        )
        bound.append(
            f"{went(releases, row.last, row.removed, package)}{renamed} (the last release with it: {row.last})"
        )
    side = "older or newer" if row.added and row.removed else "older" if row.added else "newer"
    summary = f"{what}: the keyword {' and '.join(bound)}; the installed {package} is {side} than the code"
    steps = []
    if row.removed:
        if (row.callable, row.keyword) in SPLIT:
            steps.append(SPLIT[row.callable, row.keyword][1])
        elif row.replacement:
            # the table knows the new keyword's name, not whether it takes the old one's values (Accelerator's
            # fp16=True became mixed_precision="fp16")
            steps.append(
                f"Pass {row.replacement}= instead of {row.keyword}= (check the values it takes in "
                f"{row.callable}'s documentation: a renamed keyword may take others)"
            )
        pin = "or pin" if row.replacement else "Pin"
        bound = below(releases, row.last, row.removed)
        steps.append(
            f"{pin} the last release that takes {row.keyword}=: pip install '{pip_name}{bound}'"
            + (f" ({row.last} is the last release with it)" if bound.startswith("<") else "")
        )
    if row.added:
        steps.append(
            f"Upgrade to a release that takes {row.keyword}=: pip install -U "
            f"'{pip_name}>={spelled(releases, row.added)}'"
        )
    if len(found) > 1:
        steps.append(
            f"({row.callable} is also {', '.join(sorted({r.package for r in found[1:]}))}'s: same change)"
        )
    fix = (
        "; ".join(steps)
        + f". pip show {pip_name} names the release installed (read from {releases[0]} to {releases[-1]})."
    )
    return summary, fix
