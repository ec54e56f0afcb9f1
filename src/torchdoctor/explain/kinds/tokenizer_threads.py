"""A fast (Rust) tokenizer called from several threads at once.

Hugging Face's fast tokenizers are PyO3 classes: a call that changes the tokenizer's settings
(``set_truncation_and_padding`` before every ``__call__`` in ``tokenization_utils_fast.py``) takes a mutable
borrow of the Rust object, and PyO3 refuses a second borrow while the first is live with ``PyBorrowMutError``,
whose text is "Already borrowed" (``pyo3/src/pycell.rs``), raised as a RuntimeError. One tokenizer shared by a
thread pool (a prefetching cache, ``ThreadPoolExecutor`` in a dataset, a web server's workers) meets it at random.
Any PyO3 extension prints the same words for an object two threads use at once, so the tokenizer reading is
certain only where the log names a tokenizer; elsewhere it is likely, that reading named.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TOKENIZER = R(r"(?P<saw_tokenizer>tokenization_utils_fast|tokenizers[/\\]|\b[Tt]okeni[sz]ers?\b)")


def _names_tokenizer(hits: list[Hit], ctx: Context) -> bool:
    return "saw_tokenizer" in merged(hits) or "saw_tokenizer" in ctx.facts


def _threads(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "one fast (Rust) tokenizer was used by two threads at the same time: PyO3 refused the second borrow "
        "(Already borrowed)" + on_ranks(hits),
        "Give each thread its own tokenizer (load it inside the worker, or keep one per thread in "
        "threading.local()), or serialise the calls with a threading.Lock around every tokenizer call; a "
        "DataLoader's worker processes are fine, threads sharing one instance are not. Setting "
        "TOKENIZERS_PARALLELISM does not change this.",
    )


TOKENIZER_THREADS = Recogniser(
    kind="tokenizer_threads",
    templates=("third_party:pyo3-already-borrowed",),
    title="a fast tokenizer shared between threads",
    anchors=("Already borrowed",),
    generic=("Already borrowed",),
    facts=(TOKENIZER,),
    confirm=_names_tokenizer,
    also=(
        Alternative(
            "library_version_bug",
            "another Rust (PyO3) extension's object used by two threads at once",
            "Find the object in the traceback and give each thread its own, or guard it with a lock; check that "
            "library's release notes for thread safety.",
        ),
    ),
    describe=_threads,
)

RECOGNISERS = (TOKENIZER_THREADS,)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (("okeni", TOKENIZER),)
