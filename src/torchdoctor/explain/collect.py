"""Running every recogniser over the candidate lines of one log: hits, and the facts of the whole log."""

from __future__ import annotations

import re

from torchdoctor.explain import cut_traceback, raised_warnings, sentence_case
from torchdoctor.explain.first_failure import (
    Raised,
    after_a_victim,
    after_the_failure,
    cut,
    cut_after_assert,
    exception_at,
    installed_module,
    installed_package,
    placed_by_pytest,
)
from torchdoctor.explain.kinds import CONTEXT_FACTS, RECOGNISERS
from torchdoctor.explain.literals import finder
from torchdoctor.explain.printed_versions import first_printed
from torchdoctor.explain.reader import TAIL, Window, ranks_in_head, windows
from torchdoctor.explain.recognisers import Context, Hit, Recogniser
from torchdoctor.explain.steps_before import KEPT, OUT_OF_MEMORY, is_progress, progress_read
from torchdoctor.explain.traceback_frames import Frames, asking_package, frame_facts

# A line printed as a warning, after which the program went on: Python's warnings ("train.py:3: UserWarning: "),
# a logger's or a package's "WARNING:" / "WARNING[XFORMERS]:", ultralytics' "WARNING ⚠️ " (its LOGGER's prefix for
# a skipped image or label), DeepSpeed's " [WARNING] " (its op builders' notes at every start, its logger's lines:
# found by CERT10, session 38, where libaio's note led over the error that stopped the run). Not NCCL's "NCCL WARN",
# which reports the failure.
_WARNING = re.compile(r"\b[A-Z]\w*Warning: |\bWARNING(?:\[[^\]\n]{0,40}\])?:|\bWARNING ⚠️|\[WARNING\] ")

# A log that repeats one failure a million times still gives a bounded report.
MAX_HITS_PER_KIND = 1000
MAX_RAISED = 500  # exceptions kept per invocation (the first ones: what started it is early)
SHORT = 256 * 1024  # bytes: a log this small has every line looked at
_ERROR_LINE = re.compile(r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception)\b(?::|$)")
# an exception quoted after words on the same line: "Raises the error TypeError: f() got ...", "error: KeyError: 'x'"
_IN_PROSE = re.compile(
    r"[\s(\"'`](?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)): (?P<message>\S.{0,400})"
)
_UNEXPECTED_KEYWORD = re.compile(r"\(\) got an unexpected keyword argument '(?P<keyword>\w{1,100})'")
# lines between an exception and the traceback of one raised while handling it ("During handling of the above
# exception"): its message's own lines (a CUDA error's advice, a long NCCL report), other ranks' lines between
_HANDLED_WITHIN = 60
_NEAR_A_QUOTE = 6  # lines above and below an error quoted in prose where the call it quotes is looked for
_RAISE_ECHO_LINES = 4  # lines below a `raise` source line where the message it raises is looked for
_ROOT_CAUSE = re.compile(r"^\s*rank\s*:\s*(?P<rank>\d+)(?: \(local_rank: (?P<local_rank>\d+)\))?")
# the line under a rank in torchrun's failure summary: how that rank ended ("exitcode  : -15 (pid: 8430)")
_SUMMARY_EXIT = re.compile(r"^\s*exitcode\s*:\s*(?P<code>-?\d+)")
_FAILURE_SUMMARY = "Root Cause (first observed failure)"
_LIGHTNING = ("pytorch_lightning", "lightning/pytorch", "lightning.pytorch", "lightning_fabric")
_PID = re.compile(r"\(pid: (\d+)\)")
# torch/distributed/elastic/multiprocessing/api.py, once per failed worker group: "failed (exitcode: 1) local_rank: 1
# (pid: 16183) of binary: /usr/bin/python"
# (torchrun's own log prefix names its process: "E1130 13:54:07.733000 17073 torch/distributed/...")
_GROUP_FAILED = re.compile(
    r"^(?:[EW]\d{4} [\d:.]{8,20} (?P<agent>\d{1,10}) \S{0,300} )?"
    r".{0,300}?\bfailed \(exitcode: -?\d+\) local_rank: \d+ \(pid: \d+\) of binary: "
)
_RECENT = 40  # lines read one by one kept, the traceback above a message whose line ends in ":"
# A message retyped in prose (an issue's text, a word processor, a chat) often has typographic quotes:
# ‘DeepSpeedCPUAdam’ object has no attribute ‘ds_opt_adam’. The sources print straight ones.
_TYPOGRAPHIC = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def straight_quotes(line: str) -> str:
    """``line`` with typographic quotes (‘ ’ “ ”) as the straight ones the sources print."""
    # four ``in``s, no generator (every line read passes here): on a line of ASCII text each answers at once
    if "\u2018" in line or "\u2019" in line or "\u201c" in line or "\u201d" in line:
        return line.translate(_TYPOGRAPHIC)
    return line


