"""Quoting a piece of a log in a summary: whole words, balanced brackets and quotes, torchrun's exit codes
in words.

A recogniser's pattern matches part of a line; quoted as it is, the part starts or ends inside a bracket or a
word (``exitcode: -9) local_rank``, ``loss': nan``). `quote` makes it a phrase.

    >>> quote("exitcode: -9) local_rank: 0 (pid: 1234) of binary: /usr/bin/python3")
    'exit code -9 (local rank 0, pid 1234)'
    >>> quote("loss': nan")
    'loss: nan'
"""

from __future__ import annotations

import re

_EXIT = re.compile(r"exitcode\s*:?\s*(?P<code>-?\d+)")
_LOCAL_RANK = re.compile(r"local_rank\s*:\s*(?P<n>\d+)")
_PID = re.compile(r"\(?pid\s*:\s*(?P<n>\d+)")
_PAIRS = {")": "(", "]": "[", "}": "{"}


def quote(fragment: str, limit: int = 160) -> str:
    """``fragment`` of a log line as a phrase for a summary (see the module's examples)."""
    text = " ".join(fragment.split())
    code = _EXIT.search(text)
    if code:
        said = [f"local rank {m['n']}" for m in [_LOCAL_RANK.search(text)] if m]
        said += [f"pid {m['n']}" for m in [_PID.search(text)] if m]
        return f"exit code {code['code']}" + (f" ({', '.join(said)})" if said else "")
    text = _balanced(text)
    if len(text) > limit:
        head = text[:limit]
        space = head.rfind(" ")
        text = (head[:space] if space > limit // 2 else head).rstrip(" ,;:") + " …"
    return text.strip(" ,;:")


def _balanced(text: str) -> str:
    """Without the closing brackets that were not opened and the quotes left alone."""
    kept: list[str] = []
    open_: list[str] = []
    for char in text:
        if char in "([{":
            open_.append(char)
        elif char in _PAIRS:
            if not open_ or open_[-1] != _PAIRS[char]:
                continue
            open_.pop()
        kept.append(char)
    out = "".join(kept)
    for mark in "'\"`":
        if out.count(mark) % 2:
            at = out.find(mark) if out.find(mark) < len(out) - out.rfind(mark) else out.rfind(mark)
            out = out[:at] + out[at + 1 :]
    return re.sub(r"\s+", " ", out)
