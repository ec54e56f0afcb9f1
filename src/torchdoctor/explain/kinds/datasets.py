"""A dataset's samples that do not become batches: collate, forked workers, caches on shared disks.

Kinds of failure in how a dataset's samples become batches: the DataLoader's own option checks, the default
collate refusing samples of different sizes, a file handle that forked DataLoader workers share, and a
training loop that calls next() on a DataLoader iterator past its last batch; and a cache (compiled kernels, the
Hugging Face datasets cache) on a network file system several processes rewrite, read back stale.

The messages are torch's: ``torch/utils/data/dataloader.py`` (DataLoader.__init__ checks its options before
anything is loaded), ``torch/utils/data/_utils/collate.py`` (``default_collate`` stacks the samples of a batch
with ``torch.stack``; in a worker it first allocates shared memory sized for the first sample, which a larger
sample cannot be resized into), ATen's ``stack`` (``TensorShape.cpp``) and ``Resize.cpp``; and h5py's own words
for a read the HDF5 library could not make sense of.
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import (
    dataset_labels,
    detection_boxes,
    hdf5_files,
    image_files,
    media_reads,
    raster_reads,
    webdataset_shards,
)
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# where the failing code ran: a DataLoader worker (its traceback re-raised in the main process, or the worker's
# own frame) and the default collate (its frame, or its name in the message's traceback)
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    *(
        (
            literal,
            R(
                r"(?P<saw_dataloader_worker>in DataLoader worker process|_worker_loop\b|DataLoader worker \(pid)"
            ),
        )
        for literal in ("in DataLoader worker process", "_worker_loop", "DataLoader worker (pid")
    ),
    # a user's own words that the handle was opened in the Dataset's __init__ and not in __getitem__ (one line
    # naming both: a traceback's frames name one method a line)
    (
        "__getitem__",
        R(r"(?P<saw_opened_in_init>\b__init__\b[^\n]{0,200}\b__getitem__\b)"),
    ),
    (
        "collate",
        R(r"(?P<saw_collate>\bdefault_collate\b|\bcollate_fn\b|_utils[/\\]collate\.py|\bin collate\b)"),
    ),
    # transformers' data collators (data/data_collator.py: default_data_collator, DataCollatorWithPadding...), which
    # build a batch with torch.tensor over the features' lists
    ("data_collator", R(r"(?P<saw_collate>data[/\\]data_collator\.py|\bdefault_data_collator\b)")),
    # a frame of the DataLoader iterator's __next__ (torch/utils/data/dataloader.py, or a project's copy of it):
    # where a StopIteration that ends the traceback came from
    (
        "dataloader.py",
        R(
            r"(?P<saw_dataloader_next>data[/\\]dataloader\.py\S{0,10}, line \d+, in (?:__next__|_next_data|next)\b)"
        ),
    ),
    # Lightning's predict loop (trainer.predict, its loop's file or its method): before 2.3.0 it re-instantiated
    # every custom batch sampler to wrap it for the predictions' indices, whatever use_distributed_sampler said
    *(
        (
            literal,
            R(
                r"(?P<saw_lightning_predict>\bpredict(?:ion)?_loop\.py|\btrainer\.predict\("
                r"|\b_run_predict\b|\b_predict_impl\b)"
            ),
        )
        for literal in (
            "predict_loop",
            "prediction_loop",
            "trainer.predict(",
            "_run_predict",
            "_predict_impl",
        )
    ),
    # caches a run writes and reads back, which on a file system several nodes share each node's processes
    # rebuild at once: Triton's / Inductor's kernel cache (its folder, its variable, a frame of its cache code, or
    # the words for compiling its kernels) and the Hugging Face datasets cache (its folder, variable or frames)
    *(
        (
            literal,
            R(
                r"(?P<saw_compile_cache>[/\\]\.triton[/\\]|TRITON_CACHE_DIR|triton[/\\]runtime[/\\]cache\.py"
                r"|torchinductor_\w|\b[Tt]riton kernels?\b)"
            ),
        )
        for literal in ("riton", "TRITON_CACHE_DIR", "torchinductor_")
    ),
    *(
        (
            literal,
            R(
                r"(?P<saw_datasets_cache>huggingface[/\\]datasets[/\\]|HF_DATASETS_CACHE"
                r"|datasets[/\\](?:builder|arrow_dataset|load)\.py)"
            ),
        )
        for literal in ("datasets", "HF_DATASETS_CACHE")
    ),
)

_STACK = R(
    r"stack expects each tensor to be equal size, but got (?P<first_shape>\[[\d, ]{0,60}\]) at entry 0 and "
    r"(?P<other_shape>\[[\d, ]{0,60}\]) at entry (?P<entry>\d+)"
)


# torch.stack's shapes of images that differ only in their channel count (grey 1, RGB 3, RGBA 4):
# the first dimension of CHW tensors or the last of HWC arrays. The threads that post it find a grayscale or RGBA
# file among RGB ones (a mask saved in another mode), which resizing or padding does not fix.
_CHANNELS = (
    R(
        r"stack expects each tensor to be equal size, but got (?P<image_channels>\[(?P<channels_a>[134]), "
        r"(?P<chw>\d+, \d+(?:, \d+)?)\] at entry 0 and \[(?!(?P=channels_a),)(?P<channels_b>[134]), (?P=chw)\])"
    ),
    R(
        r"stack expects each tensor to be equal size, but got (?P<image_channels>\[(?P<hwc>\d+, \d+), "
        r"(?P<channels_a>[134])\] at entry 0 and \[(?P=hwc), (?!(?P=channels_a)\])(?P<channels_b>[134])\])"
    ),
)


def _collate(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "image_channels"):
        return (
            f"the samples of a batch differ only in their channel count ({first(hits, 'channels_a')} against "
            f"{first(hits, 'channels_b')}: sample 0 has shape {first(hits, 'first_shape')}, sample "
            f"{first(hits, 'entry')} {first(hits, 'other_shape')}), so they cannot be stacked into one tensor"
            + on_ranks(hits),
            "Some image files of the dataset have another mode than the rest (grayscale 'L', 'RGBA', 'P'): convert "
            "each image when it is loaded, Image.open(path).convert('RGB') (or 'L' for one-channel inputs and "
            "masks), before the transforms; a transforms.Grayscale(num_output_channels=3) does the same after "
            "loading. Resizing or padding does not change the channels. Find the files: "
            "[p for p in paths if Image.open(p).mode != 'RGB'].",
        )
    shapes = ""
    if first(hits, "first_shape"):
        shapes = (
            f": sample 0 has shape {first(hits, 'first_shape')}, sample {first(hits, 'entry')} "
            f"{first(hits, 'other_shape')}"
        )
    elif first(hits, "list_sizes"):
        shapes = ": the samples' lists have different lengths"
    elif first(hits, "ragged_dim"):
        return _ragged(hits)
    summary = (
        "the samples of a batch have different sizes, so they cannot be stacked into one tensor" + shapes
    )
    fix = (
        "The DataLoader's default collate stacks the samples of a batch into one tensor (torch.stack), so every "
        "sample it stacks must have the same shape; in a worker process the batch's shared memory is sized for "
        "the first sample, which is why a larger one fails there as 'Trying to resize storage that is not "
        "resizable'. Either make the samples one size (crop, resize or pad them in the Dataset), or pass a "
        "collate_fn that pads them (torch.nn.utils.rnn.pad_sequence, with a mask) or returns them as a list, or "
        "keep the batch size at 1 per GPU and reach a larger total batch size with more GPUs or gradient "
        "accumulation."
    )
    return summary + on_ranks(hits), fix


def _ragged(hits: list[Hit]) -> tuple[str, str]:
    want, dim, got = (
        first(hits, "ragged_want", ""),
        first(hits, "ragged_dim", ""),
        first(hits, "ragged_got", ""),
    )
    return (
        f"torch.tensor was given lists of different lengths to make one tensor (length {want} expected at dim "
        f"{dim}, {got} found): the samples of a batch were not padded to one length" + on_ranks(hits),
        "A batch of token lists becomes one tensor only when every list has the same length. Pad them: tokenize "
        "with truncation=True and padding='max_length' (max_length=N), or leave padding to a collator that pads "
        "each batch (DataCollatorWithPadding(tokenizer)). It pads input_ids and attention_mask only: labels of "
        "varying length (token classification, seq2seq, causal LM labels made in the map) need "
        "DataCollatorForTokenClassification, DataCollatorForSeq2Seq or DataCollatorForLanguageModeling(mlm=False), "
        "which pad labels with -100. default_data_collator pads nothing. In your own collate_fn, "
        "torch.nn.utils.rnn.pad_sequence(batch_first=True) pads a list of tensors.",
    )


COLLATE_UNEQUAL_SIZES = Recogniser(
    kind="collate_unequal_sizes",
    title="samples of different sizes in one batch",
    anchors=(
        "stack expects each tensor to be equal size",
        "each element in list of batch should be of equal size",
        "Trying to resize storage that is not resizable",
        "expected sequence of length ",
    ),
    templates=(
        "torch_native:stack-expects-each-tensor-equal-size",
        "torch:each-element-in-list-of-batch",
        "torch_native:resize-storage-not-resizable",
        "torch_native:tensor-expected-sequence-of-length",
    ),
    facts=(
        _STACK,
        *_CHANNELS,
        R(r"(?P<list_sizes>each element in list of batch should be of equal size)"),
        R(
            r"expected sequence of length (?P<ragged_want>\d{1,12}) at dim (?P<ragged_dim>\d{1,3}) "
            r"\(got (?P<ragged_got>\d{1,12})\)"
        ),
    ),
    # collate.py's own check names the batch; torch.stack and a refused resize are printed for any call of
    # theirs, in the model's code too (torch.tensor's ragged lists in any code): certain only where the log shows
    # the DataLoader's collate, a data collator or a worker
    # images that differ only in their channels are a file of another mode in the data (bad_training_data), not
    # samples of different sizes: likely, that reading named
    confirm=lambda hits, ctx: (
        (
            any("list_sizes" in h.facts for h in hits)
            or "saw_collate" in ctx.facts
            or "saw_dataloader_worker" in ctx.facts
        )
        and not any("image_channels" in h.facts for h in hits)
    ),
    also=(
        Alternative(
            "bad_training_data",
            "image files of another mode among the rest (grayscale or RGBA among RGB): their channel counts differ",
            "Convert every image when it is loaded: Image.open(path).convert('RGB').",
            when=("image_channels",),
        ),
        Alternative(
            "shape_mismatch",
            "a torch.stack / resize_ in the model's or the script's own code",
            "Print the shapes just before the failing call (the traceback's last frame in your code) and make "
            "them agree; a tensor whose storage it does not own (from numpy, a shared or a view) must be cloned "
            "before resize_.",
            unless=("ragged_dim",),
        ),
        Alternative(
            "shape_mismatch",
            "nested lists of unequal length given to torch.tensor in the model's or the script's own code",
            "Print the lengths of the lists just before the failing torch.tensor call (the traceback's last frame "
            "in your code) and make them equal, or build a list of tensors instead.",
            when=("ragged_dim",),
        ),
    ),
    describe=_collate,
)


def _none_sample(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    shape = "dict" if any("none_subscripted" in h.facts for h in hits) else "tuple or list"
    return (
        f"a sample the dataset returned as None reached the DataLoader's default_collate among {shape} samples "
        "(a file it could not read and skipped, or a __getitem__ path without a return), or a field of one "
        f"sample that is None where the others hold a {shape}" + on_ranks(hits),
        "A Dataset's __getitem__ must return a sample for every index. Find the ones it does not: "
        "[i for i in range(len(dataset)) if dataset[i] is None], and fix that sample or the path in __getitem__ "
        "that returns nothing (an except that only logs, an if without an else). collate recurses into each "
        "field, so a field of a sample that is None where the other samples hold a list, tuple or dict fails the "
        "same way: where no sample is None, look for one whose field is (a label or a mask left unset). To skip "
        "unreadable samples "
        "instead, drop them when the dataset is built, or give the DataLoader a collate_fn that leaves them out: "
        "collate_fn=lambda batch: torch.utils.data.default_collate([b for b in batch if b is not None]) (a "
        "module-level function where workers are spawned).",
    )


# CPython's TypeError for len(None) / None[key] is printed for any code; raised in torch's collate.py it is
# collate's len(elem) check on a batch of sequence samples (tuples, lists) or its d[key] on a batch of dict
# samples, a later sample of the batch being None (a first sample of None is default_collate's own "found <class
# 'NoneType'>", dataloader_options.py). Found with pytorch/examples' ddp-tutorial-series under torchrun, its
# dataset returning None for one index read by two workers (tests/fixtures/planted_runs/none_item).
COLLATE_NONE_SAMPLE = Recogniser(
    kind="collate_none_sample",
    title="a sample the dataset returned as None",
    anchors=("object of type 'NoneType' has no len()", "'NoneType' object is not subscriptable"),
    templates=("system:nonetype-has-no-len", "system:nonetype-not-subscriptable"),
    match=R(
        r"TypeError: (?:object of type 'NoneType' has no len\(\)|'NoneType' object is not (?P<none_subscripted>subscriptable))"
    ),
    # only where the traceback shows it raised in torch's collate (the line alone is any code's len(None))
    holds=lambda facts: facts.get("raised_in_module") == "torch.utils.data._utils.collate",
    describe=_none_sample,
)


def _persistent(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    summary = "a DataLoader was given persistent_workers=True with num_workers=0" + on_ranks(hits)
    fix = (
        "Persistent workers keep the worker processes alive between epochs, so they need workers: set "
        "num_workers > 0, or persistent_workers=False when loading in the main process (num_workers=0, the "
        "default on Windows in some trainers). Through a trainer's options: --dataloader_num_workers N with "
        "N > 0, or turn its persistent-workers option off."
    )
    return summary, fix


DATALOADER_PERSISTENT_WORKERS = Recogniser(
    # torch/utils/data/dataloader.py DataLoader.__init__
    kind="dataloader_persistent_workers",
    title="persistent DataLoader workers without workers",
    anchors=("persistent_workers option needs num_workers > 0",),
    templates=("torch:persistent-workers-option-needs-num-workers",),
    facts=(R(r"(?P<trainer_option>--dataloader_num_workers|dataloader_persistent_workers)"),),
    # the setting is refused for what it is; who set it is another matter: a trainer's own default (a release
    # that turned persistent workers on for every run) when the log shows the trainer's option beside it
    confirm=lambda hits, ctx: not any("trainer_option" in h.facts for h in hits),
    also=(
        Alternative(
            "library_version_bug",
            "a trainer release that turns persistent workers on by default, also for zero workers",
            "Upgrade the trainer (a later release turns persistence off when there are no workers), or pass its "
            "persistent-workers option as false yourself next to --dataloader_num_workers 0.",
            when=("trainer_option",),
        ),
    ),
    describe=_persistent,
)

# the HDF5 library's words for on-disk structures it could not decode (h5py shows them in parentheses after its
# own "Unable to open object" / "Can't read data"): what reading one file handle from several processes produces
_HDF5_GARBLED = (
    "bad object header version number",
    "wrong B-tree signature",
    "bad symbol table node signature",
)


def _handle_fork(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    what = first(hits, "hdf5_error", "").strip()
    where = " inside a DataLoader worker" if "saw_dataloader_worker" in ctx.facts else ""
    summary = (
        f"an HDF5 (h5py) file read failed{where}"
        + (f" ({what})" if what else "")
        + ": a file handle opened in the Dataset's __init__ is shared by the forked worker processes"
        + on_ranks(hits)
    )
    fix = (
        "h5py does not allow one open file to be read from several processes: the handle the Dataset opened in "
        "__init__ is copied into every forked DataLoader worker, and their reads corrupt each other. Open the "
        "file lazily in each worker instead: store the path in __init__, and in __getitem__ do `if self.file is "
        "None: self.file = h5py.File(self.path, 'r')` (or open it in a worker_init_fn). The same holds for LMDB "
        "environments and other database handles. To confirm, num_workers=0 makes it go away."
    )
    return summary, fix


DATASET_HANDLE_FORK = Recogniser(
    kind="dataset_handle_fork",
    title="a dataset file handle shared by DataLoader workers",
    anchors=_HDF5_GARBLED,
    templates=(
        "third_party:hdf5-bad-object-header-version",
        "third_party:hdf5-wrong-b-tree-signature",
        "third_party:hdf5-bad-symbol-table-node-signature",
    ),
    facts=(
        R(
            r"(?P<hdf5_error>(?:Unable to open object|Can't read data|Unable to read attribute) \([^)]{1,100}\))"
        ),
    ),
    # only inside a DataLoader worker (or where the log says the handle was opened in __init__, not in
    # __getitem__): the same messages come from a file that is itself damaged
    requires=("saw_dataloader_worker", "saw_opened_in_init"),
    # a damaged file prints the same: only likely, naming it
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "corrupt_file",
            "an HDF5 file that is itself damaged (an interrupted write)",
            "Read the same key with num_workers=0 (or h5dump the file): if it still fails, rewrite the file.",
        ),
    ),
    describe=_handle_fork,
)


def _text_as_numbers(hits: list[Hit]) -> tuple[str, str]:
    return (
        "torch.tensor() was given text where it wants numbers (a str inside the values of a batch or label)"
        + on_ranks(hits),
        "A value that should be a number is a string: a label column holding class names or a stray header row "
        "(two CSV files concatenated with their headers, a header read as data), numbers stored as text, or a "
        "text column the collate turns into a tensor. Print a few samples just before the tensor is made; clean "
        "the data (drop the extra header rows, pd.to_numeric), map class names to ids (label2id), and pass only "
        "the numeric columns (remove the text ones) to the collate.",
    )


def _not_text(hits: list[Hit]) -> tuple[str, str]:
    return (
        "the fast tokenizer was given something other than a string: likely a missing value in the text column "
        "of the training data (None, NaN, an empty cell)" + on_ranks(hits),
        "Find the rows whose text is not a str before tokenizing: rows with None/NaN or empty fields (a CSV or "
        "JSON with blank cells; df.dropna(subset=[<text column>]) or dataset.filter(lambda x: "
        "isinstance(x[<text column>], str) and x[<text column>])), or a number where text is expected "
        "(str(value)). The tokenizers library accepts only str (or a pair of them) per example.",
    )


def _bad_data(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    rows = dataset_labels.explain_rows(hits)
    if rows is not None:
        return rows
    if first(hits, "str_dims"):
        return _text_as_numbers(hits)
    if first(hits, "tok_not_str"):
        return _not_text(hits)
    if first(hits, "boxes_inverted"):
        summary, fix = detection_boxes.explain_inverted(detection_boxes.flipped(ctx.facts))
        return summary + on_ranks(hits), fix
    if first(hits, "raster_read"):
        return raster_reads.explain(hits)
    if first(hits, "hdf5_unreadable"):
        return hdf5_files.explain(hits)
    if first(hits, "media_read"):
        return media_reads.explain(hits)
    if first(hits, "wds_duplicate"):
        return webdataset_shards.explain_duplicate(hits)
    where = " in a DataLoader worker" if "saw_dataloader_worker" in ctx.facts else ""
    if not first(hits, "truncated_image") and (
        first(hits, "unidentified_path") or first(hits, "unidentified_stream")
    ):
        return image_files.explain_unidentified(hits, where)
    if not first(hits, "truncated_image") and (first(hits, "png_damaged") or first(hits, "codec_damaged")):
        return image_files.explain_damaged(hits, where)
    summary = (
        "an image of the training data is truncated (its file ends before its last pixels): Pillow refused to "
        "decode it" + where + on_ranks(hits)
    )
    fix = (
        "A file of the dataset is damaged or was only partly written (an interrupted download, copy or "
        "extraction); Pillow stops at it. Find it: open every image once outside training (for each path: "
        "Image.open(path).load(), printing the path that fails) or print the path in the Dataset's __getitem__, "
        "then re-download, re-copy or drop it. To keep training on such files as they are, let Pillow fill the "
        "missing part: `from PIL import ImageFile; ImageFile.LOAD_TRUNCATED_IMAGES = True` at the top of the "
        "module that defines the Dataset (DataLoader workers import it too)."
    )
    return summary, fix


BAD_TRAINING_DATA = Recogniser(
    # Pillow, PIL/ImageFile.py ImageFile.load: "image file is truncated (N bytes not processed)" when a JPEG's
    # data ends early, "image file is truncated" for PNG/GIF; raised unless ImageFile.LOAD_TRUNCATED_IMAGES
    # torch/csrc/utils/tensor_new.cpp (compute_sizes): a str is a sequence of str, so torch.tensor() of values
    # holding one recurses past its maximum number of dimensions: "too many dimensions 'str'"; the text may be
    # the data's (a header row, class names) or a column the code should not have turned into a tensor
    # huggingface/tokenizers, bindings/python/src/tokenizer.rs: TextInputSequence's and TextEncodeInput's
    # FromPyObject raise "TextInputSequence must be str" / "TextEncodeInput must be Union[...]" for any element
    # that is not a str (None or NaN from an empty cell, a number), and for a str with lone surrogates (text
    # decoded with the wrong codec), or a tuple passed where a pair of arguments was meant: likely only
    kind="bad_training_data",
    title="a damaged file in the training data",
    anchors=(
        "image file is truncated",
        "too many dimensions 'str'",
        "TextInputSequence must be str",
        "TextEncodeInput must be Union[TextInputSequence",
        detection_boxes.ANCHOR,
        # label files a detection library's dataset check refuses (dataset_labels.py)
        *dataset_labels.ROW_ANCHORS,
        # a GeoTIFF GDAL cannot read to its end (raster_reads.py)
        *raster_reads.ANCHORS,
        # an HDF5 file cut short or not HDF5 (hdf5_files.py)
        *hdf5_files.ANCHORS,
        # stereo audio given to librosa's mono check, photos COLMAP cannot pose (media_reads.py)
        *media_reads.ANCHORS,
        # a file Pillow does not identify as an image (image_files.py)
        *image_files.ANCHORS,
        # a webdataset shard whose members' names make two files of one key (webdataset_shards.py)
        webdataset_shards.DUPLICATE,
    ),
    templates=(
        "third_party:pil-image-file-is-truncated",
        "third_party:pil-image-file-is-truncated-2",
        # the same two raises of PIL/ImageFile.py load(), as the Pillow catalog has them
        "pillow:image-file-is-truncated",
        "pillow:image-file-is-truncated-bytes-not",
        "torch_native:too-many-dimensions-str",
        "third_party:tokenizers-text-input-sequence-must-be-str",
        "third_party:tokenizers-text-encode-input-must-be-union",
        detection_boxes.TEMPLATE,
        *dataset_labels.ROW_TEMPLATES,
        *raster_reads.TEMPLATES,
        *hdf5_files.TEMPLATES,
        *media_reads.TEMPLATES,
        *image_files.TEMPLATES,
        webdataset_shards.DUPLICATE_TEMPLATE,
    ),
    facts=(
        R(r"(?P<str_dims>too many dimensions 'str')"),
        R(r"(?P<tok_not_str>TextInputSequence must be str|TextEncodeInput must be Union\[TextInputSequence)"),
        detection_boxes.FACT,
        dataset_labels.ROW_FACT,
        dataset_labels.IGNORED_FACT,
        raster_reads.FACT,
        raster_reads.FILE,
        hdf5_files.FACT,
        media_reads.FACT,
        image_files.FACT,
        image_files.DAMAGED_FACT,
        image_files.CODEC_FACT,
        webdataset_shards.DUPLICATE_FACT,
        R(r"(?P<truncated_image>image file is truncated)"),
    ),
    reject=R(dataset_labels.ROW_REJECT + "|" + image_files.REJECT),
    # py-faster-rcnn's box assertion is about the annotations only beside the flip (detection_boxes.py)
    confirm=lambda hits, ctx: (
        not any(
            "str_dims" in h.facts
            or "tok_not_str" in h.facts
            or "raster_read" in h.facts
            or "hdf5_unreadable" in h.facts
            or "media_read" in h.facts
            or "unidentified_stream" in h.facts
            or "codec_damaged" in h.facts
            for h in hits
        )
        and (detection_boxes.flipped(ctx.facts) or not any("boxes_inverted" in h.facts for h in hits))
        # ultralytics' "ignoring corrupt image/label" and detectron2's "Filtered out N instances" are warnings
        # of a run that goes on: what they say of the labels holds, but not that they stopped the run, so a
        # log with nothing else leaves them likely and a failure found beside them leads
        and any(not any(k in h.facts for k in dataset_labels.ROW_WARNINGS) for h in hits)
    ),
    also=(
        Alternative(
            "text_column_as_tensor",
            "a text column of the dataset the code turns into a tensor (not the data's fault)",
            "Pass only numeric columns to the collate: remove the text columns (dataset.remove_columns([...]), "
            "the Trainer's remove_unused_columns) or encode them first.",
            when=("str_dims",),
        ),
        Alternative(
            "tokenizer_input_type",
            "the code handing the tokenizer another type (a list of words without is_split_into_words=True, a "
            "tuple as one argument, text decoded with the wrong codec)",
            "Pass a str, a list of str, or two arguments for a pair (tokenizer(text_a, text_b)); pre-split words "
            "need is_split_into_words=True; read text files and stdin as UTF-8 (errors='replace').",
            when=("tok_not_str",),
        ),
        raster_reads.SHARED_HANDLE,
        hdf5_files.CHECKPOINT,
        *media_reads.ALSO,
        image_files.STREAM,
        image_files.CODEC_STREAM,
    ),
    describe=_bad_data,
)


def _batch_sampler(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    sampler = first(hits, "batch_sampler_class")
    named = f" `{sampler}`" if sampler else ""
    # a BatchSampler subclass without a `sampler` argument is refused under predict in every release: not this
    if "saw_lightning_predict" in ctx.facts and not first(hits, "modified_sampler"):
        # lightning/pytorch/utilities/data.py _dataloader_init_kwargs_resolve_sampler re-instantiates a custom batch
        # sampler for prediction too (to wrap it for the predictions' indices), use_distributed_sampler=False or
        # not; before 2.3.0 (#19678, the fix of Lightning-AI/pytorch-lightning#19657) it raised this for one that
        # is not a BatchSampler, where 2.3.0 uses it as it is and warns
        return (
            f"Lightning's predict loop could not rebuild the custom batch sampler{named}: before 2.3.0 it "
            "re-creates every custom batch sampler for trainer.predict, whatever use_distributed_sampler says"
            + on_ranks(hits),
            "Under trainer.predict, Trainer(use_distributed_sampler=False) does not stop it: upgrade Lightning to "
            "2.3.0 or later (pip install -U lightning), which uses a custom batch sampler for prediction as it is "
            "(warning that it cannot set drop_last=False); with an older release, subclass "
            "torch.utils.data.BatchSampler and take sampler, batch_size and drop_last as its arguments.",
        )
    return (
        f"Lightning could not rebuild the custom batch sampler{named} with a DistributedSampler inside it, as it "
        "does for every DataLoader under a distributed strategy" + on_ranks(hits),
        "Under DDP (and the other distributed strategies) Lightning re-creates each DataLoader's batch sampler with "
        "a DistributedSampler as its sampler, calling its class as BatchSampler is called: (sampler, batch_size, "
        "drop_last). A batch sampler that takes other arguments, or that already splits the data by rank, cannot "
        "be rebuilt that way. If yours already gives each rank its own part (rank and world size, or a "
        "DistributedSampler inside), tell Lightning to leave it: Trainer(use_distributed_sampler=False) "
        "(Lightning < 2.0: replace_sampler_ddp=False; Fabric: setup_dataloaders(..., use_distributed_sampler="
        "False)). Otherwise follow BatchSampler's API (subclass torch.utils.data.BatchSampler, take the sampler "
        "as its first argument) and create it in the *_dataloader hook of your module.",
    )


CUSTOM_BATCH_SAMPLER = Recogniser(
    # lightning/pytorch/utilities/data.py (and fabric's), _dataloader_init_kwargs_resolve_sampler: 2.1+ raises
    # this TypeError from the sampler class's own (#18402); 1.7-2.0 raised a MisconfigurationException
    kind="custom_batch_sampler",
    title="Lightning cannot rebuild a custom batch sampler",
    anchors=(
        "Lightning can't inject a (distributed) sampler into your batch sampler",
        "We tried to re-instantiate your custom batch sampler and failed",
        "Trying to inject a modified sampler into the batch sampler",
    ),
    templates=(
        "lightning:lightning-can-inject-distributed-sampler-into",
        "lightning:lightning-can-inject-distributed-sampler-into-2",
        "lightning:lightning-can-inject-distributed-sampler-into-3",
        "lightning:trying-to-inject-modified-sampler-into",
        "third_party:lightning-re-instantiate-custom-batch-sampler",
    ),
    facts=(
        R(r"it seems the class `(?P<batch_sampler_class>\w{1,100})` does not have an argument"),
        R(r"(?P<modified_sampler>Trying to inject a modified sampler into the batch sampler)"),
    ),
    describe=_batch_sampler,
)


def _exhausted(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    summary = (
        "the training loop called next() on a DataLoader iterator that had no batches left: its StopIteration "
        "ended the run" + on_ranks(hits)
    )
    fix = (
        "A DataLoader iterator yields len(loader) batches and then raises StopIteration; a loop that calls "
        "next(iterator) a fixed number of times (iterations per epoch, total steps) runs past the end when the "
        "dataset (or its declared, fixed length) holds fewer batches than that, e.g. a smaller dataset, a larger "
        "batch size, more GPUs splitting it, or drop_last. Iterate with `for batch in loader:` per epoch, or "
        "catch StopIteration and start a new iterator (iterator = iter(loader)), or make the number of steps "
        "per epoch len(loader) (a dataset with a fixed nominal length: raise its size to cover the steps)."
    )
    return summary, fix


DATALOADER_EXHAUSTED = Recogniser(
    # torch/utils/data/dataloader.py _BaseDataLoaderIter.__next__ / _next_data: the builtin StopIteration once
    # the batches are used up; uncaught, Python's traceback ends with its bare name
    kind="dataloader_exhausted",
    title="a DataLoader iterator used past its end",
    templates=("system:python-stop-iteration",),
    anchors=("StopIteration",),
    # the bare exception line that ends a traceback (torchrun may prefix it with the rank), not "generator raised
    # StopIteration" or an `except StopIteration:` in a source line
    match=R(r"\A\s*(?:\[(?:rank|default)\d+\]:\s*)?StopIteration\s*(?:\n|\Z)"),
    span=2,
    # a runner that catches the StopIteration to start the next epoch fails on something else: that is the error
    reject=R(r"During handling of the above exception"),
    # only when the traceback went through the DataLoader's __next__: next() on any other empty iterator
    # (next(model.parameters()) on a model without parameters) raises the same bare StopIteration
    requires=("saw_dataloader_next",),
    # the loop went past the loader's last batch; how many batches there were is the data's: a dataset that
    # listed no sample at its path (or fewer than one batch with drop_last=True) ends at the first next(), and
    # the fix is then the data path, not the loop
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "data_path_missing",
            "a dataset with no sample (or fewer than one batch with drop_last=True): the path or the layout it "
            "reads its files from holds none",
            "Print len(dataset) and len(loader) before the loop: 0 means the dataset found no files at the data "
            "root it was given (check the path and the folder layout and extensions its code lists), and a "
            "dataset smaller than one batch with drop_last=True gives no batch.",
        ),
    ),
    describe=_exhausted,
)

_STALE = "[Errno 116] Stale file handle"
_STALE_PATH = R(r"Stale file handle: '(?P<stale_path>[^'\n]{1,300})")
_ESTALE = "'Stale file handle' (ESTALE) is NFS saying the file this process held was removed or replaced by another client"


def _stale_path(hits: list[Hit]) -> str:
    path = (first(hits, "stale_path") or "").strip()
    return f" ({path[:200]})" if path else ""


def _compile_cache(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    summary = (
        "a file of the kernel-compilation cache went stale"
        + _stale_path(hits)
        + ": the cache is on a network "
        "file system that processes on several nodes write at once" + on_ranks(hits)
    )
    fix = (
        f"{_ESTALE}. Triton (and torch.compile's Inductor) write compiled kernels into a cache folder "
        "(~/.triton/cache, /tmp/torchinductor_<user>); when that folder is on a home or project share every node "
        "compiles into the same files at once. Give each node (or pod) a local cache: export "
        "TRITON_CACHE_DIR=/tmp/triton_cache (and TORCHINDUCTOR_CACHE_DIR=/tmp/inductor_cache) in the job script "
        "before the launcher starts, or a per-rank folder under a local disk."
    )
    return summary, fix


def _datasets_cache(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    summary = (
        "a file of the datasets cache went stale"
        + _stale_path(hits)
        + ": the Hugging Face datasets cache is on "
        "a network file system that another process or node rewrote" + on_ranks(hits)
    )
    fix = (
        f"{_ESTALE}: here a file of the Hugging Face datasets cache (HF_DATASETS_CACHE, by default "
        "~/.cache/huggingface/datasets) that the ranks or another job rebuild while this one reads it. Prepare "
        "the dataset once before training (load_dataset / map on one process, or the trainer's preprocessing "
        "step) and train from the saved dataset, or point HF_DATASETS_CACHE at a local disk of each node; keep "
        "the dataset files themselves in a local folder rather than re-downloading into a shared cache."
    )
    return summary, fix


def _stale_cache(kind: str, title: str, cache_seen: str, cache_path: str, describe) -> Recogniser:
    """CPython's OSError for ESTALE, read as the cache the log shows (``cache_seen``, a context fact) on a shared
    file system; it takes in the general reading of the same line (`environment.SHARED_FILESYSTEM_IO`). Where the
    OSError names its file, that file must be the cache's (``cache_path``, words of its folders): a cache
    mentioned elsewhere in the log (datasets' "Loading cached processed dataset at ...", which most Hugging Face
    runs print) says nothing of a stale checkpoint or data file, which the general reading keeps."""
    return Recogniser(
        kind=kind,
        title=title,
        anchors=(_STALE,),
        templates=("system:estale-stale-file-handle",),
        absorbs=("shared_filesystem_io",),
        facts=(_STALE_PATH,),
        requires=(cache_seen,),
        reject=R(rf"Stale file handle: '(?![^'\n]{{0,300}}(?:{cache_path}))"),
        describe=describe,
    )


COMPILE_CACHE_SHARED = _stale_cache(
    "compile_cache_shared",
    "a kernel-compilation cache on a shared file system",
    "saw_compile_cache",
    r"[Tt]riton|inductor",
    _compile_cache,
)
DATASET_CACHE_SHARED = _stale_cache(
    "dataset_cache_shared",
    "a datasets cache on a shared file system",
    "saw_datasets_cache",
    r"datasets|huggingface|hf_cache|\.arrow|\.lock",
    _datasets_cache,
)


RECOGNISERS = (
    COMPILE_CACHE_SHARED,
    DATASET_CACHE_SHARED,
    BAD_TRAINING_DATA,
    COLLATE_UNEQUAL_SIZES,
    COLLATE_NONE_SAMPLE,
    DATALOADER_PERSISTENT_WORKERS,
    DATASET_HANDLE_FORK,
    CUSTOM_BATCH_SAMPLER,
    DATALOADER_EXHAUSTED,
)