# letters of each anchor the pre-filter looks for (`any_anchor`): enough that a line holding them and no anchor is
# rare (57 of the train half's lines), few enough that the pattern compiles in a quarter of the time
_PREFIX = 16


def any_anchor(recognisers: tuple[Recogniser, ...]) -> re.Pattern:
    """One pattern every line holding an anchor matches: a line it does not match (most of the first and last
    256 KB of a log, read line by line) is passed over by one search instead of one ``in`` per anchor.

    It looks for each anchor's first `_PREFIX` letters (the whole anchor where it is shorter): a line it passes
    with no whole anchor is one `places` finds none in. The 3,200 anchors whole made a pattern Python's ``re``
    took 0.3 s of CPU to compile at every start of explain (a third of its start on a short log, growing with
    every anchor added); their beginnings compile in 0.08 s and a line is searched as fast. They are laid out
    as a tree of their common beginnings (``Address already in use|Assertion`` -> ``A(?:ddress already in
    use|ssertion)``): Python's ``re`` tries the alternatives of a branch one after the other at every position,
    so a tree, with a few per branch, finds the same lines three times faster than a flat list of 200
    (`search` says whether there is one; where it stops may differ).
    """
    return literal_tree(sorted({a[:_PREFIX] for r in recognisers for a in r.anchors}))


def literal_tree(words: list[str]) -> re.Pattern:
    """A pattern that finds any of ``words`` (literal text), written as a tree of their common beginnings.

    >>> literal_tree(["loss=nan", "loss: nan", "Killed"]).pattern
    '(?:Killed|loss(?::\\\\ nan|=nan))'
    """
    tree: dict = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here

    def branch(node: dict) -> str:
        alternatives = [re.escape(char) + branch(rest) for char, rest in sorted(node.items()) if char]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        return f"(?:{body})?" if "" in node else body  # a shorter word ends here: the rest is optional

    return re.compile(branch(tree))


_ANCHORS = any_anchor(RECOGNISERS)
# the anchors' capitalised twins, read where a sentence starts as the anchors they capitalise (sentence_case.py:
# "RuntimeError: No kernel image is available ..." retyped into an issue). A line without an anchor's beginning
# is looked at for a twin's first 8 letters too: a tree of those compiles in 0.01 s (the twins whole, in the
# anchors' tree when it held them whole, made every start of explain a fifth of a second slower) and is searched
# in a thirtieth of the anchors' time; `sentence_case.as_printed` says whether the whole twin is there
_TWINS = sentence_case.by_beginning(sentence_case.capitalised(a for r in RECOGNISERS for a in r.anchors))
_TWIN_STARTS = literal_tree(sentence_case.beginnings(_TWINS))


_GRAM = (
    4  # anchors are looked up by their first four letters: a line holds few of the 2,000 anchors' beginnings
)


def anchored(recognisers: tuple[Recogniser, ...]) -> dict[str, dict[str, tuple[int, ...]]]:
    """Each anchor and the recognisers (their places in ``recognisers``) it starts, by the anchor's first
    ``_GRAM`` letters (the whole anchor where it is shorter): a line with an anchor looks up only the anchors
    that begin with a piece of it, each once, instead of every anchor (`places`)."""
    found: dict[str, dict[str, tuple[int, ...]]] = {}
    for place, recogniser in enumerate(recognisers):
        for anchor in dict.fromkeys(recogniser.anchors):
            starts = found.setdefault(anchor[:_GRAM], {})
            starts[anchor] = (*starts.get(anchor, ()), place)
    return found


_ANCHORED = anchored(RECOGNISERS)
_SHORT_ANCHORS = {
    anchor: places
    for gram, anchors in _ANCHORED.items()
    if len(gram) < _GRAM
    for anchor, places in anchors.items()
}


