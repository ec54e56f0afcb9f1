"""A Trainer refusing what its arguments ask of the run: a resume with nothing to resume or past its end, lengths.

The texts are transformers' ``trainer.py`` (and ``trainer_pt_utils.py``'s length-grouped samplers) and Lightning's
``trainer/connectors/checkpoint_connector.py``:

- ``train``: "No valid checkpoint found in output directory (<dir>)". ``resume_from_checkpoint=True`` (or
  ``--resume_from_checkpoint True``) resumes from the newest ``checkpoint-<step>`` folder of ``output_dir``
  (``trainer_utils.get_last_checkpoint``), and there is none: the first run of a script that always resumes, another
  ``output_dir`` than the run that saved, checkpoints never written (``save_strategy="no"``, a stage that saves only
  some weights) or deleted.
- ``_get_train_sampler`` / ``LengthGroupedSampler``: "Can only automatically infer lengths for datasets whose items
  are dictionaries with an 'input_ids' key." ``group_by_length=True`` sorts the samples by the length of their first
  model input, and the dataset's items have no such key (raw text not yet tokenized, a trainer such as trl's that
  tokenizes later, a dataset whose items are tuples or whose input is named otherwise) and no ``length`` column.

- transformers' ``_load_best_model`` (a warning): "Could not locate the best model at <checkpoint>/<weights file>, if
  you are running a distributed training on multiple nodes, you should activate ``--save_on_each_node``."
  ``load_best_model_at_end=True`` found no weights file in the best checkpoint: on a node other than the one that
  saved it (no shared storage: huggingface/transformers#12421, hiyouga/LlamaFactory#5757), or, in transformers 4.35 and
  4.36, looking for pytorch_model.bin beside a model.safetensors (huggingface/transformers#28307, #27332). The run
  goes on with the last weights: a finding only when nothing else failed, and likely.
- Lightning's ``restore_training_state``: "You restored a checkpoint with current_epoch=11, but you have set
  Trainer(max_epochs=10)." (a MisconfigurationException): the checkpoint given to ``fit(ckpt_path=...)`` was saved
  past the run's last epoch, most often at the end of a finished run (Lightning-AI/pytorch-lightning#4184).

Each refusal says what the Trainer looked for and did not find: its cause is in the words.
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


def _best_model(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    where = merged(hits).get("best_model", "")
    path = f" ({where})" if where else ""
    return (
        f"load_best_model_at_end found no weights in the best checkpoint{path}, so the run ended with the last "
        "weights instead of the best" + on_ranks(hits),
        "Across several nodes without shared storage only the saving node has the checkpoint: set "
        "save_on_each_node=True (--save_on_each_node), or put output_dir on storage every node mounts. On "
        "transformers 4.35-4.36 with model.safetensors in the checkpoint the Trainer looked for pytorch_model.bin: "
        "upgrade transformers, or set save_safetensors=False. Check that the checkpoint folder the message names "
        "holds model.safetensors or pytorch_model.bin (save_total_limit may have deleted it).",
    )


BEST_MODEL_MISSING = Recogniser(
    kind="best_model_not_found",
    title="load_best_model_at_end finding no weights in the best checkpoint",
    anchors=("Could not locate the best model at ",),
    templates=("transformers:could-not-locate-the-best-model",),
    facts=(R(r"Could not locate the best model at (?P<best_model>[^\s,]{1,300})"),),
    confirm=lambda hits, ctx: (
        False
    ),  # two causes print it: another node's storage, an old release's file name
    fallback=True,  # a warning: the run goes on
    describe=_best_model,
)


def _past_max_epochs(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    epoch, most = facts.get("ckpt_epoch", "N"), facts.get("max_epochs", "M")
    return (
        f"Lightning resumed a checkpoint saved at epoch {epoch}, past this run's Trainer(max_epochs={most}): "
        "there is nothing left to train" + on_ranks(hits),
        f"To train further, raise max_epochs above {epoch} (Trainer(max_epochs=...)) and resume with "
        "fit(ckpt_path=...). To evaluate or predict with the checkpoint, call trainer.validate / test / predict "
        "(model, ckpt_path=...) instead of fit. To start a new run from its weights only, load them with "
        "Model.load_from_checkpoint(path) and call fit without ckpt_path.",
    )


PAST_MAX_EPOCHS = Recogniser(
    kind="resume_past_max_epochs",
    title="a Lightning checkpoint resumed past max_epochs",
    # before 1.0: "you restored a checkpoint with current_epoch=11\n but the Trainer(max_epochs=10)"
    anchors=(
        "You restored a checkpoint with current_epoch=",
        "you restored a checkpoint with current_epoch=",
    ),
    span=1,
    templates=("lightning:you-restored-checkpoint-with-current-epoch",),
    facts=(
        R(
            r"current_epoch=(?P<ckpt_epoch>\d{1,7}),?\s*but (?:you have set )?(?:the )?Trainer\(max_epochs=(?P<max_epochs>-?\d{1,7})\)"
        ),
    ),
    describe=_past_max_epochs,
)

RECOGNISERS = (NOTHING_TO_RESUME, LENGTHS, BEST_MODEL_MISSING, PAST_MAX_EPOCHS)
