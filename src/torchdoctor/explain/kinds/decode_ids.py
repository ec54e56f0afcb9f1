"""A fast tokenizer asked to decode an id no token has: the -100 that pads labels for the loss.

Hugging Face's tokenizers library is Rust; its Python binding (PyO3) converts each id handed to ``decode`` /
``decode_batch`` (transformers' ``tokenizer.decode`` and ``batch_decode`` on a fast tokenizer) to an unsigned 32-bit
integer, and a negative id fails that conversion: PyO3 raises OverflowError with Rust's own message for it
(``TryFromIntError``: "out of range integral type conversion attempted"). In training the negative id is nearly
always -100, the ignore index the data collators (DataCollatorForSeq2Seq, the Trainer's padding of predictions
across processes) put where labels or gathered predictions are padding, reaching a ``compute_metrics`` that decodes
them as they are. Another negative id (a -1 sentinel) prints the same: likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _negative_id(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a fast tokenizer was asked to decode a negative token id (OverflowError: out of range integral type "
        "conversion attempted): most often the -100 that pads the labels or the gathered predictions"
        + on_ranks(hits),
        "Replace -100 with the tokenizer's pad id before decoding: labels = np.where(labels != -100, labels, "
        "tokenizer.pad_token_id) (the same for predictions, which the Trainer pads with -100 when it gathers them "
        "across processes or batches of different lengths), then tokenizer.batch_decode(..., "
        "skip_special_tokens=True). With Seq2SeqTrainer, predict_with_generate=True makes the predictions token "
        "ids rather than logits.",
    )


DECODE_IGNORE_INDEX = Recogniser(
    kind="decode_ignore_index",
    title="a negative id (-100) handed to a tokenizer's decode",
    templates=("third_party:pyo3-out-of-range-integral-type-conversion",),
    anchors=("out of range integral type conversion attempted",),
    # Python's exception (PyO3's OverflowError), not a Rust program's own error or panic with the same words
    match=R(r"OverflowError:\s*out of range integral type conversion attempted"),
    generic=("out of range integral type conversion attempted",),
    describe=_negative_id,
)

RECOGNISERS = (DECODE_IGNORE_INDEX,)
