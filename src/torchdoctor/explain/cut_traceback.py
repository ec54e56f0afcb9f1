"""A Python traceback that stops before its error line: said in words, with where its frames end.

CPython prints an uncaught exception as "Traceback (most recent call last):", the frames outermost first (each
``File "<path>", line <n>, in <function>`` and its source line), then the exception's type and message. A paste
or a file that stops after the frames has no error to read: `explain` names the innermost frame it saw and
whose code that is (the installed package its path is in), rather than guess the error. A paste that starts
below the header (frames only) is read the same way.
"""

from __future__ import annotations

import re

from torchdoctor.findings import Finding

# whole-log facts (kinds.CONTEXT_FACTS): the header, and the frames, of which the innermost (last) is kept
CONTEXT = (
    (
        "Traceback (most recent call last)",
        # the terminal's echo of Ctrl-C just before it: the traceback is a KeyboardInterrupt's
        re.compile(r"(?P<traceback_header>(?P<ctrl_c>\^C)?Traceback \(most recent call last\))"),
    ),
    (
        # IPython's (Jupyter's) header names the exception's type before the frames: "AttributeError      Traceback
        # (most recent call last)" (ultratb's VerboseTB), so a paste cut before the error line still says which
        "Traceback (most recent call last)",
        re.compile(
            r"^\s*(?:[A-Za-z_]\w*\.)*(?P<ipython_type>[A-Z]\w{0,200})\s{2,}Traceback \(most recent call last\)"
        ),
    ),
    (
        'File "',
        re.compile(
            r'File "(?P<last_frame_file>[^"\n]{1,300})", line (?P<last_frame_line>\d+), '
            r"in (?P<last_frame_function>[\w<>.]{1,100})"
        ),
    ),
    (
        # IPython's (Jupyter's) frame: "File ~/env/.../trainer.py:1531, in Trainer.train(self, ...)"
        "File ",
        re.compile(
            r"^\s*File (?P<last_frame_file>[^\s\"]{1,300}\.py):(?P<last_frame_line>\d+), "
            r"in (?P<last_frame_function>[\w<>.]{1,100})"
        ),
    ),
    (
        # IPython 7's (Colab's until 2024) frame, the line number only on its marked code line below it: "/path/x.py
        # in forward(self, x)", in Colab's copy a Markdown link, "[/path/x.py](https://localhost:8080/#) in forward("
        ".py",
        re.compile(
            r"^\[?(?P<last_frame_file>(?:/|~|[A-Za-z]:\\)[^\s\]\[\"]{1,300}\.py)(?:\]\(https?://[^)\s]{0,300}\))? "
            r"in (?P<last_frame_function>[\w<>.]{1,100})\("
        ),
    ),
    # ... and that code line, "--> 115         x = ...": the frame's line
    ("> ", re.compile(r"^-{1,10}> ?(?P<last_frame_line>\d{1,7}) ")),
)
FRAME_KEYS = frozenset({"last_frame_file", "last_frame_line", "last_frame_function"})

# an installed package's folder: site-packages/<name>/..., or inside an egg (site-packages/<name>-<ver>.egg/<name>/)
_INSTALLED = re.compile(
    r"[\\/](?:site|dist)-packages[\\/]+(?:[^\\/]{1,120}\.egg[\\/]+)?(?P<package>[A-Za-z_]\w{0,60})[\\/]"
)


def package_path(path: str) -> tuple[str, str]:
    """(the installed package, the path from its folder on) for a frame's file; ("", path) for one outside them.

    >>> package_path("/env/site-packages/deepspeed-0.16.3-py3.10.egg/deepspeed/runtime/config.py")
    ('deepspeed', 'deepspeed/runtime/config.py')
    >>> package_path("train.py")
    ('', 'train.py')
    """
    found = _INSTALLED.search(path)
    if found is None:
        return "", path
    return found["package"], path[found.start("package") :].replace("\\", "/")


