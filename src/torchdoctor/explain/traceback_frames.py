"""The frames of the traceback that holds an error line, in a log that may hold several tracebacks.

A log pasted into an issue often holds more than one traceback: a first attempt and a retry, each rank's, an
exception raised while handling another. What a frame says about an error (an installed package's code called the
operator that refused, the script's own code did) is a fact of that error's own traceback, not of the log: the
frames read are kept by line number, and an error line's traceback is the frames printed between the previous
exception (or the ``Traceback (most recent call last):`` header after it) and that line, or, where there are none
(a traceback pasted below its error line), the frames after it up to the next exception or the next traceback's
header.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from torchdoctor.explain.first_failure import installed_package
from torchdoctor.explain.traceback_styles import PYTEST_PLACE
from torchdoctor.hang.source import is_library

# a frame as Python prints it; the installed package it is in (site-packages/<package>/...), torch's own and
# torchvision's left out: the operators that refuse are theirs, never whose code called them
FRAME = re.compile(r'File "(?P<file>[^"\n]{1,300})", line \d+(?:, in (?P<function>[\w<>.]{1,100}))?')
_INSTALLED = re.compile(
    r"(?:site|dist)-packages[\\/]+(?!torch[\\/])(?!torchvision[\\/])(?P<package>[A-Za-z_]\w{0,60})[\\/]"
)
HEADER = "Traceback (most recent call last)"


@dataclass
class Frames:
    """The frames, exception lines and traceback headers one log's lines showed, by line number (in reading
    order, so each list is sorted)."""

    frames: list[tuple[int, str]] = field(default_factory=list)  # (line, installed package or "")
    functions: dict[int, str] = field(default_factory=dict)  # a frame's line: the function Python named on it
    # the frames in the user's own code (not a library's): their line, and the source line printed below them
    own: dict[int, str] = field(default_factory=dict)
    ends: list[int] = field(default_factory=list)  # lines that are an exception (a traceback's last line)
    headers: list[int] = field(default_factory=list)  # "Traceback (most recent call last):" lines

    def read(self, number: int, line: str, is_exception: bool, code: str = "") -> None:
        """Note what line ``number`` is: a frame (and its package), an exception, a traceback's header
        (``code``: the line below it, a frame's source line where it is one)."""
        if is_exception:
            self.ends.append(number)
        if HEADER in line:
            self.headers.append(number)
        elif ('File "' in line and (frame := FRAME.search(line))) or (
            ".py:" in line
            and (frame := PYTEST_PLACE.match(line))  # pytest's entry: "path.py:564: in __iter__"
        ):
            package = _INSTALLED.search(frame["file"])
            self.frames.append((number, package["package"] if package else ""))
            self.functions[number] = frame.groupdict().get("function") or ""
            if not package and not is_library(frame["file"]):
                self.own[number] = code

    def holding(self, line: int) -> list[str]:
        """The frames (each its installed package, or "") of the traceback that holds the error on ``line``,
        outermost first: the traceback printed above it, else the one pasted below it (none: [])."""
        return [package for _, package in self.holding_frames(line)]

    def holding_functions(self, line: int) -> list[str]:
        """The functions of `holding`'s frames, outermost first ("" where a frame's line named none)."""
        return [self.functions.get(at, "") for at, _ in self.holding_frames(line)]

    def holding_handing(self, line: int) -> list[bool]:
        """Whether each of `holding`'s frames is the user's own code calling with arguments, outermost first:
        its call of the function the frame below it runs, where its source line names that one
        (``print(evaluate())`` hands evaluate nothing), else any call on it."""
        frames = self.holding_frames(line)
        below = [self.functions.get(at, "") for at, _ in frames[1:]] + ([""] if frames else [])
        return [
            at in self.own and _hands(self.own[at], called)
            for (at, _), called in zip(frames, below, strict=True)
        ]

    def holding_own(self, line: int) -> list[bool]:
        """Whether each of `holding`'s frames is the user's own code, outermost first."""
        return [at in self.own for at, _ in self.holding_frames(line)]

    def holding_frames(self, line: int) -> list[tuple[int, str]]:
        """`holding`'s frames as (line number, installed package or "")."""
        start = max(_last_before(self.ends, line), _last_before(self.headers, line))
        above = self._between(start, line)
        if above:
            return above
        # pasted below it: up to the next exception, or to the next traceback's header after its first frame
        first = bisect_right(self.frames, (line, "\uffff"))
        if first == len(self.frames):
            return []
        ends = [
            _first_after(self.ends, line),
            _first_after(self.headers, self.frames[first][0]),
        ]
        return self._between(line, min((n for n in ends if n is not None), default=None))

    def _between(self, start: int, end: int | None) -> list[tuple[int, str]]:
        """The frames after line ``start`` and before line ``end`` (None: to the end)."""
        first = bisect_right(self.frames, (start, "\uffff"))
        last = len(self.frames) if end is None else bisect_left(self.frames, (end, ""))
        return self.frames[first:last]


def _first_after(lines: list[int], line: int) -> int | None:
    """The first of the sorted ``lines`` after ``line`` (None: none)."""
    at = bisect_right(lines, line)
    return lines[at] if at < len(lines) else None


def _last_before(lines: list[int], line: int) -> int:
    """The last of the sorted ``lines`` before ``line`` (0: none)."""
    at = bisect_left(lines, line)
    return lines[at - 1] if at else 0


# a module's forward and the calls that run it: code below one of these runs on what the module's caller handed it
_MODULE_CALL = re.compile(r"^(?:forward|_call_impl|_wrapped_call_impl|__call__)$")
# a wrapper that runs the function it wraps on its caller's arguments (torchmetrics' Metric update's wrapped_func,
# functools-style decorators): raising there, it checked what the caller passed, not what the package made
_WRAPPER = re.compile(r"^(?:wrapped_func|wrapped|wrapper|inner|decorate_context|_fn)$")


def frame_facts(
    packages: list[str], functions: list[str] = (), handing: list[bool] = (), own: list[bool] = ()
) -> dict:
    """The facts an error's traceback gives: that it has frames (``traceback_frame``), the installed package
    of its innermost frame that is in one (``installed_frame``, Python printing the innermost frame last), and,
    where the innermost frame of all is that package's own code and no module's forward runs above it
    (``functions``: each frame's, outermost first), that package as the one that raised (``library_raised``, its
    function ``library_raised_in``: an optimizer's step, a trainer's loop, not a model run on the script's batch,
    nor a helper the user's own code called with arguments (``handing``: each frame's; timm's
    accuracy(output, target) refusing a target on the CPU checked what it was handed), directly or through the
    package's own frames and torch's (``own``: whether each frame is the user's code; a ``@torch.no_grad()``
    decorator's frame between the package's))."""
    if not packages:
        return {}
    installed = [package for package in packages if package]
    facts = {"traceback_frame": True, **({"installed_frame": installed[-1]} if installed else {})}
    if (
        packages[-1]
        and functions
        and functions[-1]
        and not _WRAPPER.match(functions[-1])
        and not any(_MODULE_CALL.match(f) for f in functions)
        and not _handed_by_own_code(packages, handing, own)
    ):
        facts["library_raised"], facts["library_raised_in"] = packages[-1], functions[-1]
    return facts


def _handed_by_own_code(packages: list[str], handing: list[bool], own: list[bool] = ()) -> bool:
    """Whether the innermost package's code was entered from the user's own code by a call passing arguments
    (accuracy(output, target); not optimizer.step(), trainer.train()): the user's frame nearest above it, reached
    through that package's frames and torch's (or the standard library's: frames of no installed package) — not
    through another installed package's, whose code, not the user's, made the call. ``own`` unknown (a caller
    that has only ``handing``): the frame directly above the package's last run of frames."""
    at = len(packages) - 1
    while at > 0 and packages[at - 1] == packages[-1]:
        at -= 1
    if len(own) != len(packages):
        return 0 < at <= len(handing) and handing[at - 1]
    at -= 1
    while at >= 0 and not own[at] and packages[at] in ("", packages[-1]):
        at -= 1
    return at >= 0 and own[at] and at < len(handing) and handing[at]


# a call passing arguments: a name, "(", then something other than ")"
_HANDS = re.compile(r"\w\s*\(\s*[^)\s]")


def _hands(code: str, called: str) -> bool:
    """Whether the source line ``code`` passes arguments to the function ``called`` where it names it (the frame
    below may be a wrapper's, torch's ``decorate_context``: then any call on the line that passes some)."""
    name = called.rsplit(".", 1)[-1]
    if name.isidentifier() and (calls := list(re.finditer(rf"\b{re.escape(name)}\s*\(", code))):
        return any(re.match(r"\s*[^)\s]", code[call.end() :]) for call in calls)
    return bool(_HANDS.search(code))


# frames that raise for their caller: a class's or a module's attribute hook (DeepSpeedEngine.__getattr__,
# nn.Module.__getattr__, numpy's module __getattr__ raise the AttributeError the caller's lookup caused) and the
# import machinery (importlib, CPython's frozen bootstrap)
_HOOK = re.compile(r"^__getattr(?:ibute)?__$")
_IMPORT_MACHINERY = re.compile(r"^<frozen |[/\\]importlib[/\\]")


def asking_package(frames: list) -> str:
    """The installed package of the code that asked for what an exception says is missing: the innermost of
    ``frames`` (outermost first, each with ``file`` and ``function``) that is not an attribute hook or the
    import machinery; "" when that is the script's own code (or there are no frames), and "" too when the
    script's call went into torch first, which called the package back (a hook the package registered on the
    script's tensors or modules, run by the script's own ``loss.backward()`` or ``model(x)``: DeepSpeed's ZeRO
    gradient hooks reading state its engine's backward sets up, DeepSpeed#6995): the script's call, not the
    package's, is what asked."""
    asking = next(
        (
            at
            for at in range(len(frames) - 1, -1, -1)
            if not _HOOK.match(frames[at].function or "") and not _IMPORT_MACHINERY.search(frames[at].file)
        ),
        None,
    )
    if asking is None:
        return ""
    package = installed_package(frames[asking].file) or ""
    if not package:
        return ""
    script = next((at for at in range(asking, -1, -1) if not is_library(frames[at].file)), None)
    entered = installed_package(frames[script + 1].file) if script is not None else None
    return "" if package != "torch" and entered == "torch" else package
