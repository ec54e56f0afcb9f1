"""A class label or a token id past the table it indexes, as torch's CPU kernels report it.

- A classification loss given a label outside 0..C-1 (``aten/src/ATen/native/LossNLL.cpp`` nll_loss_out_frame:
  "Target 5 is out of bounds."): the loss prints it for that cause only.
  On the GPU the same label stops the kernel with a device-side assert (``device_assert``).
- ``F.one_hot`` given a class value of ``num_classes`` or more, or a negative one (``aten/src/ATen/native/
  Onehot.cpp``, checked on the CPU: "Class values must be smaller than num_classes.", "Class values must be
  non-negative."): labels numbered from 1, a mask holding 0 and 255, or num_classes set below the dataset's
  classes. It says so for that cause only.
- A detection dataset's label files holding a class id at or above the data yaml's class count, as YOLOv5's
  train.py and ultralytics 8's dataset check refuse them (read in ``dataset_labels.py``).
- An embedding given an id of its table's size or more (``aten/src/ATen/native/TensorAdvancedIndexing.cpp``
  index_select_out_cpu_: "index out of range in self"; ``TH/generic/THTensorEvenMoreMath.cpp`` before 1.6:
  "index out of range: Tried to access index 30522 out of table with 30521 rows."). Two tables print it in a
  transformer: the token ids (a tokenizer with more tokens than the model's vocabulary) and the positions (a
  sequence longer than max_position_embeddings), and any index_select of the script's own does too, so it is
  likely; it is the sequence's length for certain where transformers' tokenizer warned that the sequence is
  longer than the model's maximum ("Token indices sequence length is longer than the specified maximum
  sequence length for this model (600 > 512)", tokenization_utils_base.py); it is the likelier reading where the
  traceback shows the position table's lookup, or the table has a position table's size (512, 514, 1024, ...).
  On the GPU the same lookup stops index_select's kernel (``aten/src/ATen/native/cuda/Indexing.cu``
  indexSelectSmallIndex / indexSelectLargeIndex, ``THC/THCTensorIndex.cu`` before 1.8) with
  "Assertion `srcIndex < srcSelectDimSize` failed.": the same check on the same op, read the same way (likely,
  the same other readings), and the device-side assert it raises is that failure, not a second one.
- An embedding built or called with a padding_idx that is not one of its rows (``torch/nn/modules/sparse.py``
  Embedding and EmbeddingBag, ``torch/nn/functional.py`` embedding: "Padding_idx must be within num_embeddings"):
  likely the pad token's id at or past the vocabulary (a [PAD] added to the tokenizer without resizing the
  model, a config's pad_token_id above its vocab_size), read as ``vocab_size_mismatch``; where the line itself
  names a vocabulary-parallel shard, a library gave the shard the global padding_idx (parallel_releases.py), and
  a log whose frames show a vocabulary-parallel embedding names that reading beside this one.
- OpenAI CLIP's ``clip/clip.py`` tokenize refuses a text longer than its context unless truncate=True: "Input
  <text> is too long for context length 77". Likely a caption of the training data past CLIP's 77 tokens: the
  caller may be a library that tokenizes text it did not write without truncating (ultralytics' CLIP text encoder
  did until 8.3.228, which passes truncate=True).
"""

from __future__ import annotations

from torchdoctor.explain.kinds import dataset_labels, parallel_releases
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _one_hot(hits: list[Hit]) -> tuple[str, str]:
    negative = first(hits, "one_hot") == "non-negative"
    return (
        "F.one_hot was given a class value "
        + ("below 0" if negative else "of num_classes or more")
        + on_ranks(hits),
        "one_hot(x, num_classes) takes class values 0..num_classes-1: set num_classes to the number of classes "
        "the labels hold (max label + 1; a binary mask has 2 classes), shift labels numbered from 1 with x - 1, "
        "and map mask values such as 255 to class ids (a 0/255 mask divided by 255) or set them apart as an "
        "ignore value before the one_hot"
        + (" (a padding label of -1 or -100 has to be removed or replaced first)." if negative else "."),
    )


