"""Where a rank is in its source: stack frames, "is this the user's code", the condition on the rank around a
line and the loop it sits in.

One answer to each question for the hang report, the flight recorder, debug mode and explain.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

# A condition that tells ranks apart: ``if rank == 0``, ``if self.gpu_id == 0``, ``is_main_process``, nanoGPT's
# ``master_process`` (and the scripts written from it), ``is_master``.
RANK_WORDS = re.compile(
    r"\b(\w*rank\w*|gpu_id|local_gpu|device_id|is_main_process|is_local_main_process|is_world_process_zero|"
    r"is_global_zero|process_index|local_process_index|main_process|master_process|is_master)\b",
    re.IGNORECASE,
)
# ("<frozen ...>", "<string>" and the like are no file of the user's; a notebook cell's "<ipython-input-17-...>" is;
# Windows keeps the standard library in the installation's or the conda environment's own Lib folder)
_LIBRARY = re.compile(
    r"[/\\](site-packages|dist-packages|lib[/\\]python\d[\d.]*)[/\\]|^<(?!ipython-input-)"
    r"|(?i:\\(?:anaconda3|miniconda3|miniforge3|mambaforge|python3\d{0,2}|envs\\[^\\]+)\\lib\\)"
)
# pip's wrapper of a package's console script (<env>/bin/torchrun, bin/accelerate, Scripts\\deepspeed.exe): its only
# line calls the package's main(), and no line of it is the user's
_CONSOLE_SCRIPT = re.compile(r"[/\\](?:bin|Scripts)[/\\][A-Za-z][\w.-]{0,80}$")
_LIBRARY_DIRS = tuple(
    {
        os.path.realpath(sysconfig.get_paths()[k]) + os.sep
        for k in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)
_OWN_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep


@dataclass(frozen=True)
class Frame:
    """One frame of a stack (recorded in a dump, or taken from a live rank): ``train.py:10 in main``."""

    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.function}"


# torchdoctor's own module in another machine's checkout (.../src/torchdoctor/stragglers/hooks.py in a user's log)
_OWN_MODULE = re.compile(r"(?:[a-z_]+/){0,3}[a-z_]+\.py")


def _ours_elsewhere(path: str) -> bool:
    """A frame of torchdoctor's own code on another machine: after the path's last ``torchdoctor/``, one of this
    package's modules."""
    path = path.replace("\\", "/")
    if "/torchdoctor/" not in path:
        return False
    part = path.rsplit("/torchdoctor/", 1)[1]
    return bool(_OWN_MODULE.fullmatch(part)) and os.path.isfile(os.path.join(_OWN_DIR, part))


def is_user_code(path: str) -> bool:
    """False for the standard library, installed packages (and the console scripts pip writes for them:
    ``.venv/bin/torchrun``), torchdoctor itself and frozen modules."""
    if _LIBRARY.search(path) or (_CONSOLE_SCRIPT.search(path) and not path.endswith(".py")):
        return False
    if _ours_elsewhere(path):
        return False
    if not (os.path.isabs(path) and os.path.exists(path)):
        return True  # a frame from another machine's dump: the path pattern above is all there is
    real = os.path.realpath(path)
    return not real.startswith(_LIBRARY_DIRS) and not real.startswith(_OWN_DIR)


# id(code object) -> (the code object, kept alive so that its id stays its own; is it the user's code). Asked for
# every frame a checked collective or a noted call walks, so by id: a code object's own hash reads its whole
# bytecode each time, and equal code compiled from two files compares equal whatever its file.
_CODE_VERDICTS: dict[int, tuple[Any, bool]] = {}
_FILE_VERDICTS: dict[str, bool] = {}
_KEEP_AT_MOST = 100_000  # code objects made on the fly (exec in a loop) are judged afresh past this


def is_user_code_object(code: Any) -> bool:
    """`is_user_code` of a code object's file, remembered per code object (the hot paths of debug mode and of
    the noted calls ask it for every frame they walk)."""
    known = _CODE_VERDICTS.get(id(code))
    if known is not None and known[0] is code:
        return known[1]
    verdict = _FILE_VERDICTS.get(code.co_filename)
    if verdict is None:
        verdict = _FILE_VERDICTS[code.co_filename] = is_user_code(code.co_filename)
    if len(_CODE_VERDICTS) < _KEEP_AT_MOST:
        _CODE_VERDICTS[id(code)] = (code, verdict)
    return verdict


def known_code(code_id: int) -> Any:
    """The code object `is_user_code_object` was asked about under this id (None if it was not kept)."""
    known = _CODE_VERDICTS.get(code_id)
    return None if known is None else known[0]


