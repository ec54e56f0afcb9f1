"""A library's or a repository's own loop over the parameters that reads the gradient of a parameter that has none.

After ``backward`` a parameter that took no part in the loss (a module the forward skipped, a head the task does not
use, a frozen parameter) still has ``.grad`` None, and so does every parameter before the first backward. A loop over
``model.parameters()`` that divides, scales or all-reduces ``p.grad.data`` without checking meets None there, and
CPython says "'NoneType' object has no attribute 'data'" (or 'div_', 'mul_', ...) on that line. In a library's or a
repository's own script (an installed package, a repository's ``examples/``) it is that code's bug, fixed by its
maintainers: pytorch-pretrained-BERT's run_squad.py divided every gradient by the loss scale
(``param.grad.data = param.grad.data / args.loss_scale``) until its master skipped the parameters without one
(huggingface/transformers#43). The same line in the user's own script is read by nothing here: whether a parameter
should have had a gradient is the script's to say.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from torchdoctor.explain.first_failure import Raised
from torchdoctor.hang.source import is_library

FAMILY = "library releases that disagree with the code"

NO_ATTRIBUTE = re.compile(r"'NoneType' object has no attribute '(?P<attribute>\w{1,40})'")
# the source line reads an attribute of some parameter's gradient: param.grad.data, p.grad.div_(...), ...
GRAD_READ = re.compile(r"(?P<parameter>[A-Za-z_][\w.\[\]]{0,80})\.grad\.(?P<attribute>\w{1,40})")
TEMPLATES = ("system:object-has-no-attribute",)


def _library_script(path: str) -> bool:
    """An installed package's file, or a script in a repository's ``examples`` folder."""
    return is_library(path) or "examples" in PurePath(path.replace("\\", "/")).parts[:-1]


def grad_none(raised: Raised) -> tuple[str, str] | None:
    """(summary, fix) when ``raised`` is a library's or a repository's own loop reading the gradient of a parameter
    whose ``.grad`` is None; else None."""
    missing = NO_ATTRIBUTE.search(raised.message)
    read = GRAD_READ.search(raised.code)
    frame = raised.frame
    if raised.type != "AttributeError" or missing is None or read is None or frame is None:
        return None
    if read["attribute"] != missing["attribute"] or not _library_script(frame.file):
        return None
    return (
        f"a parameter had no gradient where {frame.file}'s loop over the parameters read it "
        f"({read['parameter']}.grad is None): that script does not skip parameters without a gradient",
        "A parameter that took no part in the loss (a module the forward skipped, an unused head, a frozen "
        "parameter) has .grad None after backward, and a loop over model.parameters() that reads .grad must skip "
        f"it (if {read['parameter']}.grad is None: continue). {frame.file} is a library's or a repository's own "
        "script, whose maintainers fix such loops: update it (pull the repository's current master, or pip "
        "install -U the package) and run it again; or add that check to the loop there.",
    )
