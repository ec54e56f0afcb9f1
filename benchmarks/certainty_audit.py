"""A certainty audit that needs no logs: which recogniser speaks with certainty on another cause's message.

An unseen log is confidently wrong when a recogniser that speaks with certainty fires on a line that some other
cause prints too. This finds those recognisers from the sources alone: every template of the catalog
(`torchdoctor.explain.catalog`) is rendered as a plausible log line (its placeholders filled with plausible
values) and `explain` is run on that line alone, in two forms:

- ``bare``: the message as a line of its own;
- ``printed``: the message as its source prints it in a log: a Python or C++ message after ``RuntimeError: ``,
  an NCCL one after NCCL's ``host:pid:tid [0] NCCL WARN`` prefix, the others (CUDA's strings, the system's)
  as they are;
- ``summary`` (``--context``): the printed message followed by torchrun's failure summary, as a worker's error
  is followed by the launcher's report.

A template counts once, by its most wrong form (a certain lead on another kind first).

For every template the lead finding's kind and confidence are recorded. Reported:

(a) cross-firing: templates mapped to kind A whose lead is a *certain* kind B != A;
(b) unmapped certainty: templates mapped to no kind on which some recogniser is certain (is its anchor too
    broad? or is the template that cause's, unmapped?);
(c) per recogniser: how many templates it leads on, certain and likely, and how many of its certain leads are
    in (a) or (b);
(d) certain leads on a template the recogniser does not cite (``Recogniser.templates``, what it was built from):
    the catalog's kinds are derived from the anchors, so (a) and (b) find only an anchor tried before another's
    or a stale mapping; (d) does not depend on the mapping.

    PYTHONPATH=src python benchmarks/certainty_audit.py              # the table and every (a) and (b) row
    PYTHONPATH=src python benchmarks/certainty_audit.py --summary    # the counts only
    PYTHONPATH=src python benchmarks/certainty_audit.py --kind cuda_build   # only rows whose lead is that kind
    PYTHONPATH=src python benchmarks/certainty_audit.py --context    # also each line before torchrun's summary
    PYTHONPATH=src python benchmarks/certainty_audit.py --list-certain   # every certain lead, with its anchor
    PYTHONPATH=src python benchmarks/certainty_audit.py --list-missed    # templates of kind A led by B or none

Reads only the catalog: no log of the corpus.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from torchdoctor.explain.catalog import Template, load  # noqa: E402
from torchdoctor.explain.diagnose import explain  # noqa: E402
from torchdoctor.explain.interrupted import TEMPLATES as INTERRUPTED_TEMPLATES  # noqa: E402

# the readings outside the recognisers (explain/*.py, read on the exception that ended the run) and the templates
# each is built from: a certain lead of theirs on one of these is that reading's message, not an unmapped one
READINGS = {"interrupted": INTERRUPTED_TEMPLATES}

# plausible values for the placeholders: a number where printf wants one, a short word elsewhere
_PRINTF = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t|L)?([diouxXeEfgGcspa])")
_BRACES = re.compile(r"\{([^{}]*)\}")
_NUMBER_BEFORE = re.compile(
    r"(?:\b(?:rank|size|device|ordinal|count|number|world_size|step|epoch|index|node|port|exitcode|exit code|code|"
    r"signal|status|errno|version|pid|id|process|task|line|detected|length|value|pos|than|at most|stage|steps|"
    r"gpu|gpus|target|classes,|target_names,|nc|0-|dimension|element|elements|position|row)\s*[:=]?\s*\(?|[=#\[(]|"
    r"\dx|\d x|\[\d+,|\b(?:not|have|but was|0 to)|\.(?:cc|cpp|cu|h|c|py):)\s*$",
    re.IGNORECASE,
)
# what follows a number: a unit, a shape's "x" ("{}x{}"), the things it counts ("{} rows", "{} channels")
_NUMBER_AFTER = re.compile(
    r"(?:ms|kB|x\{|x\d| x |\s(?:seconds?|bytes|rows|elements|channels|classes|columns|tokens|members|files|"
    r"oom[-_]kill|has to be|pixels|vs|Killed)\b)",
    re.IGNORECASE,
)
# placeholders whose words say what they hold, filled as a real line has them: a CUDA kernel's block and thread
# (Loss.cu: "block: [0,0,0], thread: [5,0,0]"), a peer's address (NCCL's "Connect to 10.0.0.2<45678>", gloo's
# "[10.0.0.2]:45678"), a dtype (the second one another: "expected scalar type Float but found Half")
_DTYPE_BEFORE = re.compile(
    r"(?:\b(?:dtype|scalar type)|(?:dtype|type)\b[^{}]{0,40}(?:got:?|!=|and|expected|found)|\w+ type \()\s*$"
)
CUDA_KERNEL = "/pytorch/aten/src/ATen/native/cuda/Loss.cu:92: operator()"
_FILLS = (
    (re.compile(r"\b(?:block|thread): \[$"), "0,0,0"),
    (re.compile(r"\b[Cc]onnect to $"), "10.0.0.2<45678>"),
    (re.compile(r"\btimeout \[$"), "10.0.0.2"),
    (re.compile(r"\btimeout \[[\d.]+\]:$"), "45678"),
    (_DTYPE_BEFORE, lambda before: "Half" if "Float" in before else "Float"),
)
PYTHON_SOURCES = (
    "torch",
    "torch_cpp",
    "torch_native",
    "torch_cuda",
    "deepspeed",
    "accelerate",
    "lightning",
    "transformers",
)


def _value(before: str, conversion: str, after: str = "") -> str:
    """A plausible value for a placeholder after the text ``before``: a number where printf wants one or the
    words before it take one (rank, size, exitcode, ``=``), an address for ``%p``, else a short word; a string
    whose number follows it in parentheses (NCCL's ``status=%s(%d)``) is a name, not a number; one glued to
    ``D`` or ``-dimensional`` (``after``: the text following it) a number of dimensions."""
    if conversion in "diou":
        return "3"
    if conversion in "xX":
        return "1f"
    if conversion == "c":
        return "x"
    if conversion == "p":
        return "0x7f3a2c000000"
    if conversion in "eEfgGa":
        return "1.50"
    if after.startswith(": block: ["):  # the device-side assert's kernel: its file, line and function
        return CUDA_KERNEL
    for words, value in _FILLS:
        if words.search(before):
            return value(before) if callable(value) else value
    if after.startswith("("):
        return "model"
    if re.match(r"D\b|-dimensional", after):  # "expected 4D input (got {}D input)": a number of dimensions
        return "3"
    return "3" if _NUMBER_BEFORE.search(before) or _NUMBER_AFTER.match(after) else "model"  # %s, {}


def render(text: str) -> str:
    """``text`` with its placeholders filled: ``%d`` -> 3, ``%s`` and ``{}`` -> a number after words that take
    one (rank, size, exitcode, ``=``), else a word; a named ``{x}`` -> its name's last part."""
    text = text.replace("%%", "\x00")
    out, at = [], 0
    for match in re.finditer(f"{_PRINTF.pattern}|{_BRACES.pattern}", text):
        out.append(text[at : match.start()])
        before = "".join(out)[-40:]
        if match.group(1):  # printf
            out.append(_value(before, match.group(1), text[match.end() : match.end() + 20]))
        else:
            name = (match.group(2) or "").strip()
            if name.isdigit() or not name:
                out.append(_value(before, "s", text[match.end() : match.end() + 20]))
            elif re.fullmatch(r"[\w.]+(?:\(\))?", name):
                out.append(name.split(".")[-1].rstrip("()"))
            else:
                out.append(_value(before, "s"))
        at = match.end()
    out.append(text[at:])
    return "".join(out).replace("\x00", "%")


# what a C++ source's raising helper puts before the message: ProcessGroupGloo.cpp's invalidArgument names the
# collective ("ProcessGroupGloo::" + its name + ": " + msg); allgather stands for them all
CPP_PREFIXES = {"torch/csrc/distributed/c10d/ProcessGroupGloo.cpp": "ProcessGroupGloo::allgather: "}
_RAISED = re.compile(
    r"\braise\s+(?:\w+\.)*(\w*(?:Error|Exception|Warning)|_error|_env_error)\s*\(|\bassert\b"
)
# the helpers torch/distributed/rendezvous.py raises through (_rendezvous_error: a ValueError naming the scheme)
PY_HELPERS = {
    "_error": "ValueError: Error initializing torch.distributed using tcp:// rendezvous",
    "_env_error": "ValueError: Error initializing torch.distributed using env:// rendezvous",
}


def raised_as(template: Template) -> str:
    """The exception a Python source raises the template with, read from the installed package's file: the
    nearest ``raise X(`` or ``assert`` before the template's first words, or the words of the helper it raises
    through (`PY_HELPERS`); "" when the file or words are not found, or neither comes before them within a few
    lines."""
    if not template.file.endswith(".py") or template.source not in PYTHON_SOURCES:
        return ""
    try:
        import importlib.util

        spec = importlib.util.find_spec(template.file.split("/")[0])
    except (ImportError, ValueError):
        return ""
    if spec is None or not spec.submodule_search_locations:
        return ""
    path = Path(next(iter(spec.submodule_search_locations))).parent / template.file
    words = re.split(r"\{[^{}]*\}|%[-\d.]*[a-z]", template.text.splitlines()[0])[0][:40]
    if len(words) < 12 or not path.is_file():
        return ""
    source = path.read_text(encoding="utf-8", errors="replace")
    at = source.find(words)
    if at < 0:
        return ""
    before = [m for m in _RAISED.finditer(source, max(0, at - 300), at)]
    if not before:
        return ""
    raised = before[-1].group(1) or "AssertionError"
    return PY_HELPERS.get(raised, raised)


def printed(template: Template, line: str) -> str:
    """The rendered message as its source prints it in a log: a Python one after the exception its source raises
    it with (RuntimeError where that is not read), a C++ one after its raising helper's words."""
    first, _, rest = line.partition("\n")
    if template.source == "nccl":
        return f"node1:1234:1290 [0] misc/utils.cc:31 NCCL WARN {first}" + (f"\n{rest}" if rest else "")
    line = CPP_PREFIXES.get(template.file, "") + line
    if template.source in PYTHON_SOURCES and not re.match(r"[A-Z]\w*(?:Error|Exception|Warning):", first):
        return f"{raised_as(template) or 'RuntimeError'}: {line}"
    return line


# torchrun's failure summary (torch/distributed/elastic/multiprocessing/errors), as it follows a worker's error
SUMMARY = """[2026-11-28 10:00:00,000] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) \
local_rank: 0 (pid: 4242) of binary: /usr/bin/python
Traceback (most recent call last):
  File "/usr/bin/torchrun", line 8, in <module>
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 4242)
  error_file: <N/A>
============================================================"""


def in_summary(template: Template, line: str) -> str:
    """The printed message, then torchrun's failure summary: the worker's error, then the launcher's report."""
    return printed(template, line) + "\n" + SUMMARY


@dataclass
class Result:
    """The lead finding on one form of one template."""

    template: Template
    form: str
    line: str
    kind: str  # the lead's kind, "" when nothing was recognised
    confidence: str  # certain | likely | ""


def lead(line: str) -> tuple[str, str]:
    """(kind, confidence) of the lead finding ``explain`` gives on ``line`` alone."""
    findings = explain(["-"], stdin=io.BytesIO(line.encode("utf-8", "replace") + b"\n"))
    first = findings[0]
    if first.id == "log.unrecognised" or not first.id.startswith("log."):
        return "", ""
    return first.id[4:], first.details.get("confidence", "certain")


def audit(forms: tuple[str, ...] = ("bare", "printed")) -> list[Result]:
    """The lead finding on every template of the catalog, in every form."""
    results = []
    for templates in load().values():
        for template in templates:
            line = render(template.text)
            if line.startswith(
                "Assertion `"
            ):  # a CUDA_KERNEL_ASSERT: the device prints where it failed first
                line = f"{CUDA_KERNEL}: block: [0,0,0], thread: [0,0,0] {line}"
            if (
                template.source == "cuda_runtime"
            ):  # cudaGetErrorString's words, as torch's C10_CUDA_CHECK prints them
                line = f"CUDA error: {line}"
            lines = {"bare": line, "printed": printed(template, line), "summary": in_summary(template, line)}
            seen: dict[str, tuple[str, str]] = {}
            for form in forms:
                text = lines[form]
                if text not in seen:
                    seen[text] = lead(text)
                kind, confidence = seen[text]
                results.append(Result(template, form, text, kind, confidence))
    return results


def worst(results: list[Result]) -> dict[str, Result]:
    """Per template, the form whose lead is most wrong: a certain lead on another kind first, then a certain
    lead on an unmapped template, then a certain one, then any."""

    def rank(r: Result) -> int:
        certain = r.confidence == "certain"
        if certain and r.template.kind and r.kind != r.template.kind:
            return 0
        if certain and not r.template.kind:
            return 1
        return 2 if certain else 3 if r.kind else 4

    best: dict[str, Result] = {}
    for r in results:
        if r.template.id not in best or rank(r) < rank(best[r.template.id]):
            best[r.template.id] = r
    return best


def anchor_of(kind: str, line: str) -> str:
    """The first anchor of ``kind``'s recogniser in ``line`` ("" when none is)."""
    from torchdoctor.explain.kinds import BY_KIND

    recogniser = BY_KIND.get(kind)
    return next((a for a in recogniser.anchors if a in line), "") if recogniser else ""


def certain_list(results: list[Result], only_kind: str = "") -> str:
    """Every template some recogniser is certain on, by recogniser, with the anchor that fired: what a reviewer
    reads to judge whether each message is printed for that cause alone."""
    per = worst(results)
    rows = defaultdict(list)
    for r in per.values():
        if r.confidence == "certain" and (not only_kind or r.kind == only_kind):
            rows[r.kind].append(r)
    out = []
    for kind in sorted(rows, key=lambda k: (-len(rows[k]), k)):
        out.append(f"== {kind}: certain on {len(rows[kind])} templates")
        for r in sorted(rows[kind], key=lambda r: (anchor_of(kind, r.line), r.template.id)):
            shown = r.line.split("\n[2026-")[0].replace("\n", " \\n ")[:140]
            out.append(f"  [{anchor_of(kind, r.line)}] {r.template.id} ({r.template.file[:40]}): {shown}")
    return "\n".join(out)


def missed(results: list[Result]) -> list[Result]:
    """Per template mapped to kind A, its worst form when the lead there is not A: another kind B, likely, or
    nothing recognised. A user whose log holds exactly that message is told another cause first."""
    return [
        r
        for r in worst(results).values()
        if r.template.kind and r.kind != r.template.kind and r.confidence != "certain"
    ]


def missed_list(results: list[Result], only_kind: str = "") -> str:
    """The templates of ``missed``, grouped by (mapped kind A, lead kind B), the largest group first: each row
    its template id, the form that was read and the line."""
    groups = defaultdict(list)
    for r in missed(results):
        if not only_kind or only_kind in (r.kind, r.template.kind):
            groups[(r.template.kind, r.kind or "-")].append(r)
    out = [
        f"mapped to A, lead B (not A, not certain): {sum(len(rows) for rows in groups.values())} templates"
    ]
    for (mapped, led), rows in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(f"== {mapped} led by {led}: {len(rows)}")
        for r in sorted(rows, key=lambda r: r.template.id):
            shown = r.line.replace("\n", " \\n ")[:140]
            out.append(f"  {r.template.id} | {r.form} | {shown}")
    return "\n".join(out)


def report(results: list[Result], only_kind: str = "", summary: bool = False) -> str:
    """The counts of (a), (b), (d), the (c) table, and the rows of (a), (b), (d)."""
    per = worst(results)
    cross = [
        r for r in per.values() if r.confidence == "certain" and r.template.kind and r.kind != r.template.kind
    ]
    unmapped = [
        r
        for r in per.values()
        if r.confidence == "certain" and not r.template.kind and r.template.id not in READINGS.get(r.kind, ())
    ]
    mapped_total = sum(1 for r in per.values() if r.template.kind)
    out = [
        f"{len(per)} templates ({mapped_total} mapped to a kind), forms: "
        + ", ".join(sorted({r.form for r in results})),
        f"(a) mapped to A, lead certain B != A: {len(cross)}",
        f"(b) unmapped, lead certain:           {len(unmapped)}",
    ]
    out.append(
        f"    (mapped to A, lead not A and not certain: {len(missed(results))}; not counted above, --list-missed)"
    )
    # (d) certain on a template its recogniser does not cite (Recogniser.templates: what it was built from)
    from torchdoctor.explain.kinds import BY_KIND

    uncited = [
        r
        for r in per.values()
        if r.confidence == "certain" and r.kind in BY_KIND and r.template.id not in BY_KIND[r.kind].templates
    ]
    # (c) per recogniser
    leads: dict[str, Counter] = defaultdict(Counter)
    for r in per.values():
        if not r.kind:
            continue
        leads[r.kind][r.confidence] += 1
        if r in cross:
            leads[r.kind]["a"] += 1
        if r in unmapped:
            leads[r.kind]["b"] += 1
        if r in uncited:
            leads[r.kind]["d"] += 1
    out.append("")
    out.append(
        f"(c) {'recogniser':<30} {'leads':>6} {'certain':>8} {'likely':>7} {'(a)':>5} {'(b)':>5} {'(d)':>5}"
    )
    for kind, c in sorted(leads.items(), key=lambda kv: (-(kv[1]["a"] + kv[1]["b"] + kv[1]["d"]), kv[0])):
        out.append(
            f"    {kind:<30} {c['certain'] + c['likely']:>6} {c['certain']:>8} {c['likely']:>7} {c['a']:>5} {c['b']:>5} {c['d']:>5}"
        )
    out.insert(
        3,
        f"(d) certain on a template its recogniser does not cite: {len(uncited)} (another release's wording of a "
        "cited one, or a message it was not built from: listed below)",
    )
    if summary:
        return "\n".join(out)
    for title, rows in (
        ("(a) cross-firing", cross),
        ("(b) unmapped, certain", unmapped),
        ("(d) certain, template not cited by the recogniser", uncited),
    ):
        rows = [r for r in rows if not only_kind or r.kind == only_kind]
        out.append("")
        out.append(f"{title}: template id | mapped kind | certain lead | form | line")
        for r in sorted(rows, key=lambda r: (r.kind, r.template.id)):
            shown = r.line.replace("\n", " \\n ")[:160]
            out.append(f"  {r.template.id} | {r.template.kind or '-'} | {r.kind} | {r.form} | {shown}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the audit and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", action="store_true", help="the counts only")
    parser.add_argument("--kind", default="", help="list only the rows whose lead is this kind")
    parser.add_argument("--form", choices=("bare", "printed", "both"), default="both")
    parser.add_argument(
        "--context", action="store_true", help="also each message followed by torchrun's failure summary"
    )
    parser.add_argument(
        "--list-certain",
        action="store_true",
        help="also every template a recogniser is certain on, by recogniser",
    )
    parser.add_argument(
        "--list-missed",
        action="store_true",
        help="also every template mapped to kind A whose lead is another kind or none, grouped by (A, lead)",
    )
    args = parser.parse_args(argv)
    forms = ("bare", "printed") if args.form == "both" else (args.form,)
    if args.context:
        forms += ("summary",)
    started = time.perf_counter()
    results = audit(forms)
    print(report(results, args.kind, args.summary))
    if args.list_certain:
        print()
        print(certain_list(results, args.kind))
    if args.list_missed:
        print()
        print(missed_list(results, args.kind))
    print(f"\n{len(results)} explain runs in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