def is_ours(path: str) -> bool:
    """A frame of torchdoctor itself (its wrappers sit between the user's call and torch's)."""
    return path.replace(os.sep, "/").startswith(_OWN_DIR.replace(os.sep, "/"))


def is_library(path: str) -> bool:
    """A frame of an installed package or the standard library, on this machine or the one that wrote the
    dump (``site-packages``, ``dist-packages``, ``lib/python3.x``), or torchdoctor's own."""
    return not is_user_code(path)


def user_call(frames: list[Frame]) -> Frame | None:
    """The innermost frame of the user's own code (frames outermost first)."""
    return next((f for f in reversed(frames) if not is_library(f.file)), None)


@functools.lru_cache(maxsize=64)  # a report asks about the same few files for every rank
def _parsed(file: str) -> tuple[str, ast.Module] | None:
    try:
        if os.path.getsize(file) > 10_000_000:
            return None
        source = Path(file).read_text(errors="replace")
        return source, ast.parse(source)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class Condition(NamedTuple):
    """A condition on the rank around a line: its line, its source, whether the line is in its ``else``, and
    whether the branch the line is on is taken by few ranks (``if rank == 0:``; ``else:`` of ``if rank != 1:``:
    True), by most (False) or cannot be told from the source (None)."""

    line: int
    code: str
    in_else: bool = False
    few: bool | None = None

    def __str__(self) -> str:
        return f"line {self.line}: `{self.code}`" + (" (in its else branch)" if self.in_else else "")


def rank_condition(file: str, line: int) -> Condition | None:
    """The innermost ``if``/``while`` around ``file:line`` whose test tells ranks apart (``if rank == 0:``,
    ``if self.gpu_id == 0:``), when this machine has the file."""
    found = None
    for start, end, else_from, code, few in _rank_branches(file):
        if start < line <= end and (found is None or start > found.line):
            in_else = else_from is not None and else_from <= line
            found = Condition(start, code, in_else, None if few is None else few != in_else)
    return found


@functools.lru_cache(maxsize=64)  # every rank's calls ask about the same file, line after line
def _rank_branches(file: str) -> tuple[tuple[int, int, int | None, str, bool | None], ...]:
    """The file's ``if``/``while`` statements whose test names the rank: (line, last line, first line of its
    ``else``, the line's code, whether the test is true on few ranks), found in one walk of its tree."""
    parsed = _parsed(file)
    if parsed is None:
        return ()
    source, tree = parsed
    lines = source.splitlines()
    branches = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While)) and RANK_WORDS.search(
            ast.get_source_segment(source, node.test) or ""
        ):
            else_from = node.orelse[0].lineno if node.orelse else None
            code = lines[node.lineno - 1].strip()
            branches.append(
                (node.lineno, node.end_lineno or node.lineno, else_from, code, _taken_by_few(node.test))
            )
    return tuple(branches)