def _label(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "yolo_label"):
        return dataset_labels.explain_class(hits)
    if first(hits, "one_hot"):
        return _one_hot(hits)
    label = first(hits, "label", "?")
    ignore = label in ("-1", "-100", "255")
    return (
        f"a class label ({label}) is outside 0..num_classes-1 of the loss's output" + on_ranks(hits),
        (
            "The label is a padding or 'ignore' value: pass it to the loss, nn.CrossEntropyLoss(ignore_index="
            f"{label}), or remove those samples. "
            if ignore
            else ""
        )
        + "Class labels must be 0..C-1 where C is the model's number of outputs: labels numbered from 1 need "
        "label - 1; a model built with fewer classes than the dataset has needs num_classes = max label + 1 "
        "(check the config's num_classes / n_classes, a transformers model's num_labels, against the dataset); label values such as 255 in a "
        "segmentation mask are an ignore value (ignore_index=255) or need remapping to class indices.",
    )


LABEL_OUT_OF_RANGE = Recogniser(
    kind="label_out_of_range",
    templates=(
        "aten:nll-target-is-out-of-bounds",
        "torch_native:one-hot-class-values-smaller",
        "torch_native:one-hot-class-values-non-negative",
        *dataset_labels.CLASS_TEMPLATES,
    ),
    title="a class label outside the model's classes",
    anchors=(
        " is out of bounds.",
        "Class values must be smaller than num_classes",
        "Class values must be non-negative",
        # a detection dataset's label files against its class count (dataset_labels.py)
        *dataset_labels.CLASS_ANCHORS,
    ),
    match=R(
        r"\bTarget (?P<label>-?\d+) is out of bounds\.|"
        r"Class values must be (?P<one_hot>smaller than num_classes|non-negative)\.|"
        + dataset_labels.CLASS_MATCH
    ),
    confirm=dataset_labels.not_only_warnings,
    describe=_label,
)

_EMBEDDING = R(
    r"index out of range in self|"
    r"index out of range: Tried to access index (?P<index>-?\d+) out of table with (?P<rows>\d+) rows|"
    # index_select's CUDA kernels: the kernel's name and file come before it on the line
    r"Assertion `(?P<gpu_assert>srcIndex < srcSelectDimSize)` failed"
)
_ANCHORS = (
    "index out of range in self",
    "index out of range: Tried to access index ",
    "srcIndex < srcSelectDimSize",
)
_TEMPLATES = (
    "aten:index-out-of-range-in-self",
    "aten:index-out-of-range-tried-to-access",
    "aten:index-select-cuda-assert",
)
SEQUENCE_OVER_MAX = R(
    r"Token indices sequence length is longer than the specified maximum sequence length for this model "
    r"\((?P<seq_len>\d+) > (?P<seq_max>\d+)\)"
)
# the traceback's line of the position table's lookup: BERT's `self.position_embeddings(position_ids)`, GPT-2's
# `position_embeds = self.wpe(position_ids)` (transformers' modeling_gpt2.py; found with a GPT-2 built from a
# config under DDP, rank 1 given 80 tokens for n_positions=64)
POSITION_LOOKUP = R(r"(?P<position_lookup>position_embeddings\(|\bwpe\(position_ids)")
CLIP_CONTEXT = R(r"is too long for context length (?P<clip_context>\d+)")
# transformers' Whisper (models/whisper/modeling_whisper.py WhisperForConditionalGeneration.forward, 4.45+:
# huggingface/transformers#33196): labels longer than the decoder's positions (max_target_positions, 448), which
# before it indexed past the decoder's position embedding, on CUDA a device-side assert in IndexKernel.cu
LABELS_OVER_DECODER = R(
    r"Labels' sequence length (?P<label_len>\d+) cannot exceed the maximum allowed length of (?P<label_max>\d+) "
    r"tokens"
)
# a table of a position table's size (BERT's 512, RoBERTa's 514, GPT-2's 1024, ...): no vocabulary is that small
POSITION_ROWS = R(r"out of table with (?P<position_rows>5[01]\d|10[0-2]\d|20[4-5]\d|40[89]\d|819\d) rows")