# torch/serialization.py's unpickling: torch.load's _load / _legacy_load running `unpickler.load()` (torch 1.x) or
# its UnpicklerWrapper.find_class (1.13+), whose imports are the modules a pickled object's class lives in; or the
# pickle_module's own find_class (dill's) with torch.load's frames above it
_UNPICKLING = re.compile(r"torch[/\\]serialization\.py$")
_UNPICKLER_CALL = re.compile(r"^find_class |unpickler\.load\(\)")


def places(line: str) -> set[int]:
    """The places in RECOGNISERS of the recognisers whose anchors ``line`` holds."""
    grams = {line[i : i + _GRAM] for i in range(len(line) - _GRAM + 1)}
    found = {place for anchor, starts in _SHORT_ANCHORS.items() if anchor in line for place in starts}
    for gram in grams.intersection(_ANCHORED):
        found.update(
            place for anchor, starts in _ANCHORED[gram].items() if anchor in line for place in starts
        )
    return found


# the literals of the whole-log facts (versions, settings), one search for a line that holds none of them
# the context facts a traceback's frame gives, where the innermost frame read is kept (the first read for the others)
INNERMOST = cut_traceback.FRAME_KEYS
_CONTEXT_LITERALS = literal_tree(sorted({literal for literal, _ in CONTEXT_FACTS}))


_LITERALS = tuple(dict.fromkeys(literal for literal, _ in CONTEXT_FACTS))
_LONG_TEXT = 64 * 1024  # characters: a log's head, not a line


def _literals_in(text: str) -> set[str]:
    """The literals of `CONTEXT_FACTS` that ``text`` (a log's head, a megabyte) holds.

    Found with the C library's ``memmem`` in its UTF-8 bytes, where a literal is exactly when it is in the text:
    0.05 s for the 330 literals in a megabyte, against 0.16 s for ``in`` on the text, each literal once.
    """
    raw = text.encode("utf-8", "surrogatepass")
    find, size = finder(raw), len(raw)
    return {literal for literal in _LITERALS if find(literal.encode("utf-8"), 0, size) >= 0}


def _call_passing(message: str, lines: list[str]) -> str | None:
    """The first of ``lines`` that calls a class (a capitalised name) with the keyword ``message`` says was
    unexpected, or None (no such message, no such line).

    >>> _call_passing("__init__() got an unexpected keyword argument 'p'", ["x = 1", "loss = nn.L(p=0.1)"])
    'loss = nn.L(p=0.1)'
    """
    found = _UNEXPECTED_KEYWORD.search(message)
    if found is None:
        return None
    call = re.compile(rf"(?<!\w)[A-Z]\w{{0,100}}\s*\([^()\n]{{0,300}}?\b{found['keyword']}\s*=(?!=)")
    return next((line for line in lines if call.search(line)), None)