def _taken_by_few(test: ast.expr) -> bool | None:
    """Whether a test on the rank is true on few ranks (``rank == 0``, ``is_main_process``), on most
    (``rank != 1``, ``not is_main_process``), or neither can be told (``rank % 2 == 0``, ``rank < 4``)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _taken_by_few(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [_taken_by_few(value) for value in test.values]
        if isinstance(test.op, ast.And):  # one narrow part makes the whole narrow
            return True if True in parts else (False if parts and all(p is False for p in parts) else None)
        return False if False in parts else (True if parts and all(p is True for p in parts) else None)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        sides = (test.left, test.comparators[0])
        if any(_is_rank(side) for side in sides) and any(isinstance(side, ast.Constant) for side in sides):
            if isinstance(test.ops[0], (ast.Eq, ast.Is)):
                return True
            if isinstance(test.ops[0], (ast.NotEq, ast.IsNot)):
                return False
        return None
    if _is_rank(test):  # ``if state.is_main_process:``, ``if trainer.is_global_zero:``
        name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
        return True if "main" in name or "zero" in name or "master" in name else None
    return None


def _is_rank(node: ast.expr) -> bool:
    """A bare name, attribute or call that names the rank (``rank``, ``self.gpu_id``, ``dist.get_rank()``)."""
    if isinstance(node, ast.Call):
        node = node.func
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    return isinstance(name, str) and bool(RANK_WORDS.fullmatch(name))


def condition_on_chain(frames: list[Frame]) -> tuple[Frame, Condition] | None:
    """The innermost of the user's frames (along the whole call chain, not only the innermost frame) that
    sits under a condition on the rank, and that condition; None when no frame does."""
    for frame in reversed(frames):
        found = rank_condition(frame.file, frame.line) if is_user_code(frame.file) else None
        if found:
            return frame, found
    return None


def enclosing_loop(file: str, line: int) -> tuple[int, int] | None:
    """The first and last line of the innermost ``for``/``while`` loop around ``file:line`` (the training
    loop a rank waits in), when this machine has the file."""
    parsed = _parsed(file)
    if parsed is None:
        return None
    found = None
    for node in ast.walk(parsed[1]):
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)) and node.lineno < line <= (
            node.end_lineno or 0
        ):
            if found is None or node.lineno > found[0]:
                found = (node.lineno, node.end_lineno or node.lineno)
    return found


def loop_exits(file: str, first: int) -> list[tuple[int, str]]:
    """The ``break`` (of this loop, not of one nested in it) and ``return`` statements of the loop that starts at
    ``file:first``, each as the line of the ``if`` it sits under (or its own) and that line's source: where a rank
    that decides alone to stop (early stopping on its own loss, ``if is_main_process and ...: break``) leaves it."""
    parsed = _parsed(file)
    if parsed is None:
        return []
    source, module = parsed
    loop = next(
        (
            n
            for n in ast.walk(module)
            if isinstance(n, (ast.For, ast.While, ast.AsyncFor)) and n.lineno == first
        ),
        None,
    )
    if loop is None:
        return []
    lines = source.splitlines()
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, guard: ast.If | None, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Return) or (isinstance(child, ast.Break) and not nested):
                at = guard.lineno if guard is not None else child.lineno
                found.append((at, lines[at - 1].strip() if at <= len(lines) else ""))
            inner = isinstance(child, (ast.For, ast.While, ast.AsyncFor))
            visit(child, child if isinstance(child, ast.If) else guard, nested or inner)

    visit(loop, None, False)
    return sorted(set(found))


# the names that hold a rank's own number (``rank``, ``self.global_rank``, ``dist.get_rank()``), not a count of
# ranks (``nranks``, ``world_size``): only these are put in to work out whether a rank takes a branch
_THE_RANK = re.compile(
    r"(?:global_|local_|my_|get_|get_global_|get_local_)?rank|(?:local_)?process_index|gpu_id"
)


def takes_branch(file: str, condition: Condition, rank: int) -> bool | None:
    """Whether ``rank`` takes the branch of ``condition`` its line is on, worked out from the test with the
    rank's number put in (``if rank != 1:`` for rank 1: False); None where the test is more than the rank
    compared with constants (``if is_main_process:``, ``if rank < world_size - 1:``)."""
    parsed = _parsed(file)
    node = (
        next(
            (
                n
                for n in ast.walk(parsed[1])
                if isinstance(n, (ast.If, ast.While)) and n.lineno == condition.line
            ),
            None,
        )
        if parsed
        else None
    )
    if node is None:
        return None
    value = _value(node.test, rank)
    return None if value is None else bool(value) != condition.in_else


def _value(node: ast.expr, rank: int) -> Any:
    """The value of a test on the rank with ``rank`` put in for the rank's name; None where it needs more."""
    name = node.func if isinstance(node, ast.Call) and not node.args else node
    name = name.attr if isinstance(name, ast.Attribute) else getattr(name, "id", None)
    if isinstance(name, str) and _THE_RANK.fullmatch(name.lower()):
        return rank
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, str)):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_value(item, rank) for item in node.elts]
        return None if None in items else tuple(items)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _value(node.operand, rank)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        parts = [_value(value, rank) for value in node.values]
        if None in parts:
            return None
        return all(parts) if isinstance(node.op, ast.And) else any(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add, ast.Sub)):
        left, right = _value(node.left, rank), _value(node.right, rank)
        if not (isinstance(left, int) and isinstance(right, int)) or (
            isinstance(node.op, ast.Mod) and not right
        ):
            return None
        if isinstance(node.op, ast.Mod):
            return left % right
        return left + right if isinstance(node.op, ast.Add) else left - right
    if isinstance(node, ast.Compare):
        values = [_value(side, rank) for side in (node.left, *node.comparators)]
        if None in values:
            return None
        results = [_compared(op, a, b) for op, a, b in zip(node.ops, values, values[1:], strict=False)]
        return None if None in results else all(results)
    return None


def _compared(op: ast.cmpop, left: Any, right: Any) -> bool | None:
    if isinstance(op, (ast.In, ast.NotIn)):
        found = isinstance(right, tuple) and left in right
        return found if isinstance(op, ast.In) else not found
    if isinstance(op, (ast.Eq, ast.Is, ast.NotEq, ast.IsNot)):
        return (left == right) == isinstance(op, (ast.Eq, ast.Is))
    if not (isinstance(left, int) and isinstance(right, int)):
        return None
    return {ast.Lt: left < right, ast.LtE: left <= right, ast.Gt: left > right, ast.GtE: left >= right}.get(
        type(op)
    )
