"""The HF Trainer refusing what its arguments ask of the run: a resume with nothing to resume, lengths it cannot read.

The texts are transformers' ``trainer.py`` (and ``trainer_pt_utils.py``'s length-grouped samplers):

- ``train``: "No valid checkpoint found in output directory (<dir>)". ``resume_from_checkpoint=True`` (or
  ``--resume_from_checkpoint True``) resumes from the newest ``checkpoint-<step>`` folder of ``output_dir``
  (``trainer_utils.get_last_checkpoint``), and there is none: the first run of a script that always resumes, another
  ``output_dir`` than the run that saved, checkpoints never written (``save_strategy="no"``, a stage that saves only
  some weights) or deleted.
- ``_get_train_sampler`` / ``LengthGroupedSampler``: "Can only automatically infer lengths for datasets whose items
  are dictionaries with an 'input_ids' key." ``group_by_length=True`` sorts the samples by the length of their first
  model input, and the dataset's items have no such key (raw text not yet tokenized, a trainer such as trl's that
  tokenizes later, a dataset whose items are tuples or whose input is named otherwise) and no ``length`` column.

Each message says what the Trainer looked for and did not find: its cause is in the words.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _nothing_to_resume(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    folder = merged(hits).get("output_dir", "")
    where = f" {folder}" if folder else " output_dir"
    return (
        f"the Trainer was told to resume (resume_from_checkpoint=True) and{where} holds no checkpoint-<step> folder "
        "to resume from" + on_ranks(hits),
        "resume_from_checkpoint=True resumes from the newest output_dir/checkpoint-<step>. For a first run, leave it "
        "off (or resume only when get_last_checkpoint(output_dir) finds one); to resume another run, give its "
        "folder: --resume_from_checkpoint <that output_dir>/checkpoint-<step>, or the same --output_dir it saved "
        "to. If no checkpoint-<step> was ever written, the run saved none (save_strategy='no', a stage that saves "
        "only some weights): set save_strategy='steps' / 'epoch' for the next run.",
    )


NOTHING_TO_RESUME = Recogniser(
    kind="no_checkpoint_to_resume",
    title="a Trainer resume with no checkpoint-<step> folder in output_dir",
    anchors=("No valid checkpoint found in output directory",),
    templates=("transformers:no-valid-checkpoint-found-in-output",),
    facts=(R(r"No valid checkpoint found in output directory \((?P<output_dir>[^{}()\n]{1,300})\)"),),
    describe=_nothing_to_resume,
)


def _lengths(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    key = merged(hits).get("length_key") or "input_ids"
    return (
        f"group_by_length=True, and the training dataset's items have no '{key}' to measure (nor a length column)"
        + on_ranks(hits),
        f"group_by_length sorts samples by the length of '{key}': tokenize the dataset before the Trainer gets it "
        "(dataset.map(tokenize, batched=True) giving input_ids), or add a column of lengths and name it with "
        "length_column_name (the default is 'length'); or set group_by_length=False — for trainers that tokenize "
        "later (trl's DPO/SFT trainers on raw text) that is the setting to drop.",
    )


LENGTHS = Recogniser(
    kind="group_by_length_without_input_ids",
    title="group_by_length on a dataset without input_ids",
    anchors=("Can only automatically infer lengths for datasets whose items are dictionaries with a",),
    templates=("transformers:can-only-automatically-infer-lengths-for",),
    facts=(R(r"dictionaries with an? '?(?P<length_key>[\w.]{1,60})'? key"),),
    describe=_lengths,
)

RECOGNISERS = (NOTHING_TO_RESUME, LENGTHS)