class Collector:
    """Accumulates hits and context over every file of one invocation."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.ctx = Context()
        self._per_kind: dict[str, int] = {}
        self._order = 0
        self.raised: list[Raised] = []  # every exception line, in input order (the first `MAX_RAISED`)
        self.root_rank: int | None = None  # torchrun's "Root Cause (first observed failure)" rank
        # (line, torchrun's pid where its log prefix names it) where torchrun said a worker group failed: once per
        # attempt (console_attempts.py)
        self.group_failures: list[tuple[int, str | None]] = []
        self._recent: list[tuple[int, str]] = []  # (number, line) of the last lines read one after another
        self._progress: list[
            tuple[int, str]
        ] = []  # the last progress lines read (is_progress), (number, line)
        self._frames = Frames()  # the traceback frames of the log being read, by line

    def read(
        self, stream, source: str, rank: int | None = None, head: bytes = b"", size: int | None = None
    ) -> None:
        """Read one log (a binary stream) whose text came from ``source`` (and ``rank``, when known).

        Its first and last `TAIL` bytes are read line by line, whether it is a file, a pipe or a gzip file
        (``size`` is no longer needed for that: the end is held back as it is read)."""
        self.ctx.sources.append(source)
        if rank is not None:
            self.ctx.ranks.add(rank)
        self.ctx.ranks |= ranks_in_head(head)
        if head:
            text = head.decode("utf-8", "replace")
            self._context(text)
            self._framework(text)
        # A short paste (all of it in its head) is read line by line: an issue title quotes a message without
        # the "RuntimeError:" that holds the trigger. A long log is read through the triggers.
        short = len(head) < SHORT
        self._recent = []  # a new file: nothing is above its first line
        self._progress = []  # nor any progress line
        self._frames, first_hit = Frames(), len(self.hits)
        for window in windows(stream, every_line=short, every_line_to=TAIL, every_line_last=TAIL):
            self._window(window, source, rank)
        for hit in self.hits[first_hit:]:
            # what a traceback's frames say is a fact of the error whose traceback they are, not of the log
            frames = self._frames
            if facts := frame_facts(
                frames.holding(hit.line),
                frames.holding_functions(hit.line),
                frames.holding_handing(hit.line),
                frames.holding_own(hit.line),
            ):
                hit.facts = {**hit.facts, **facts}
        cut_short = cut_after_assert([line for _, line in self._recent])
        if cut_short is not None and len(self.raised) < MAX_RAISED:
            self._order += 1
            cut_short.source, cut_short.rank, cut_short.order = source, rank, self._order
            cut_short.line = self._recent[-1][0]  # the assert's line: the exception's is not in the log
            self.raised.append(cut_short)

    def _window(self, window: Window, source: str, file_rank: int | None) -> None:
        rank = window.rank if window.rank is not None else file_rank
        if window.rank is not None:
            self.ctx.ranks.add(window.rank)
        hooked = window.hooked
        self._line(
            window.line,
            window.following,
            window.number,
            source,
            rank,
            window.before,
            window.number in hooked,
            window.said_at,
        )
        before = window.before
        follows = bool(self._recent) and self._recent[-1][0] == window.number - 1
        # the lines just read above it, where they are read one by one (for the lines it announces)
        if not before and follows and window.also:
            before = [line for _, line in self._recent]
        for number in window.also:
            at = number - window.number - 1
            above = [*before, window.line, *window.following[:at]]  # the traceback above it
            self._line(
                window.following[at],
                window.following[at + 1 :],
                number,
                source,
                rank,
                above,
                number in hooked,
            )
        if not follows:
            self._recent = []  # lines were skipped: what came before is not the lines above
        # the window's line and the following lines read with it (a traceback header's first frame and its
        # source line): the lines above the next window, which starts after them
        read = window.following[: max(window.also, default=window.number) - window.number]
        recent = self._recent  # kept in place: a window a line, where every line is read
        recent.append((window.number, window.line))
        recent.extend((window.number + 1 + i, text) for i, text in enumerate(read))
        del recent[:-_RECENT]

    def _line(
        self,
        line: str,
        following: list[str],
        number: int,
        source: str,
        rank: int | None,
        before: list[str] | None = None,
        hooked: bool = False,
        said_at: str = "",
    ) -> None:
        self.ctx.candidates += 1
        self._order += 1
        if is_progress(line):  # a step's line or a bar, for an error too far below it to have it above
            self._progress.append((number, line))
            del self._progress[:-KEPT]
        line = straight_quotes(line)
        self._context(line)
        is_error = _ERROR_LINE.match(line) is not None
        if is_error:
            self.ctx.last_error_line = cut(line.strip(), 300)
        elif self.ctx.prose_exception is None and "rror: " in line and (quoted := _IN_PROSE.search(line)):
            quote = (quoted["type"], quoted["message"].strip(), source, number, cut(line.strip(), 300))
            self.ctx.prose_exception = quote
            nearby = [text for _, text in self._recent[-_NEAR_A_QUOTE:]] + following[:_NEAR_A_QUOTE]
            if call := _call_passing(quote[1], nearby):
                # CPython's bare "__init__() got an unexpected keyword argument 'x'" quoted with the call that
                # passed it on a line of its own: the call names the class
                self.ctx.facts["prose_call"] = cut(call.strip(), 300)
        raised = None
        if before is not None and len(self.raised) < MAX_RAISED:
            raised = exception_at(line, before, following, said_at)
            if raised is not None and said_at:
                raised.source, raised.line, raised.rank = source, number, rank
                raised = None if placed_by_pytest(raised, self.raised) else raised
            if raised is not None:
                self._framework("\n".join(before))
                raised.source, raised.line, raised.rank, raised.order = source, number, rank, self._order
                if raised.raised_from_above or raised.while_handling:
                    cause = next(
                        (r for r in reversed(self.raised) if r.source == source and r.rank == rank), None
                    )
                    if cause is not None and raised.raised_from_above:
                        cause.wrapped_by = raised
                    elif cause is not None and raised.line - raised.above - cause.line <= _HANDLED_WITHIN:
                        # only the exception printed just above "During handling ...": where the log lost that
                        # one (a paste cut it), an older one far above is not what this was raised handling
                        raised.handling = cause
                self.raised.append(raised)
                if raised.traceback:
                    self.ctx.facts["traceback_in_input"] = True
        self._frames.read(number, line, is_error or raised is not None, following[0] if following else "")
        if "(pid: " in line:  # torchrun names each failed worker's pid: "exitcode  : 1 (pid: 144)"
            for pid in _PID.findall(line):
                self.ctx.facts.setdefault("worker_pids", set()).add(pid)
        if "of binary: " in line and (failed := _GROUP_FAILED.match(line)):
            self.group_failures.append((number, failed["agent"]))
        if (ended := _SUMMARY_EXIT.match(line)) and self._recent and self._recent[-1][0] == number - 1:
            named = _ROOT_CAUSE.match(self._recent[-1][1])
            if named:  # each rank torchrun's summary names, and its exit code (-15: stopped by torchrun)
                self.ctx.facts.setdefault("launcher_exits", {})[int(named["rank"])] = int(ended["code"])
                if named["local_rank"] is not None and named["local_rank"] != named["rank"]:
                    # a global rank not its local one: a node other than the first of a multi-node job, whose
                    # torchrun lists its own workers only (the other nodes' failures are in their consoles)
                    self.ctx.facts["launcher_other_nodes"] = True
        if line.startswith(_FAILURE_SUMMARY):
            self.ctx.facts["failure_summary_in_input"] = True
            root = next((m for text in following[:4] if (m := _ROOT_CAUSE.match(text))), None)
            if root and self.root_rank is None:
                self.root_rank = int(root["rank"])
        if _ANCHORS.search(line) is None and _TWIN_STARTS.search(line) is None:
            return  # most lines: no anchor's beginning at all, one search says so
        line = sentence_case.as_printed(line, _TWINS)
        for recogniser in map(RECOGNISERS.__getitem__, sorted(places(line))):
            text = (
                "\n".join([line, *map(straight_quotes, following[: recogniser.span])])
                if recogniser.span
                else line
            )
            facts = recogniser.read(text)
            if facts is None or (recogniser.prefixed and not hooked):
                continue
            if _echoes_the_raise(line, recogniser.anchor_on(line), following):
                continue
            count = self._per_kind.get(recogniser.kind, 0)
            self._per_kind[recogniser.kind] = count + 1
            if count < MAX_HITS_PER_KIND:
                if raised is not None and raised.raised_in is not None:
                    # the line is an exception: where it was raised is a fact of it (an installed package's
                    # frame, not the user's), which a recogniser's fix can name
                    package = installed_package(raised.raised_in.file)
                    if package:
                        facts = {**facts, "raised_in_package": package}
                        # the module too: a message CPython prints for any code (len(None)) is one kind's in one
                        # module only (torch's default_collate)
                        facts["raised_in_module"] = installed_module(raised.raised_in.file)
                        if raised.raised_code.lstrip().startswith("from ."):
                            # a relative import: the package importing one of its own modules
                            facts["raised_in_relative_import"] = raised.raised_code.strip()
                        if _UNPICKLER_CALL.search(
                            f"{raised.raised_in.function} {raised.raised_code}"
                        ) and any(
                            _UNPICKLING.search(frame.file) for frame in (*raised.frames, raised.raised_in)
                        ):
                            # torch.load's unpickler importing what the pickle names: the checkpoint's, not torch's
                            # (torch's own, or the pickle_module's find_class below torch.load's frames: dill's)
                            facts["raised_by_unpickler"] = True
                    else:  # the user's own file, a local copy of a package's, or the standard library's
                        facts = {**facts, "raised_in_file": raised.raised_in.file}
                    facts["asked_in_package"] = asking_package(raised.frames)
                    # the packages its frames went through below the user's code: whose code called the one that
                    # refused (a library's own model, not the user's)
                    facts = {**facts, "frame_packages": tuple(raised.packages)}
                    if raised.outermost is not None and raised.outermost.file != raised.raised_in.file:
                        # raised in a file that other code imported or ran, not in the one started
                        facts["raised_below_top"] = raised.outermost.file
                    if recogniser.raised_facts is not None:
                        facts = {**facts, **recogniser.raised_facts(raised)}
                if raised is not None and after_the_failure(raised):
                    # raised by code that ran because an error had already happened (verdict._after_the_failure)
                    how = "ignored" if raised.ignored else "victim" if after_a_victim(raised) else "handling"
                    facts = {**facts, "after_the_failure": how}
                if before and recogniser.kind in OUT_OF_MEMORY:
                    # the steps that fitted before it ran out: the lines above it, and the progress lines read
                    # before those (a traceback longer than the lines kept above an error)
                    earlier = [text for at, text in self._progress if at < number - len(before)]
                    facts = {**facts, **progress_read([*earlier, *before])}
                specific = recogniser.specific_on(line)
                anchor = recogniser.anchor_on(line)
                # a warning's line, or the source line Python prints under it (`warn("...")`, indented)
                warned = _WARNING.search(line) is not None or (
                    line[:1].isspace() and _WARNING.search(self._line_above(number, before)) is not None
                )
                if warned and (warning := raised_warnings.raised(line, self._lines_above(number, before))):
                    # a warning raised as an exception (PYTHONWARNINGS=error) is what stopped the run
                    warned, facts = False, {**facts, "warning_raised": warning}
                kind = recogniser.kind_of(facts)  # whose code asked for a missing name may make it another's
                self.hits.append(
                    Hit(kind, facts, source, number, rank, self._order, specific, anchor, warned)
                )

    def _lines_above(self, number: int, before: list[str] | None) -> list[str]:
        """The lines just above line ``number``, where they were read: the window's own, else the lines read
        one by one up to it ([] otherwise)."""
        if before:
            return before
        if self._recent and self._recent[-1][0] == number - 1:
            return [text for _, text in self._recent]
        return []

    def _line_above(self, number: int, before: list[str] | None) -> str:
        """The line just above line ``number``, where it was read: the window's own lines above, else the
        last line read when it was the one before ("" otherwise)."""
        above = self._lines_above(number, before)
        return above[-1] if above else ""

    def _framework(self, text: str) -> None:
        """The framework that built the DDP wrapper, from its paths in a traceback or its start-up lines:
        its users fix things in its options, not in torch's."""
        if "framework" not in self.ctx.facts and any(name in text for name in _LIGHTNING):
            self.ctx.facts["framework"] = "lightning"

    def _context(self, text: str) -> None:
        if _CONTEXT_LITERALS.search(text) is None:  # most lines: no fact of the whole log, one search says so
            return
        holds = _literals_in(text).__contains__ if len(text) > _LONG_TEXT else text.__contains__
        # a pattern under several literals (a package's names: "torch", "pytorch") is searched once
        searched: dict[re.Pattern, re.Match | None] = {}
        for literal, pattern in CONTEXT_FACTS:
            if holds(literal):
                if pattern not in searched:
                    searched[pattern] = first_printed(pattern, text)
                found = searched[pattern]
                if found:
                    for key, value in found.groupdict().items():
                        self.ctx.facts.setdefault(key, value)
                    if INNERMOST & found.groupdict().keys():
                        # a frame's fact: the innermost frame, nearest where the error was raised, which Python
                        # prints last, whether its traceback is pasted above the error line or below it
                        *_, last = pattern.finditer(text)
                        self.ctx.facts.update(
                            {k: v for k, v in last.groupdict().items() if k in INNERMOST and v}
                        )

    def count(self, kind: str) -> int:
        """How many times ``kind`` was seen, including the hits not kept."""
        return self._per_kind.get(kind, 0)


def _echoes_the_raise(line: str, anchor: str, following: list[str]) -> bool:
    """Whether ``line`` is the source line a traceback prints under a frame, a ``raise`` whose message (an
    f-string's ``{line}``, a ``%s``) is printed filled on a line just below: the message is read there, with the
    values, not from the code's placeholders."""
    code = line.lstrip(" \t>")
    return (
        (line[:1].isspace() or line.startswith(">"))  # pytest marks the line that raised with ">"
        and code.startswith("raise ")
        and bool(anchor)
        and any(anchor in text and not text[:1].isspace() for text in following[:_RAISE_ECHO_LINES])
    )
