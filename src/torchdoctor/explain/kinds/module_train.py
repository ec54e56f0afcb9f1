"""Training arguments given to ``torch.nn.Module.train``, which only switches a module to training mode.

``torch/nn/modules/module.py``: ``def train(self, mode: bool = True)``. CPython 3.10+ names the method it refuses
by its qualified name, so "Module.train() got an unexpected keyword argument 'opt'" (or "Module.train() takes from 1
to 2 positional arguments but 3 were given") is torch's own method, reached on a model whose class has no ``train``
of its own: a library's model whose release named its fitting method ``train`` and the installed one names it
otherwise (pykan 0.2 renamed ``KAN.train(dataset, opt=..., steps=...)`` to ``KAN.fit``: KindXiaoming/pykan#371,
#376), or code that calls ``model.train(...)`` to fit a plain module. Both print the line, so the reading is likely,
the second named. Older Pythons print "train() got ...", which any function called ``train`` prints too: not read.
"""

from __future__ import annotations

import re

from torchdoctor.explain.first_failure import Raised

FAMILY = "a script's own mistakes"

REFUSED = re.compile(
    r"\bModule\.train\(\) (?:got an unexpected keyword argument '(?P<train_keyword>\w{1,100})'|"
    r"takes from 1 to 2 positional arguments but (?P<train_positional>\d{1,3}) were given)"
)
TEMPLATES = ("system:python-unexpected-keyword-argument", "system:python-takes-positional-arguments")


def diagnosis(raised: Raised) -> tuple[str, str, bool] | None:
    """(summary, fix, certain: never) when ``raised`` is nn.Module.train refusing training arguments."""
    found = REFUSED.search(raised.message)
    if found is None or found.group("train_keyword") == "mode":
        return None
    given = (
        f"the keyword '{found.group('train_keyword')}'"
        if found.group("train_keyword")
        else f"{found.group('train_positional')} positional arguments"
    )
    return (
        f"model.train(...) reached torch.nn.Module.train, which takes only mode, with {given}: the model's library "
        "names its training method otherwise in the installed release (pykan 0.2 renamed KAN.train to fit); or the "
        "code calls train(...) to fit a module that has no such method",
        "torch.nn.Module.train(mode=True) only switches the module to training mode. If the model comes from a "
        "library whose release had its own train(...) (the code's tutorial or notebook was written for it), call "
        "the method the installed release has instead (pykan >= 0.2: model.fit(dataset, opt=..., steps=...)), or "
        "pin the release the code was written for (pip install '<library>==<that release>'). Otherwise call "
        "model.train() and write the training loop (or use the library's trainer).",
        False,
    )
