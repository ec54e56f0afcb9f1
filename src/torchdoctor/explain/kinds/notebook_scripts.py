"""A command-line training script run inside a Jupyter or Colab notebook.

argparse's ``ArgumentParser.error`` (``Lib/argparse.py``) prints "<prog>: error: <message>" and exits with status 2;
in a notebook ``prog`` is the kernel's ``ipykernel_launcher.py`` and ``sys.argv`` holds the kernel's own
``-f <connection file>.json``, so a script's ``parser.parse_args()`` refuses it (or misses its required options).
IPython shows the exit as "An exception has occurred, use %tb to see the full traceback." then "SystemExit: 2"
(``IPython/core/interactiveshell.py``, showtraceback for SystemExit). ``SystemExit: 0`` or ``1`` after that line
is a script's own ``sys.exit``, not this; the argparse line or exit status 2 is: certain.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, on_ranks

FAMILY = "launchers and schedulers"

IN_NOTEBOOK = re.compile(
    r"(?s)ipykernel_launcher\.py: error:|use %tb to see the full traceback\..{0,200}?SystemExit: 2\b"
)


def _notebook(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a command-line training script ran inside a notebook: its argparse parser read the kernel's own "
        "arguments (-f kernel.json) or missed the options it requires, and exited (SystemExit: 2)"
        + on_ranks(hits),
        "Run the script as a script from the notebook (!python train.py --your --options), or give the parser "
        "its arguments in the cell: args = parser.parse_args(['--epochs', '10']) (or parse_known_args()[0] to "
        "ignore the kernel's -f).",
    )


ARGPARSE_IN_NOTEBOOK = Recogniser(
    kind="argparse_in_notebook",
    title="a command-line script's argparse run inside a notebook",
    templates=("third_party:argparse-error-in-ipykernel", "third_party:ipython-exception-use-tb"),
    anchors=("ipykernel_launcher.py: error:", "use %tb to see the full traceback."),
    match=IN_NOTEBOOK,
    span=3,
    describe=_notebook,
)

RECOGNISERS = (ARGPARSE_IN_NOTEBOOK,)