def _token_id(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    index, rows = first(hits, "index"), first(hits, "rows")
    told = f" (id {index} in a table of {rows} rows)" if index else ""
    if first(hits, "gpu_assert"):
        told = " (index_select's bounds assertion in its CUDA kernel)"
    return (
        f"an embedding was given an index past its table{told}: likely a token id at or above the vocabulary "
        "size" + on_ranks(hits),
        "Every id given to nn.Embedding(num_embeddings, d) must be below num_embeddings. After adding tokens "
        "to a tokenizer call model.resize_token_embeddings(len(tokenizer)); use the tokenizer the checkpoint "
        "was trained with (its vocab_size equal to the config's); build the embedding with num_embeddings = "
        "max id + 1 (a padding id of -1 needs padding_idx and an id of its own). On the GPU the same error is a "
        "device-side assert: rerun on the CPU to see it.",
    )


EMBEDDING_INDEX_RANGE = Recogniser(
    kind="embedding_index_range",
    templates=_TEMPLATES,
    title="an id past an embedding's table",
    anchors=_ANCHORS,
    match=_EMBEDDING,
    # the token table, the position table and any index_select print it: never certain which
    confirm=lambda hits, ctx: False,
    # on the GPU the failed lookup is also a device-side assert: one failure, read here
    absorbs=("device_assert",),
    also=(
        Alternative(
            "sequence_too_long",
            "a sequence longer than the model's position embeddings (max_position_embeddings, 512 for BERT)",
            "Truncate the inputs to the model's maximum: tokenizer(..., truncation=True, max_length=512), or "
            "split long texts into windows.",
        ),
        Alternative(
            "index_select_operands",
            "an index_select of the script's own with an index past the dimension it selects from",
            "Print the index's max() and the tensor's size in that dimension on the line the traceback names.",
        ),
    ),
    describe=_token_id,
)


def _too_long(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    seq, most = ctx.facts.get("seq_len"), ctx.facts.get("seq_max")
    context = ctx.facts.get("clip_context")
    labels, decoder = ctx.facts.get("label_len"), ctx.facts.get("label_max")
    if labels and not seq:
        return (
            f"labels of {labels} tokens, longer than the decoder's {decoder} positions (Whisper's "
            "max_target_positions)" + on_ranks(hits),
            f"Keep every label sequence at most {decoder} tokens: drop the longer examples before training "
            f"(dataset.filter(lambda x: len(x['labels']) <= {decoder})) or truncate them when tokenizing "
            f"(tokenizer(text, truncation=True, max_length={decoder})); long transcripts can be split with their "
            "audio into shorter segments. transformers before 4.45 does not check this: on CUDA the same labels "
            "fail as a device-side assert in IndexKernel.cu.",
        )
    if context and not seq:
        return (
            f"a text longer than CLIP's context of {context} tokens was tokenized" + on_ranks(hits),
            f"clip.tokenize(texts, context_length={context}, truncate=True) cuts each text to the context; without "
            "truncate it refuses the first one that is longer (captions of Flickr30k or COCO often are). Truncate "
            "or shorten the captions in the dataset, or, where a library calls tokenize, upgrade it to a release "
            "that truncates (ultralytics 8.3.228 or later).",
        )
    rows = ctx.facts.get("position_rows")
    told = (
        f" ({seq} tokens, the model takes {most})"
        if seq
        else f" (an index past a table of {rows} rows, a position table's size)"
        if rows
        else " (the position embeddings' lookup failed)"
    )
    return (
        f"a sequence longer than the model's position embeddings{told}" + on_ranks(hits),
        "Truncate the inputs to the model's maximum length: tokenizer(text, truncation=True, max_length="
        f"{most or 'model.config.max_position_embeddings'}), set the data collator's or script's "
        "max_seq_length to it, or split long documents into overlapping windows.",
    )


SEQUENCE_TOO_LONG = Recogniser(
    kind="sequence_too_long",
    templates=(
        *_TEMPLATES,
        "third_party:clip-input-too-long-for-context",
        "third_party:whisper-labels-exceed-max-target-positions",
    ),
    title="a sequence longer than the position embeddings",
    anchors=(*_ANCHORS, "is too long for context length", "cannot exceed the maximum allowed length of"),
    match=R(_EMBEDDING.pattern + "|" + CLIP_CONTEXT.pattern + "|" + LABELS_OVER_DECODER.pattern),
    requires=("seq_len", "position_lookup", "position_rows", "clip_context", "label_len"),
    confirm=lambda hits, ctx: "seq_len" in ctx.facts or "label_len" in ctx.facts,
    also=(
        Alternative(
            "embedding_index_range",
            "a token id at or above the vocabulary size",
            "After adding tokens to the tokenizer call model.resize_token_embeddings(len(tokenizer)).",
            unless=("clip_context", "label_len"),
        ),
        Alternative(
            "library_version_bug",
            "a library that tokenizes text it did not write without truncating (ultralytics' CLIP text encoder "
            "before 8.3.228)",
            "Upgrade that library (pip install -U ultralytics: 8.3.228 passes truncate=True to clip.tokenize).",
            when=("clip_context",),
        ),
    ),
    absorbs=("embedding_index_range", "device_assert"),
    describe=_too_long,
)

# the frames or words of a vocabulary-parallel embedding anywhere in the log (a shard of the vocabulary per rank)
SHARDED_EMBEDDING = R(r"(?P<sharded_embedding>VocabParallelEmbedding|vocab_parallel)")


def _padding_past_vocabulary(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "an embedding was built (or called) with a padding_idx that is not one of its rows: likely the pad token's "
        "id at or above the vocabulary size the embedding has" + on_ranks(hits),
        "padding_idx must be below num_embeddings (or at least -num_embeddings). A [PAD] token added to the "
        "tokenizer after the model was built has the id len(tokenizer) - 1, past a model of the old vocab_size: "
        "call model.resize_token_embeddings(len(tokenizer)) before training, or reuse a token the vocabulary has "
        "(tokenizer.pad_token = tokenizer.eos_token); a config's pad_token_id must be below its vocab_size, and an "
        "embedding of the script's own is built with num_embeddings = len(tokenizer). An embedding sharded by "
        "tensor parallelism holds only its shard's rows: it takes the pad id local to the shard that holds it.",
    )


VOCAB_SIZE_MISMATCH = Recogniser(
    # torch/nn/modules/sparse.py Embedding.__init__ / EmbeddingBag.__init__, torch/nn/functional.py embedding
    kind="vocab_size_mismatch",
    templates=(
        "torch:padding-idx-must-be-within-num-embeddings",
        "torch_cpp:padding-idx-must-be-within-num",
        "torch_cpp:padding-idx-must-be-within-num-2",
    ),
    title="a token id the model's vocabulary has no row for",
    anchors=(parallel_releases.PADDING_IDX,),
    # the refusal with the vocabulary-parallel shard named on its line is that library's bug (parallel_releases.py)
    reject=R(parallel_releases.SHARD_WORDS),
    # a pad id past the vocabulary, or a shard of the vocabulary given the global id: never certain which
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "library_version_bug",
            "a vocabulary-parallel embedding built on its shard with the model's global padding_idx",
            "Upgrade the library whose vocabulary-parallel embedding passes the global padding_idx to its shard "
            "(torchtitan's Hugging Face backend since pytorch/torchtitan#4637), or build the embedding without "
            "padding_idx.",
            when=("sharded_embedding",),
        ),
    ),
    describe=_padding_past_vocabulary,
)

RECOGNISERS = (LABEL_OUT_OF_RANGE, SEQUENCE_TOO_LONG, EMBEDDING_INDEX_RANGE, VOCAB_SIZE_MISMATCH)
CONTEXT = (
    ("ocab", SHARDED_EMBEDDING),
    ("Token indices sequence length", SEQUENCE_OVER_MAX),
    ("position_embeddings(", POSITION_LOOKUP),
    ("wpe(position_ids", POSITION_LOOKUP),
    ("out of table with", POSITION_ROWS),
    ("is too long for context length", CLIP_CONTEXT),
    ("cannot exceed the maximum allowed length of", LABELS_OVER_DECODER),
)
