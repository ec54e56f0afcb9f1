"""torch.distributed.checkpoint (DCP) refusing a save or load.

Where to write, the ranks' plans, the state dicts get_state_dict / set_state_dict are handed.

``torch/distributed/checkpoint/_storage_utils.py`` (which storage a checkpoint_id means), ``default_planner.py``
(the global save plan: every tensor's chunks must tile it once), ``utils.py`` (``_assert_same_keys``),
``state_dict.py`` (``get_state_dict`` / ``set_state_dict`` and their optimizer state), ``planner_helpers.py``,
``_extension.py`` and ``state_dict_saver.py``, torch 2.2-2.13. Each message names its own mistake (certain once a
real log shows it) but two: a global plan that does not tile a tensor, and an empty state dict handed over, which
several mistakes print: likely, the fix naming each.
"""

from __future__ import annotations

from torchdoctor.explain.kinds.refusal_table import refusal_recogniser

FAMILY = "checkpoints and pretrained models"

_PLAN = (
    "The ranks' save plans do not tile each tensor exactly once (the message names the key and its chunks): the "
    "ranks hold different global shapes for the key (a model built differently on some rank, a vocabulary resized "
    "on one only), or the shards were made by hand as plain tensors or DTensor.from_local without shape= / "
    "stride= for uneven shards. Save DTensors or FSDP/TP-sharded state from get_state_dict(model, optimizer), build "
    "the model identically on every rank, and give from_local the global shape when shards are uneven."
)

_ZERO_PARAM_GROUP = (
    "get_state_dict / set_state_dict handle a parameter group with no parameters only as the single such group of "
    "one optimizer: drop empty groups when building the optimizer ([g for g in groups if g['params']], e.g. a "
    "no-weight-decay group left empty after freezing), then save again."
)

_STORAGE = (
    "dcp.save / dcp.load pick the storage from checkpoint_id: a local directory path works as is; for a URL "
    "(s3://, gs://, hf://) install fsspec and its filesystem package (s3fs, gcsfs) or pass the storage explicitly, "
    "dcp.save(state, storage_writer=FileSystemWriter(path)) / dcp.load(state, "
    "storage_reader=FileSystemReader(path)); with neither, pass checkpoint_id=path."
)

REFUSALS: tuple[tuple[str, str], ...] = (
    ("Cannot detect which StorageReader or StorageWriter to use.", _STORAGE),
    ("`checkpoint_id` must be specified if storage_reader/storage_writer is None.", _STORAGE),
    ("Failed to validate global plan:", _PLAN),
    ("has out of bounds chunk:", _PLAN),
    ("has overlapping chunks:", _PLAN),
    ("invalid fill tensor-volume:", _PLAN),
    (
        "Key(s) present in other ranks but not this one, difference:",
        "Every rank must hand dcp.save / dcp.load a state dict with the same keys (the message lists those this rank "
        "lacks): build the model and optimizer identically on every rank and take the state from get_state_dict("
        "model, optimizer), rather than keys added on one rank only (rank 0's extra metadata: save it as a "
        "non-tensor entry on every rank).",
    ),
    (
        "Optimizers are not passed in but optim_only is set to True.",
        "get_optimizer_state_dict / set_optimizer_state_dict were called without an optimizer (an empty list or "
        "tuple): pass the optimizer(s) built over the model's parameters, get_optimizer_state_dict(model, optimizer).",
    ),
    (
        "model state_dict is required to save or load, but model state_dict is empty.",
        "set_model_state_dict / set_state_dict was handed an empty model state dict: the checkpoint was read under "
        "another key (state['model'] against the key it was saved under), dcp.load filled a dict whose keys matched "
        "nothing, or this rank's model has no parameters. Pass the dict the model's weights were loaded into "
        "(load into get_model_state_dict(model) and pass that back), or StateDictOptions(strict=False) when an "
        "empty one is meant.",
    ),
    (
        "or load but optim state_dict is empty.",
        "set_optimizer_state_dict / set_state_dict was handed an empty optimizer state: the checkpoint's optimizer "
        "entry was read under another key, or the checkpoint was saved before the optimizer existed. Load into "
        "get_optimizer_state_dict(model, optimizer) and pass that back, with the optimizer built over the model's "
        "parameters first.",
    ),
    (
        "Flattening optimizer state_dict only supports tensor, int, float, dict states now.",
        "This optimizer keeps state that is not a tensor, number or dict (a list, None, a string): save it unflattened, "
        "StateDictOptions(flatten_optimizer_state_dict=False), for get_state_dict and set_state_dict alike.",
    ),
    ("There are param groups that have zero parameters.", _ZERO_PARAM_GROUP),
    (
        "When there is a parameter group that has zero parameters, multiple optimizers are not supported.",
        _ZERO_PARAM_GROUP,
    ),
    (
        "All the parameters in the same parameter group should have the same saved param_group value.",
        "The checkpoint's optimizer groups do not match this optimizer's: build the optimizer with the same groups "
        "(the same parameters together, the same hyperparameter keys) as the run that saved it, or load the model "
        "only and start the optimizer afresh.",
    ),
    (
        "expected BytesStorageMetadata but found",
        "The checkpoint saved this key as a tensor and the state dict asks for it as a plain object (or the other "
        "way round): give the state dict's entry the type it was saved with (a tensor where a tensor was saved, e.g. "
        "a step counter), or rename one of them.",
    ),
    (
        "ZStandard extension is unavailable because no module named",
        "The checkpoint is written with zstd compression: pip install zstandard in the environment that reads or "
        "writes it.",
    ),
    (
        "Stream with ZStandard compression cannot be processed because no module named",
        "The checkpoint is written with zstd compression: pip install zstandard in the environment that reads or "
        "writes it.",
    ),
    (
        "has been updated to include the storage_meta argument.",
        "A custom SavePlanner overrides set_up_planner(state_dict, is_coordinator) with the old signature: add the "
        "storage_meta argument, set_up_planner(self, state_dict, storage_meta=None, is_coordinator=False).",
    ),
)

DISTRIBUTED_CHECKPOINT = refusal_recogniser(
    kind="distributed_checkpoint",
    title="torch.distributed.checkpoint refused a save or load",
    refusals=REFUSALS,
    templates=(
        "torch:cannot-detect-which-storagereader-or-storagewriter",
        "torch:checkpoint-id-must-be-specified-if",
        "torch:failed-to-validate-global-plan",
        "torch:key-has-out-of-bounds-chunk",
        "torch:key-has-overlapping-chunks",
        "torch:key-invalid-fill-tensor-volume-chunks",
        "torch:key-present-in-other-ranks-but",
        "torch:optimizers-are-not-passed-in-but",
        "torch:the-option-indicates-that-model-state",
        "torch:the-option-indicates-that-model-state-2",
        "torch:flattening-optimizer-state-dict-only-supports",
        "torch:there-are-param-groups-that-have",
        "torch:when-there-is-parameter-group-that",
        "torch:all-the-parameters-in-the-same",
        "torch:invalid-checkpoint-metadata-for-expected-bytesstoragemetadata",
        "torch:zstandard-extension-is-unavailable-because-no",
        "torch:stream-with-zstandard-compression-cannot-be",
        "torch:the-function-definition-for-saveplanner-set",
    ),
    several=(
        "Failed to validate global plan:",
        "has out of bounds chunk:",
        "has overlapping chunks:",
        "invalid fill tensor-volume:",
        "model state_dict is required to save or load, but model state_dict is empty.",
        "or load but optim state_dict is empty.",
    ),
)

RECOGNISERS = (DISTRIBUTED_CHECKPOINT,)