def reading(
    facts: dict, last_error_line: str, sources: str, refused: tuple[str, str] | None = None
) -> Finding | None:
    """The finding for a log whose traceback ends before its error line; None when the log has no traceback, or
    has an error line (then that is what is named). ``refused``: (summary, fix) where the frames end inside
    DeepSpeed building its config (kinds/config_checks.py `cut_in_config`), read as that config's refusal."""
    # IPython's header's type, where an error line of that type would have been read as one (an ...Error or
    # ...Exception: not a KeyboardInterrupt or a StopIteration, whose own line is no error line)
    named = facts.get("ipython_type", "")
    named = named if named.endswith(("Error", "Exception")) else ""
    if last_error_line or not (FRAME_KEYS <= facts.keys() or named):
        return None
    # frames pasted without the header above them (a paste that starts mid-traceback, under [rankN]: too) are
    # a traceback's just the same: CPython prints `File "...", line N, in f` only there (faulthandler's dump
    # has no comma before "in", and a warning names its file as path:line)
    headed = "traceback_header" in facts
    if not headed and "logged_stack" in facts:  # logging's stack_info: frames of a run still going, no error
        return None
    if not FRAME_KEYS <= facts.keys():  # a notebook's cells only ("Cell In[10], line 5"): no file's frame
        return _named_only(named, sources)
    package, short = package_path(facts["last_frame_file"])
    where = f"{short}:{facts['last_frame_line']} in {facts['last_frame_function']}"
    if refused is not None:
        # cut inside DeepSpeed building its config: the config it refused, the key on the missing line
        details = {
            "kind": "deepspeed_config_mismatch",
            "role": "cause",
            "confidence": "likely",
            "cut_traceback": where,
            "package": package or None,
            "alternatives": ["log.dependency_version"],
        }
        return Finding("log.deepspeed_config_mismatch", "fail", f"likely: {refused[0]}", details, refused[1])
    whose = f" ({package}'s code)" if package else ""
    summary = (
        f"the traceback in {sources} stops before its error line: IPython's header above it names the exception, "
        f"likely a {named} (its message is not in the input, so explain cannot say what failed), raised at its "
        f"innermost frame {where}{whose}"
        if named
        else f"the traceback in {sources} stops before its error line: its innermost frame is {where}{whose}, and "
        "the exception that ended the run (its type and message) is not in the input, so explain cannot say what "
        "failed there"
        if headed
        else f"{sources} holds a traceback's frames without its header or its error line (a paste cut at both "
        f"ends): its innermost frame is {where}{whose}, and the exception that ended the run (its type and "
        "message) is not in the input, so explain cannot say what failed there"
    )
    if facts.get("ctrl_c"):
        # ^C echoed before the header: the exception is the KeyboardInterrupt of a user who stopped the run
        summary = (
            f"the run in {sources} was stopped with Ctrl-C (^C before its traceback): it was still running, or "
            f"waiting, at {where}{whose} when the user gave up on it; the traceback stops there, before the frames "
            "that say what it waited for"
        )
        fix = (
            "Give explain the whole traceback: its innermost frames (torch's, a DataLoader's, a logger's) say what the "
            "run waited for. A run that stops moving after its last step can be waiting for a process that was "
            "never ended (a logger such as wandb without wandb.finish(), DataLoader workers, a process group never "
            "destroyed). On the next hang, `torchdoctor launch --watchdog 60 train.py` prints every rank's stack."
        )
    else:
        fix = _CUT_FIX
    details = {
        "cut_traceback": where,
        "package": package or None,
    }
    if named:
        details["exception_type"] = named  # from the header, not the error line: likely, never certain
        details["confidence"] = "likely"
    return Finding("log.unrecognised", "skip", summary, details, fix)


_CUT_FIX = (
    "Python prints the exception's type and message right after the traceback's last frame (a line such as "
    "`ValueError: ...`, after `[rankN]:` under torchrun): the paste or the file stops before it. Give explain "
    "the whole output (`python train.py 2>&1 | tee train.log` keeps stderr, where the traceback goes), or the "
    "lines after the last frame."
)


def _named_only(named: str, sources: str) -> Finding:
    """The finding for a notebook's traceback cut before its error line whose frames shown are all its cells."""
    summary = (
        f"the traceback in {sources} stops before its error line: IPython's header above it names the exception, "
        f"likely a {named} (its message is not in the input, so explain cannot say what failed); the frames it "
        "shows are the notebook's cells, no installed package's file"
    )
    details = {"exception_type": named, "confidence": "likely", "cut_traceback": None, "package": None}
    return Finding("log.unrecognised", "skip", summary, details, _CUT_FIX)
