"""What Hugging Face datasets refuses in a script's calls: columns missing or differing, map's rows, saved folders.

- A column the dataset does not have: ``datasets/arrow_dataset.py`` checks the names ``remove_columns``,
  ``rename_column(s)``, ``select_columns``, ``set_format(columns=)``, ``map(input_columns=)`` and
  ``class_encode_column`` are given against ``self.column_names`` and raises ValueError "Column name {} not in the
  dataset. Current columns in the dataset: {}" (and "Columns ...", "Original column name ...", "Input column ...",
  "Column to remove ...": every release from 1.x; "... Columns in the dataset: {}." in 4.x), "Error when renaming
  {} to {}: columns {} are not in the dataset." (2.6 on). The script names a column this dataset has not: written
  for another dataset's columns (text vs sentence, label vs labels), or one an earlier map already removed or
  renamed. The message lists the columns there are: certain. Indexing a column the dataset has not
  (``dataset["input_ids"]`` before tokenizing) raises the same words as a KeyError, "Column {} not in the dataset.
  Current columns in the dataset: {}" (``datasets/formatting/formatting.py`` ``_check_valid_column_key``).
- No column left at all: ``formatting.py``'s ``_check_valid_index_key`` raises IndexError "Invalid key: {} is out
  of bounds for size {}" for a row past the table's end, and a table whose columns were all removed has no rows.
  transformers' Trainer drops every column its model's ``forward()`` does not name (``_remove_unused_columns``,
  ``remove_unused_columns=True`` by default) after its sampler took the dataset's length, so a dataset that holds
  none of the names (not tokenized, a map function that returned nothing, a model wrapped by PEFT or a module
  taking ``**kwargs`` whose signature names none) is asked for row N of "size 0" (huggingface/datasets#2988,
  huggingface/peft#1299). Certain with the Trainer in the traceback (its ``trainer.py``, or trl's trainers on it);
  without it, an empty dataset (a filter or a split that kept no row) indexed anyway prints the same: likely.
- Data files whose columns differ: the builder casts each file's table to the features of the first one (or those
  given) and ``datasets/table.py`` (``cast_table_to_schema``) raises CastError "Couldn't cast", the schema, "to", the
  features and "because column names don't match", a line each (every release from 1.x); from 2.16
  ``DatasetGenerationCastError`` (``datasets/exceptions.py``) wraps it as "All the data files must have the same columns, but at some point there
  are N new columns (...) and M missing columns (...)", naming the file. One folder or glob holding files of two
  kinds (a labels or metadata file beside the data, predictions written into the data folder, train and test files
  with different fields), or ``features=`` that do not name the data's columns: certain.
- A batched ``map`` whose function returns another number of rows than it was given while the old columns stay:
  datasets builds the batch's table from the returned columns beside the kept ones, and Arrow refuses columns of
  unequal length ("Column {} named {} expected length {} but got length {}", ``arrow/table.cc``
  ``SimpleTable::Validate``, printed through pyarrow's ArrowInvalid). Tokenizing with
  ``return_overflowing_tokens=True`` or chunking texts (``group_texts``) makes more rows than the batch had. Arrow
  prints the same for any table of unequal columns: certain where the log shows datasets' map (its
  ``arrow_dataset.py`` frames), likely otherwise.
- A JSON data file whose column changes type between rows: Arrow's JSON reader (``arrow/json/...``, raised by
  pyarrow as ArrowInvalid, read by datasets' json builder for every ``load_dataset('json', ...)``) infers each
  column's type from the first block and refuses a later value of another type: "JSON parse error: Column(/answer)
  changed from number to string in row 12". The data, not the code: certain.
- A map function that returns something else than the dataset takes: ``arrow_dataset.py`` (``_map_single``'s
  ``validate_function_output``, 1.x on) raises TypeError "Provided `function` which is applied to all elements of
  table returns a variable of type {}. Make sure provided `function` returns a variable of type `dict` ..." (a
  list, a str, a tensor returned instead of the example's dict), and with ``batched=True`` "... returns a `dict` of
  types {}. When using `batched=True`, make sure provided `function` returns a `dict` of types like `{}`." (a
  value per column where a batch takes a list per column). Certain.
- A folder written by ``save_to_disk`` opened with the wrong loader: ``datasets/load.py`` (``load_dataset``,
  datasets#3705, in 2.0 on) raises "You are trying to load a dataset that was saved using `save_to_disk`. Please use
  `load_from_disk` instead.", and ``Dataset.load_from_disk`` given a DatasetDict's folder "No such file: '{}' found.
  Expected to load a `Dataset` object, but got a `DatasetDict`." (2.14 on; "No such file or directory: '{}'.
  Expected to load a Dataset object, but got a DatasetDict." before). The message names the loader to use: certain.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# datasets' map in the log: its frames in arrow_dataset.py (map, _map_single), or the map progress bar
MAP_SEEN = R(r"(?P<saw_datasets_map>datasets[/\\]arrow_dataset\.py|\bMap(?: \(num_proc=\d+\))?: +\d{1,3}%)")
# transformers' Trainer (or trl's trainers built on it) in the traceback: the one that removes unused columns
HF_TRAINER_SEEN = R(r"(?P<saw_hf_trainer>(?:transformers|trl)[/\\](?:trainer[/\\]\w{1,40}|trainer)\.py)")
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    ("arrow_dataset.py", MAP_SEEN),
    ("Map", MAP_SEEN),
    ("trainer", HF_TRAINER_SEEN),
)


def _no_columns_left(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    key = first(hits, "key_out_of_empty", "")
    if "saw_hf_trainer" in ctx.facts:
        return (
            f"the Trainer asked row {key} of a dataset with no column left (size 0): it removes every "
            "column the model's forward() does not name (remove_unused_columns=True), and the dataset held none "
            "of those names" + on_ranks(hits),
            "Give the Trainer the columns the model's forward() takes: tokenize before training (input_ids, "
            "attention_mask, labels; a map function must return its dict) and print "
            "trainer.train_dataset.column_names beside the forward's arguments. Where the model is wrapped (a "
            "PEFT model, a custom module taking **kwargs) or a data collator builds the inputs from other columns, "
            "pass remove_unused_columns=False in TrainingArguments (--remove_unused_columns False).",
        )
    return (
        f"row {key} of a dataset with no rows was asked for (size 0): the dataset is empty, or every column was "
        "removed" + on_ranks(hits),
        "Print len(dataset) and dataset.column_names just before the loop or the Trainer: a filter, select or "
        "split that kept no row empties it (check the data files and the filter's condition); a remove_columns "
        "(or a Trainer's remove_unused_columns=True, which drops the columns the model's forward() does not name) "
        "that removed every column leaves a table of no rows: keep the columns the model takes, or pass "
        "remove_unused_columns=False.",
    )


def _columns(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "key_out_of_empty"):
        return _no_columns_left(hits, ctx)
    column = first(hits, "missing_column", "")
    there = first(hits, "columns_there", "")
    named = f" ({column[:120]})" if column else ""
    has = f"; it has {there[:240]}" if there else ""
    return (
        f"the script names a column the dataset does not have{named}{has}" + on_ranks(hits),
        "Print dataset.column_names (of each split: a DatasetDict's splits may differ) where the error is raised. "
        "If the script was written for another dataset, rename the columns to the names it uses "
        "(dataset.rename_column('sentence', 'text')) or give the script's option for the column "
        "(--text_column_name, dataset_text_field, --label_column_name) this dataset's names. If an earlier "
        "map(..., remove_columns=...) or rename already took it away, do the steps in order or drop the second "
        "removal; remove only the columns that are there ([c for c in cols if c in dataset.column_names]).",
    )


def _files_differ(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    details = first(hits, "columns_differ", "")
    return (
        "the data files given to load_dataset do not all have the same columns"
        + (f": {details[:240]}" if details else " (or not those of the features= given)")
        + on_ranks(hits),
        "One load_dataset call reads every file its data_dir, glob or data_files names as one table: give it only "
        "the files of one kind (data_files={'train': 'data/train-*.jsonl', 'test': ...}; move a labels, metadata "
        "or predictions file out of the data folder), make the files' columns the same (add the missing ones as "
        "empty, drop the extra), or load each kind on its own and align them (rename_column, remove_columns, "
        "cast) before concatenate_datasets. Where features= was given, it must name exactly the data's columns. "
        "datasets' own advice for a Hub repository: separate configurations (configs: in the README's YAML).",
    )


def _map_rows(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    column = first(hits, "batch_column", "")
    want, got = first(hits, "batch_rows", ""), first(hits, "returned_rows", "")
    figures = (
        f": column {column} has {got} rows where the batch had {want}" if column and want and got else ""
    )
    return (
        "a batched map returned another number of rows than it was given while the dataset's old columns were "
        "kept, and Arrow refused columns of unequal length" + figures + on_ranks(hits),
        "When the map function makes more or fewer rows than it receives (tokenizing with "
        "return_overflowing_tokens=True or stride, chunking texts into blocks as group_texts does, filtering "
        "inside map), remove the old columns in the same call: dataset.map(fn, batched=True, "
        "remove_columns=dataset.column_names) (the train split's names for a DatasetDict). Or return every "
        "column at the new length (repeat the old values with the overflow_to_sample_mapping the tokenizer "
        "returns).",
    )


def _types_mixed(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    column, was, now = (
        first(hits, "json_column", ""),
        first(hits, "json_was", ""),
        first(hits, "json_now", ""),
    )
    row = first(hits, "json_row", "")
    where = f" (column {column}: {was} until row {row}, then {now})" if column and was and now and row else ""
    return (
        "a JSON data file holds values of two types in one column, which Arrow's JSON reader refuses"
        + where
        + on_ranks(hits),
        "Make every value of that column one type in the data file: numbers as numbers or all as strings "
        '(str(value) when writing it), a list always a list, missing values as null rather than "" or []. '
        "Find the rows: with pandas, df[column].map(type).value_counts(). Where the file is written by your own "
        "preprocessing, fix it there and write JSON Lines again.",
    )


def _map_output(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "batched_output"):
        return (
            "a batched map function returned single values per column where a batch takes a list per column"
            + on_ranks(hits),
            "With batched=True the function gets {column: [values of the batch]} and must return the same shape: "
            "{column: list}, one entry per output row (return {'input_ids': tokenizer(batch['text'])['input_ids']}, "
            "not one example's values). Or drop batched=True and return one example's dict.",
        )
    got = first(hits, "map_output_type", "")
    if first(hits, "map_arrow"):
        return (
            f"a map function over pyarrow tables returned a {got or 'value'} where datasets takes a pyarrow.Table"
            + on_ranks(hits),
            "The dataset is formatted as arrow (.with_format('arrow')), so the function given to map gets a "
            "pyarrow.Table and must return one: build it with pa.Table.from_pydict({...}) or table.append_column(...), "
            "or drop the arrow format (.with_format(None)) and return a dict of columns.",
        )
    return (
        "a map function returned "
        + (f"a {got}" if got else "something other than a dict")
        + " where datasets "
        "takes the example's columns as a dict" + on_ranks(hits),
        "Return a dict from the function given to map: {column name: value} (batched: {column name: list}), "
        "e.g. example['text'] = clean(example['text']); return example, or return tokenizer(example['text']) "
        "(a BatchEncoding is a dict). To transform without a dataset, use a list comprehension; for side effects "
        "only, return None.",
    )


def _saved(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "dict_folder"):
        return (
            "Dataset.load_from_disk was given the folder of a DatasetDict (saved with its splits), which it does not "
            "read" + on_ranks(hits),
            "Load the folder with datasets.load_from_disk(path) (or DatasetDict.load_from_disk(path)), which "
            "returns the DatasetDict as saved, and take the split you train on: load_from_disk(path)['train']; "
            "or give Dataset.load_from_disk the split's own subfolder (path/train).",
        )
    return (
        "load_dataset was given a folder written by save_to_disk, which only load_from_disk reads"
        + on_ranks(hits),
        "Read it with datasets.load_from_disk(path) (a Dataset or a DatasetDict, as it was saved) instead of "
        "load_dataset(path); a script that takes a dataset name or a folder of data files needs the data as "
        "such files (dataset.to_json / to_parquet) or its own load_from_disk option.",
    )


DATASET_COLUMN_MISSING = Recogniser(
    kind="dataset_column_missing",
    templates=(
        "datasets:column-name-not-in-the-dataset",
        "datasets:original-column-name-not-in-the",
        "datasets:original-column-names-not-in-the",
        "datasets:columns-not-in-the-dataset-current",
        "datasets:input-column-not-in-the-dataset",
        "datasets:column-to-remove-not-in-the",
        "datasets:column-name-not-in-the-dataset-3",
        "datasets:error-when-renaming-to-columns-are",
        "datasets:column-not-in-the-dataset-current",
        "datasets:invalid-key-is-out-of-bounds",
    ),
    title="a dataset column the script names that the dataset does not have",
    anchors=(
        "not in the dataset. Current columns in the dataset: ",
        "not in the dataset. Columns in the dataset: ",
        "are not in the dataset.",
        "is out of bounds for size ",
    ),
    match=R(
        r"(?:Column name|Columns|Original column names?|Input column|Column to remove|Column) "
        r"(?P<missing_column>[^\n]{1,200}?) not in the dataset\. (?:Current c|C)olumns in the dataset: "
        r"(?P<columns_there>[^\n]{0,400})|"
        r"Error when renaming [^\n]{1,200} to [^\n]{1,200}: columns (?P<missing_renamed>[^\n]{1,200}) are not in "
        r"the dataset\.|"
        r"Invalid key: (?P<key_out_of_empty>\d{1,12}) is out of bounds for size 0\b"
    ),
    # a row of an empty table: the Trainer's removal of unused columns where its frames show, else an empty
    # dataset indexed anyway as well
    confirm=lambda hits, ctx: (
        any("key_out_of_empty" not in h.facts for h in hits) or "saw_hf_trainer" in ctx.facts
    ),
    also=(
        Alternative(
            "dataset_too_small",
            "an empty dataset (a filter, select or split that kept no row) indexed anyway",
            "Print len(dataset) before the loop: 0 means the data files or the filter left nothing; check the "
            "files and the filter's condition.",
            when=("key_out_of_empty",),
            unless_log=("saw_hf_trainer",),
        ),
    ),
    describe=_columns,
)

DATA_FILES_COLUMNS_DIFFER = Recogniser(
    kind="data_files_columns_differ",
    templates=("datasets:all-the-data-files-must-have", "datasets:couldn-cast-to-because-column-names"),
    title="data files of one dataset whose columns differ",
    anchors=("All the data files must have the same columns", "because column names don't match"),
    match=R(
        r"All the data files must have the same columns, but at some point (?P<columns_differ>[^\n]{1,300})|"
        r"because column names don't match"
    ),
    # CastError's words come after the schema it prints, a line per column, below the exception's own line: the
    # lines of the message (for the run to be said to stop on it), and facts read there
    span=60,
    describe=_files_differ,
)

MAP_BATCH_ROWS = Recogniser(
    kind="map_batch_rows",
    templates=("third_party:arrow-column-expected-length",),
    title="a batched map that changes the number of rows and keeps the old columns",
    anchors=(" but got length ",),
    match=R(
        r"Column \d{1,5} named (?P<batch_column>[^\s]{1,120}) expected length (?P<batch_rows>\d{1,12}) but got "
        r"length (?P<returned_rows>\d{1,12})"
    ),
    # Arrow prints it for any table of unequal columns: the map reading needs datasets' map in the log
    confirm=lambda hits, ctx: "saw_datasets_map" in ctx.facts,
    also=(
        Alternative(
            "arrow_table_columns",
            "a table the code builds itself (pa.Table.from_arrays / from_pydict) from lists of unequal length",
            "Print the lengths of the columns handed to Arrow and make them equal (a row dropped or added in one "
            "list only).",
        ),
    ),
    describe=_map_rows,
)

DATA_COLUMN_TYPES_MIXED = Recogniser(
    kind="data_column_types_mixed",
    templates=("third_party:arrow-json-column-changed-type",),
    title="a JSON data file whose column changes type between rows",
    anchors=("JSON parse error: Column(",),
    match=R(
        r"JSON parse error: Column\((?P<json_column>[^)\n]{0,200})\) changed from (?P<json_was>\w{1,20}) to "
        r"(?P<json_now>\w{1,20}) in row (?P<json_row>\d{1,12})"
    ),
    describe=_types_mixed,
)

MAP_FUNCTION_OUTPUT = Recogniser(
    kind="map_function_output",
    templates=(
        "datasets:provided-function-which-is-applied-to",
        "datasets:provided-function-which-is-applied-to-2",
        "datasets:provided-function-which-is-applied-to-3",
        "datasets:provided-function-which-is-applied-to-4",
    ),
    title="a dataset map function that does not return the example's columns",
    anchors=("Provided `function` which is applied to ",),
    match=R(
        # iterable_dataset.py 2.14.7-3.0.2: an arrow-formatted map's function ("applied to pyarrow tables")
        r"Provided `function` which is applied to (?:(?P<map_arrow>pyarrow tables)|all elements of table|\S{1,40}) "
        r"returns a variable of type "
        r"(?P<map_output_type><class '[\w.]{1,80}'>|[\w.]{1,80})|"
        r"(?P<batched_output>When using `batched=True`, make sure provided `function` returns a `dict` of types)"
    ),
    describe=_map_output,
)

DATASET_SAVED_TO_DISK = Recogniser(
    kind="dataset_saved_to_disk",
    templates=(
        "datasets:you-are-trying-to-load-dataset",
        "datasets:no-such-files-nor-found-expected-2",
        "datasets:no-such-file-found-expected-to",
        "datasets:no-such-file-or-directory-expected",
    ),
    title="a save_to_disk folder opened with the wrong loader",
    anchors=(
        "was saved using `save_to_disk`. Please use `load_from_disk` instead",
        "Expected to load a `Dataset` object, but got a `DatasetDict`",
        "Expected to load a Dataset object, but got a DatasetDict",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "You are trying to load a dataset that was saved using `save_to_disk`",
    ),
    match=R(
        r"was saved using `save_to_disk`|"
        r"(?P<dict_folder>Expected to load a `?Dataset`? object, but got a `?DatasetDict`?)"
    ),
    # the older message starts with CPython's words for a missing path
    absorbs=("data_path_missing",),
    describe=_saved,
)

RECOGNISERS = (
    DATASET_SAVED_TO_DISK,
    DATASET_COLUMN_MISSING,
    MAP_BATCH_ROWS,
    DATA_FILES_COLUMNS_DIFFER,
    MAP_FUNCTION_OUTPUT,
    DATA_COLUMN_TYPES_MIXED,
)
