"""An Arrow column of a dataset that has outgrown its 32-bit offsets.

Arrow's ``string``, ``binary`` and ``list`` types store where each value starts as a 32-bit offset, so one array
holds at most 2 GiB of characters, bytes or list elements. Concatenating chunks past that (``combine_chunks``,
``take``, ``concat_arrays``, a Hugging Face ``datasets`` map or load writing a batch) fails in
``cpp/src/arrow/array/concatenate.cc`` with ``Status::Invalid("offset overflow while concatenating arrays")``
(newer releases add ", consider casting input from `string` to `large_string` first"). Nothing else prints it:
the data is too large for one chunk of that type: one huge JSON/Parquet file, long texts, or images stored as
nested lists (pixel_values) in a column. Building one such array past that size fails earlier, in
``cpp/src/arrow/array/builder_binary.h`` (``BaseBinaryBuilder``: ``Status::CapacityError("array cannot contain more
than 2147483646 bytes, have N")``, pyarrow's ``ArrowCapacityError``): the same limit, met while a column is written
(a datasets map or ``from_pandas`` / ``from_list`` of long texts or image bytes).

Whose concatenation it was is another matter: Arrow's own kernels (``take`` and ``filter`` on a chunked array
concatenate its chunks first, apache/arrow#25822, ARROW-9773) and a library's code over them (Hugging Face
datasets' ``table.py`` ``_concat_arrays``, which works around a fixed-size-list bug only for the pyarrow releases it
checks; Ray Data's block concatenation, ray-project/ray#29492) overflow on data that is not wrong, fixed or worked
around in later releases of those libraries. Likely, the library's release named beside the data.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _overflow(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    built = any(h.anchor == "array cannot contain more than " for h in hits)
    when = "as it was written" if built else "when its chunks were combined"
    return (
        "an Arrow column of the dataset (strings, bytes or nested lists) grew past the 2 GiB its 32-bit offsets "
        f"can address {when}: the data is too large for one chunk" + on_ranks(hits),
        "Keep each chunk under 2 GiB: split the data into several smaller files (load the folder, or a list of "
        "data_files), map with a smaller writer_batch_size= / batch_size= in datasets, or stream it "
        "(streaming=True). Where you build the table yourself, cast the column to large_string / large_binary / "
        "large_list (64-bit offsets). Images stored as nested lists (pixel_values) are the usual culprit: keep the "
        "file paths in the dataset and load the pixels in the collate or transform instead.",
    )


ARROW_OFFSET_OVERFLOW = Recogniser(
    kind="arrow_offset_overflow",
    templates=(
        "third_party:arrow-offset-overflow-concatenating",
        "third_party:arrow-array-cannot-contain-more-than-bytes",
    ),
    title="an Arrow column too large for its 32-bit offsets",
    anchors=("offset overflow while concatenating arrays", "array cannot contain more than "),
    # the binary builder's limit in bytes (a fixed-size list builder's "... elements, have N" is another limit)
    match=R(
        r"offset overflow while concatenating arrays|array cannot contain more than \d{1,20} bytes, have \d"
    ),
    # the message says the offsets overflowed, not whose code concatenated the chunks: Arrow's take/filter and
    # datasets' own concatenation did so on data of any make, in releases later ones fixed
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "library_version_bug",
            "the datasets, Ray or pyarrow release concatenating the chunks itself (Arrow's take/filter on chunked "
            "arrays, apache/arrow#25822; datasets' _concat_arrays)",
            "Upgrade the library whose frames call the concatenation (pip install -U datasets pyarrow, or ray) and "
            "retry before splitting the data.",
        ),
    ),
    describe=_overflow,
)

RECOGNISERS = (ARROW_OFFSET_OVERFLOW,)
