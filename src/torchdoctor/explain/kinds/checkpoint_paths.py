"""A checkpoint path that does not point at the checkpoint its loader expects.

A checkpoint path that does not point at the checkpoint its loader expects: a subfolder or a file inside a
DeepSpeed checkpoint, a folder without DeepSpeed's ``latest`` tag, a ZeRO-less checkpoint given to zero_to_fp32, a
universal checkpoint that was never converted, a Trainer resume folder that holds no weights or FSDP shards a run
without FSDP resumes.

The texts are DeepSpeed's (``deepspeed/utils/zero_to_fp32.py``, ``runtime/engine.py`` load_checkpoint), Lightning's
(``lightning/fabric/strategies/deepspeed.py`` _validate_checkpoint_directory and load_checkpoint,
``lightning/pytorch/strategies/deepspeed.py``) and transformers' (``trainer.py`` _load_from_checkpoint), as the
catalog holds them. Where the message names the right folder or its own cause it is certain; where a wrong path and a
checkpoint saved without DeepSpeed's state print the same words, it is likely and names ``checkpoint_incomplete``.
meta-llama's reference loaders (LLaMA 1's ``example.py`` load, Llama 2's ``llama/generation.py`` Llama.build) glob
``{ckpt_dir}/*.pth``: "Loading a checkpoint for MP=0 ..." and "no checkpoint files found in {ckpt_dir}" say no shard
was there (another shard count is ``checkpoint_world_size``, kinds/checkpoint.py).

A checkpoint saved into a folder that is not there (torch.save creates the file, not its folders): the writer's
"Parent directory ... does not exist." (``caffe2/serialize/inline_container.cc``).

A path to a file that is no checkpoint at all: pickle's "invalid load key, '<c>'." (CPython ``Modules/_pickle.c``,
a first byte that is no pickle opcode), which ``torch.load`` raises for a file that is neither its zip format nor a
legacy pickle. The byte says what the file is ('<' an HTML or XML page, 'v' a Git LFS pointer, '{' JSON). Certain
beside torch.load in the log; a data file read with pickle prints it too, so alone it is likely.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    first,
    has_fact,
    merged,
    on_ranks,
)

FAMILY = "checkpoints and pretrained models"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# facts that say the cause outright: the loader named the parent folder, the checkpoint has no ZeRO state, a
# universal load found no converted checkpoint, FSDP shards resumed without FSDP, merge-weights named the subfolder,
# accelerate's load_state / save_model named a missing folder, none, or a file
_DECIDED = (
    "parent",
    "not_zero",
    "universal",
    "fsdp_shards",
    "fsdp_subdir",
    "missing_dir",
    "no_input_dir",
    "file_not_dir",
    "index_files",
    "dcp_exists",
    "llama_no_shards",
)

# accelerate/accelerator.py load_state / save_model (and transformers' save_pretrained): a folder that is not there,
# none given, a file for a folder;
# each names its cause: (fact, summary, fix)
_ACCELERATE_PATHS: tuple[tuple[str, str, str], ...] = (
    (
        "missing_dir",
        "accelerator.load_state() was given a folder that does not exist",
        "Pass the folder accelerator.save_state() wrote (the same path on every node, ~ expanded), e.g. "
        "accelerator.load_state('outputs/checkpoint_12'); with ProjectConfiguration(automatic_checkpoint_naming=True) "
        "call load_state() with no folder to load the newest one.",
    ),
    (
        "no_input_dir",
        "accelerator.load_state() was called without a folder, and automatic checkpoint naming is off",
        "Pass the checkpoint folder: accelerator.load_state('outputs/checkpoint_12'), or create the Accelerator with "
        "project_config=ProjectConfiguration(project_dir='outputs', automatic_checkpoint_naming=True) so it finds the "
        "newest checkpoints/checkpoint_N itself.",
    ),
    (
        "file_not_dir",
        "a save was given the path of a file where it writes a folder: nothing was saved",
        "accelerator.save_model(model, dir) and transformers' save_pretrained(dir) (model, config, tokenizer, "
        "processor) write a folder: pass one ('outputs/final'), not the path of a file, and remove the file if a "
        "folder of that name is wanted.",
    ),
)


def _checkpoint_path(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("llama_no_shards"):
        where = f" in {facts['llama_ckpt_dir']}" if facts.get("llama_ckpt_dir") else " in --ckpt_dir"
        return (
            f"llama's loader found no *.pth checkpoint shard{where} (MP=0): the folder is not the one holding the "
            "model's consolidated.*.pth and params.json, or the weights there are not named *.pth"
            + on_ranks(hits),
            "Point --ckpt_dir at the model's own folder (llama-2-7b/, the one with consolidated.00.pth and "
            "params.json, not its parent); the loader globs *.pth, so a file saved as .pt is read only renamed to "
            ".pth; weights in the Hugging Face format load with transformers, not with this loader. Then start one "
            "process per shard: torchrun --nproc_per_node <number of consolidated.*.pth files>.",
        )
    if facts.get("no_adapter_config"):
        return (
            f"PEFT found no adapter_config.json at {facts['no_adapter_config']}: not a saved adapter folder (or a Hub "
            "id it could not download)" + on_ranks(hits),
            "PeftModel.from_pretrained(base_model, path) and PeftConfig.from_pretrained(path) read the folder "
            "model.save_pretrained wrote for the adapter (adapter_config.json beside adapter_model.safetensors): pass "
            "that folder (a Trainer's output_dir/checkpoint-N of a PEFT model holds one), not the base model's folder, "
            "a merged model (load that with AutoModel.from_pretrained) or the run's parent folder; for a Hub id, "
            "check its spelling and that this machine can reach the Hub (HF_HUB_OFFLINE unset, a token for a private "
            "repository).",
        )
    if facts.get("dcp_exists"):
        return (
            "dcp.save refused to write into a folder that already holds a checkpoint (its FileSystemWriter has "
            "overwrite=False)" + on_ranks(hits),
            "Give each save its own folder (f'{out}/step_{step}'), delete the old one first (on rank 0, then a "
            "barrier), or write over it on purpose with dcp.save(state, storage_writer=FileSystemWriter(path, "
            "overwrite=True)).",
        )
    if facts.get("index_files"):
        return (
            f"the checkpoint folder {facts['index_files']} holds more than one .index.json, so accelerate cannot tell "
            "which sharded checkpoint to load" + on_ranks(hits),
            "load_checkpoint_in_model / load_checkpoint_and_dispatch read the one *.index.json of a sharded "
            "checkpoint: delete (or move away) the index files of other formats or earlier saves (a "
            "pytorch_model.bin.index.json beside model.safetensors.index.json), or pass the index file itself as "
            "checkpoint=.",
        )
    if facts.get("dir_not_file"):
        return (
            f"torch.load was given a folder, {facts['dir_not_file']}, where it opens one checkpoint file"
            + on_ranks(hits),
            "torch.load reads one file. A checkpoint written as a folder loads with its own loader: a distributed "
            "checkpoint (dcp.save, FSDP's SHARDED_STATE_DICT, Lightning's FSDP / ModelParallel sharded .ckpt: "
            ".metadata beside __0_0.distcp files) with dcp.load, or Lightning's own resume (ckpt_path=), or made "
            "one file with torch.distributed.checkpoint.format_utils.dcp_to_torch_save(folder, 'model.pt'); a "
            "DeepSpeed checkpoint (latest, global_stepN/) with engine.load_checkpoint or its zero_to_fp32.py; a "
            "Hugging Face model folder with from_pretrained. A folder holding data.pkl, data/ and version is a "
            "torch.save file that was unzipped (a .pth is a zip archive): use the downloaded file as it is. "
            "Otherwise pass the checkpoint file inside the folder (its .pth / .pt / .ckpt), not the folder.",
        )
    if facts.get("fsdp_sharded_dir"):
        return (
            f"accelerate's SHARDED_STATE_DICT loader found no distributed checkpoint in {facts['fsdp_sharded_dir']}: "
            "the checkpoint was saved with another fsdp_state_dict_type (FULL_STATE_DICT writes one "
            "pytorch_model_fsdp.bin and optimizer.bin), or that save did not finish" + on_ranks(hits),
            "accelerate (and the Trainer's FSDP resume through it) loads a checkpoint in the form the current "
            "fsdp_state_dict_type names. ls the checkpoint folder: with pytorch_model_fsdp.bin in it, resume with "
            "fsdp_state_dict_type: FULL_STATE_DICT (the accelerate config's fsdp_config, or the Trainer's fsdp_config "
            "{'state_dict_type': 'FULL_STATE_DICT'}); a pytorch_model_fsdp_0/ folder of .distcp files without "
            ".metadata is a save cut short: resume from the checkpoint before it.",
        )
    if facts.get("dcp_metadata"):
        return (
            f"torch.distributed.checkpoint found no .metadata in {facts['dcp_metadata']}: not a distributed "
            "checkpoint folder, or a save that did not finish" + on_ranks(hits),
            "dcp.load (and FSDP's / accelerate's sharded loading) reads the folder dcp.save wrote, whose .metadata "
            "file rank 0 writes last, after every rank's shards: pass that folder (the one holding .metadata and the "
            "__0_0.distcp files; accelerate's pytorch_model_fsdp_0 / optimizer_0 inside a checkpoint), not its "
            "parent or a file; a folder of .distcp files without .metadata is a save cut short (resume from the "
            "checkpoint before it); a checkpoint written with torch.save (one .pt / .bin file) loads with torch.load "
            "and set_model_state_dict(model, state, options=StateDictOptions(full_state_dict=True)).",
        )
    if facts.get("fsdp_full_file"):
        return (
            f"accelerate's FSDP loader looked for {facts['fsdp_full_file']}, the one file a FULL_STATE_DICT save "
            "writes, and it is not there: the checkpoint was saved with another fsdp_state_dict_type "
            "(SHARDED_STATE_DICT writes the folder pytorch_model_fsdp_0/, LOCAL_STATE_DICT one "
            "pytorch_model_fsdp_rank<N>.bin per rank), or the folder is not the checkpoint" + on_ranks(hits),
            "accelerate (and the Trainer's FSDP resume through it) loads a checkpoint in the form the current "
            "fsdp_state_dict_type names, not the one it was saved in. ls the checkpoint folder: with "
            "pytorch_model_fsdp_0/ (and optimizer_0/) in it, resume with fsdp_state_dict_type: SHARDED_STATE_DICT "
            "(the accelerate config's fsdp_config, or the Trainer's fsdp_config {'state_dict_type': "
            "'SHARDED_STATE_DICT'}); to get one file of the whole model from it, accelerate merge-weights "
            "<checkpoint>/pytorch_model_fsdp_0 <output_dir> and load that as the model (a new run, not a resume). "
            "Without any pytorch_model_fsdp* entry, point resume_from_checkpoint / load_state at the checkpoint-N "
            "folder itself.",
        )
    if facts.get("parent"):
        return (
            f"the checkpoint path points inside a DeepSpeed checkpoint folder; its top is {facts['parent']}"
            + on_ranks(hits),
            "A DeepSpeed checkpoint is loaded from its top folder (the one that holds the 'checkpoint' subfolder, or "
            f"'latest' and global_step*/): pass {facts['parent']} as ckpt_path / the path to load_checkpoint.",
        )
    if facts.get("not_zero"):
        return (
            f"zero_to_fp32 was given a checkpoint saved without ZeRO ({facts['not_zero']})" + on_ranks(hits),
            "zero_to_fp32 rebuilds weights from ZeRO stage 1-3 partitions. A checkpoint saved with ZeRO stage 0 "
            "already holds the whole model: load mp_rank_00_model_states.pt with torch.load(..., weights_only=False) "
            "and take its 'module' entry (or load it with engine.load_checkpoint).",
        )
    step_dir = facts.get("ds_step_dir") or facts.get("ds_step_dir2")
    if step_dir:
        return (
            f"DeepSpeed's checkpoint tools found no step of a DeepSpeed checkpoint in {step_dir.rstrip('.')}"
            + on_ranks(hits),
            "ds_to_universal (python -m deepspeed.checkpoint.ds_to_universal) and the reshaping tools read one "
            "saved step: --input_folder <ckpt>/global_stepN, the folder that holds mp_rank_*_model_states.pt and "
            "the *_optim_states.pt files (not the checkpoint's top folder, not a Trainer's checkpoint-N above it, "
            "not a folder saved with save_only_model / save_16bit_model, which has no ZeRO files).",
        )
    if facts.get("fsdp_subdir"):
        return (
            f"accelerate merge-weights was pointed above the FSDP shards; they are in {facts['fsdp_subdir']}"
            + on_ranks(hits),
            f"Pass the folder that holds the shards' metadata: accelerate merge-weights {facts['fsdp_subdir']} "
            "<output_dir> (or merge_fsdp_weights(...) with that folder); a checkpoint's optimizer_0 holds the optimizer "
            "shards, not the model.",
        )
    if facts.get("fsdp_shards"):
        return (
            f"the checkpoint {facts['fsdp_shards']} holds FSDP shards, and this run does not use FSDP"
            + on_ranks(hits),
            "A checkpoint saved as FSDP shards (pytorch_model_fsdp_0/, SHARDED_STATE_DICT) is resumed only by a run "
            "with the same FSDP setting: start it with the --fsdp / fsdp_config (or accelerate FSDP config) it was "
            "saved with. To use the weights without FSDP, merge the shards first (accelerate merge-weights "
            "<checkpoint>/pytorch_model_fsdp_0 <output_dir>) and load the result as the model.",
        )
    for key, what, fix in _ACCELERATE_PATHS:
        if key in facts:
            return f"{what} ({facts[key]})" + on_ranks(hits), fix
    if facts.get("universal"):
        return (
            f"a universal checkpoint load found no converted checkpoint ({facts['universal']} does not exist)"
            + on_ranks(hits),
            '"checkpoint": {"load_universal": true} loads the output of DeepSpeed\'s converter, which this folder '
            "does not have yet. Convert the saved step first: python -m deepspeed.checkpoint.ds_to_universal "
            "--input_folder <ckpt>/global_stepN --output_folder <ckpt>/global_stepN_universal (it writes "
            "<ckpt>/latest_universal); or load the checkpoint as saved by dropping load_universal.",
        )
    where = facts.get("path", "").strip().rstrip(".")
    summary = "the checkpoint path is not a checkpoint the loader can read" + (f": {where}" if where else "")
    fix = (
        "Point the loader at the checkpoint itself: for DeepSpeed (engine.load_checkpoint, Lightning's "
        "DeepSpeedStrategy, zero_to_fp32.py) the folder that holds 'latest' and global_stepN/ (a Trainer's "
        "output_dir/checkpoint-N), or name the step with tag='global_stepN' (zero_to_fp32.py -t global_stepN) when "
        "no 'latest' was written; for FSDP (Lightning's FSDPStrategy, accelerate) the folder of the shards (with its "
        ".metadata) or one file with the full state dict; for a sharded Hugging Face checkpoint the folder with "
        "model.safetensors.index.json; for the HF Trainer's resume_from_checkpoint a checkpoint-N folder with the "
        "model weights (or True for the newest one in output_dir); for from_pretrained a folder or hub repository "
        "with config.json and model.safetensors / pytorch_model.bin (a PEFT adapter folder, adapter_model.safetensors, "
        "loads with PeftModel.from_pretrained(base_model, folder)). A single-file checkpoint saved without DeepSpeed "
        "loads into Lightning's DeepSpeed strategy with DeepSpeedStrategy(load_full_weights=True)."
    )
    return summary + on_ranks(hits), fix


CHECKPOINT_PATH = Recogniser(
    kind="checkpoint_path",
    title="a checkpoint path that is not the checkpoint folder its loader expects",
    anchors=(
        "It looks like you passed the path to a",
        "The provided path is not a valid DeepSpeed checkpoint",
        "DeepSpeed was unable to load the checkpoint",
        "Unable to find 'latest' file at",
        "can't find model states file at",
        " is not a zero checkpoint",
        "Invalid for universal checkpoint:",
        "Can't find a valid checkpoint at",
        "is only supported when using PyTorch FSDP",
        "couldn't find a valid metadata file",
        "/pytorch_model_fsdp_0 instead",
        "/pytorch_model_fsdp_0 or ",
        "/optimizer_0 instead",
        "is not a folder containing a `.index.json` file",
        "containing more than one `.index.json` file",
        # torch/distributed/checkpoint/filesystem.py FileSystemWriter: a folder with a checkpoint, overwrite=False
        "Checkpoint already exists and self.overwrite=",
        # peft/config.py PeftConfigMixin.from_pretrained: a folder or id without adapter_config.json
        "Can't find 'adapter_config.json' at '",
        "does not point to a valid checkpoint. Make sure the path points to",
        "Failed to load checkpoint directly into the model",
        "should be the path to a file containing a whole state dict",
        "Can't find a checkpoint index (",
        # deepspeed/utils/zero_to_fp32.py: no optimizer / model state files of the kind it needs in the folder
        " files in directory '",
        # deepspeed/checkpoint/deepspeed_checkpoint.py, zero_checkpoint.py (ds_to_universal, the reshaping tools): a
        # folder without a step's model-state / ZeRO files
        " seems a bogus DeepSpeed checkpoint folder",
        "No ZeRO files found in ",
        "but folder does not exist",
        "No input_dir provided and automatic checkpoint naming is disabled",
        "should be a directory, not a file",
        # transformers/modeling_utils.py _get_resolved_checkpoint_files: a folder or repository without the weights
        " does not appear to have a file named ",
        "Error no file named ",
        # torch/distributed/checkpoint/filesystem.py FileSystemReader.read_metadata: CPython's FileNotFoundError for
        # the folder's .metadata
        "/.metadata'",
        # CPython's IsADirectoryError (EISDIR, IOError before 3.3) for torch.load's open() of a folder: only beside
        # torch.load's frames or call (requires_beside)
        "[Errno 21] Is a directory: '",
        # accelerate/utils/fsdp_utils.py load_fsdp_model with FULL_STATE_DICT: torch.load of the one file that
        # save_fsdp_model writes for that type (FSDP_MODEL_NAME + ".bin", "_<i>.bin" for a second model)
        "pytorch_model_fsdp.bin'",
        # meta-llama's reference loaders: no *.pth shard in ckpt_dir (LLaMA 1's example.py counts MP=0, Llama 2's
        # llama/generation.py Llama.build asserts first)
        "Loading a checkpoint for MP=0 but world size is",
        "no checkpoint files found in ",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "does not point to a valid checkpoint",
    ),
    templates=(
        # lightning/fabric/strategies/deepspeed.py _validate_checkpoint_directory: the parent is the checkpoint
        "lightning:it-looks-like-you-passed-the",
        "lightning:it-looks-like-you-passed-the-2",
        "lightning:the-provided-path-is-not-valid",
        # lightning strategies/deepspeed.py load_checkpoint: engine.load_checkpoint found nothing to load (None)
        "lightning:deepspeed-was-unable-to-load-the",
        "lightning:deepspeed-was-unable-to-load-the-2",
        # deepspeed/utils/zero_to_fp32.py: no 'latest' tag, no model states, a checkpoint without ZeRO
        "deepspeed:unable-to-find-latest-file-at-2",
        "deepspeed:can-find-model-states-file-at",
        "deepspeed:is-not-zero-checkpoint",
        # deepspeed/runtime/engine.py load_checkpoint with "load_universal": no latest_universal tag
        "deepspeed:invalid-for-universal-checkpoint-does-not",
        # transformers/trainer.py _load_from_checkpoint: resume_from_checkpoint without a weights file
        "transformers:can-find-valid-checkpoint-at",
        # trainer.py _load_from_checkpoint: a checkpoint of FSDP shards resumed by a run without FSDP
        "transformers:checkpoint-found-at-is-only-supported",
        # accelerate/utils/fsdp_utils.py merge_fsdp_weights (accelerate merge-weights): no metadata where it looked;
        # it names the subfolder that has the shards when there is one
        "accelerate:tried-to-load-from-but-couldn",
        "accelerate:please-pass-in-either-pytorch-model",
        "accelerate:please-try-passing-in-pytorch-model",
        # lightning/fabric/strategies/fsdp.py, model_parallel.py load_checkpoint: neither shards nor a full file
        "lightning:the-path-does-not-point-to",
        "lightning:the-path-does-not-point-to-2",
        "lightning:failed-to-load-checkpoint-directly-into",
        # accelerate/utils/modeling.py load_checkpoint_in_model, transformers/trainer_utils.py load_sharded_checkpoint
        "accelerate:checkpoint-should-be-the-path-to",
        # accelerate/utils/modeling.py load_checkpoint_in_model: a folder with no index or weights, or two indexes
        "accelerate:is-not-folder-containing-index-json",
        "accelerate:containing-more-than-one-index-json",
        # accelerate/utils/fsdp_utils.py merge_fsdp_weights: the folder above optimizer_0
        "accelerate:please-try-passing-in-optimizer-instead",
        "torch:checkpoint-already-exists-and-self-overwrite",  # distributed/checkpoint/filesystem.py
        "third_party:peft-cannot-find-adapter-config",  # peft/config.py
        "transformers:can-find-checkpoint-index-in",
        "deepspeed:can-find-files-in-directory",
        "deepspeed:seems-bogus-deepspeed-checkpoint-folder-cannot",  # deepspeed/checkpoint/deepspeed_checkpoint.py
        "deepspeed:no-zero-files-found-in",  # deepspeed/checkpoint/zero_checkpoint.py
        # accelerate/accelerator.py load_state, save_model; transformers' save_pretrained (configuration_utils.py ...)
        "accelerate:tried-to-find-but-folder-does",
        "accelerate:no-input-dir-provided-and-automatic",
        "accelerate:provided-path-should-be-directory-not",
        "transformers:provided-path-should-be-directory-not",
        "transformers:does-not-appear-to-have-file",
        "transformers:does-not-appear-to-have-file-2",
        "transformers:does-not-appear-to-have-file-3",
        "transformers:error-no-file-named-found-in",
        "transformers:error-no-file-named-or-found",
        "third_party:llama-checkpoint-mp-world-size",
        "third_party:llama-no-checkpoint-files",
        "system:is-a-directory-errno-21",  # CPython's EISDIR, torch.load's open() of a folder
    ),
    facts=(
        R(
            r"(?P<llama_no_shards>Loading a checkpoint for MP=0 but world size is \d+|no checkpoint files found in)"
        ),
        R(r"no checkpoint files found in (?P<llama_ckpt_dir>\S{1,300})"),
        R(r"Please try passing in (?P<fsdp_subdir>\S{1,500}/optimizer_0) instead"),
        R(r"Can't find 'adapter_config\.json' at '(?P<no_adapter_config>[^'\n]{1,500})'"),
        R(r"(?P<dcp_exists>Checkpoint already exists and self\.overwrite=False)"),
        R(r"(?P<index_files>\S{1,500}) containing more than one `\.index\.json` file"),
        R(r"(?P<path>\S{1,500}) is not a folder containing a `\.index\.json` file"),
        R(r"No such file or directory: '(?P<dcp_metadata>[^'\n]{0,400}?)/\.metadata'"),
        R(r"\[Errno 21\] Is a directory: '(?P<dir_not_file>[^'\n]{1,500})'"),
        # accelerate's SHARDED_STATE_DICT folders (fsdp_utils.py: FSDP_MODEL_NAME / OPTIMIZER_NAME + "_<i>")
        R(
            r"No such file or directory: '(?P<fsdp_sharded_dir>[^'\n]{0,400}?(?:pytorch_model_fsdp|optimizer)_\d+)/\.metadata'"
        ),
        R(r"No such file or directory: '(?P<fsdp_full_file>[^'\n]{0,400}?pytorch_model_fsdp(?:_\d+)?\.bin)'"),
        R(r"Try to load using this parent directory instead: (?P<parent>\S{1,500})"),
        R(r"(?P<not_zero>\S{1,300}) is not a zero checkpoint"),
        R(
            r"(?P<ds_step_dir>\S{1,300}) seems a bogus DeepSpeed checkpoint folder|No ZeRO files found in "
            r"(?P<ds_step_dir2>\S{1,300})"
        ),
        R(r"Invalid for universal checkpoint: (?P<universal>\S{1,500}) does not exist"),
        R(r"Tried to find (?P<missing_dir>\S{1,500}) but folder does not exist"),
        R(r"(?P<no_input_dir>No input_dir provided) and automatic checkpoint naming is disabled"),
        R(r"Provided path \((?P<file_not_dir>[^)\n]{1,500})\) should be a directory, not a file"),
        R(r"Checkpoint found at (?P<fsdp_shards>\S{1,500}) is only supported when using PyTorch FSDP"),
        R(r"(?P<path>[^\s:]{1,300}) does not appear to have a file named "),
        R(r"Error no file named [^\n]{1,200}? found in directory (?P<path>\S{1,300}?)\.?$"),
        R(r"Please (?:try passing in|pass in either) (?P<fsdp_subdir>\S{1,500}/pytorch_model_fsdp_0)"),
        R(
            r"(?:not a valid DeepSpeed checkpoint: |Unable to find 'latest' file at |can't find model states file at "
            r"|Can't find a valid checkpoint at |Tried to load from |The path |but got |into the model\. The given path must be "
            r"a single file containing the full state dict: )'?(?P<path>[^'\n]{1,500}?)'?(?: but couldn't| does not point|"
            r"\.?$)"
        ),
    ),
    # a wrong path and a checkpoint saved without DeepSpeed's state (save_only_model, weights only, a save cut
    # short) print the same words; the parent named, a ZeRO-less checkpoint or a universal load decide it
    confirm=lambda hits, ctx: any(key in h.facts for h in hits for key in _DECIDED),
    also=(
        Alternative(
            "checkpoint_incomplete",
            "a checkpoint saved without its training state (weights only, or a save cut short)",
            "If the folder is the right one, it holds no DeepSpeed state: it was saved with save_only_model=True "
            "(--save_only_model) or save_weights_only, or the save did not finish. Save full checkpoints to resume; to "
            "start from these weights alone, load them as the model (from_pretrained / load_state_dict) and do not "
            "resume.",
            unless=("llama_no_shards", "fsdp_full_file", "fsdp_sharded_dir", "dir_not_file"),
        ),
    ),
    # a folder opened as a file is torch.load's only beside its frames or call (data code opens folders too)
    requires_beside=(("dir_not_file", ("saw_torch_load",)),),
    describe=_checkpoint_path,
)

# the first byte of the file, as pickle prints it, and what such a file usually is
_FIRST_BYTE = {
    "<": "an HTML or XML page (a download that returned an error or login page, or an XML file)",
    "v": "a Git LFS pointer (a text file starting 'version https://git-lfs'): the weights themselves were never "
    "fetched (git lfs pull)",
    "{": "a JSON file (a config or a log where the checkpoint was expected)",
    "\\x1f": "a gzip file",
}


def _not_a_checkpoint(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "safetensors_header"):
        return (
            "the .safetensors file is not a whole safetensors file (its header does not read: "
            f"{first(hits, 'safetensors_header')}): cut short, damaged, or a Git LFS pointer"
            + on_ranks(hits),
            "safetensors reads an 8-byte header length and the JSON header after it: a file whose download or copy "
            "was cut short (MetadataIncompleteBuffer, a full disk while it was written or split), a Git LFS pointer "
            "never fetched (HeaderTooLarge: the text 'version https://git-lfs' read as a length) or another kind of "
            "file saved under the name fails here. Delete the file and fetch it again (rm the model's folder under "
            "~/.cache/huggingface/hub, or huggingface-cli download <repo> --force-download; in a git clone, git lfs "
            "install && git lfs pull), check the free space where it is written, and compare its size with the "
            "one on the Hub."
            + (
                " InvalidHeaderDeserialization is also a whole file that holds no tensors (a header of metadata "
                "only: an adapter saved while ZeRO-3 held the weights partitioned): a file of a few hundred bytes "
                "is that, saved again from gathered weights."
                if first(hits, "st_no_tensors")
                else ""
            ),
        )
    if first(hits, "lfs_clone"):
        return (
            "the model's weight file is a Git LFS pointer: the repository was cloned without git-lfs"
            + on_ranks(hits),
            "git clone of a model repository without git-lfs leaves small text pointers in place of the weights: "
            "install it and fetch them (git lfs install && git lfs pull in the cloned folder), or download the "
            "model with huggingface-cli download / from_pretrained('<repo id>') instead of a clone.",
        )
    if first(hits, "hf_unable"):
        return (
            f"transformers could not read the weights file {first(hits, 'hf_unable')} with torch.load: damaged or cut "
            "short, or written by a newer torch than this one" + on_ranks(hits),
            "The error torch.load raised is printed above this one ('During handling of the above exception'): a zip "
            "archive that does not read (PytorchStreamReader ...) is a download or save cut short: delete the file "
            "(the model's folder under ~/.cache/huggingface/hub) and download it again, comparing its size with the "
            "Hub's; 'is a zip archive (did you mean to use torch.jit.load()?)' is a torch older than 1.6 reading the "
            "format 1.6+ writes: update torch; a TensorFlow checkpoint (tf_model.h5) loads with from_tf=True.",
        )
    if first(hits, "torch_magic"):
        return (
            "torch.load read a pickle that torch.save did not write (Invalid magic number): another program's "
            "pickle, or a damaged file" + on_ranks(hits),
            "The file is a pickle but not a torch checkpoint (pickle.dump, joblib, numpy's .npy/.npz, a "
            "scikit-learn model): read it with the library that wrote it (pickle.load(open(path, 'rb')), "
            "np.load, joblib.load), or pass the checkpoint the run saved; download it again when it was cut short.",
        )
    byte = first(hits, "load_key", "?")
    what = _FIRST_BYTE.get(byte, "damaged or cut short (in a download or an upload), or another kind of file")
    return (
        f"the file given to torch.load is not a checkpoint (pickle read first byte '{byte}'): it is {what}"
        + on_ranks(hits),
        "Look at what the path holds (head -c 200 <file>; its size against the original's) and pass the "
        "checkpoint file itself (the .pth/.pt/.ckpt the run saved or the project released, not a config, a "
        "folder listing or a repository page); download it again from the release URL when it was cut short, "
        "damaged, or saved as an LFS pointer.",
    )


CHECKPOINT_FILE_INVALID = Recogniser(
    kind="checkpoint_file_invalid",
    templates=(
        "system:pickle-invalid-load-key",
        # torch/serialization.py: a pickle torch.save did not write (its "is a zip archive (did you mean to use
        # torch.jit.load()?)" is a torch older than 1.6 reading the zip format 1.6 writes: a release, not mapped here)
        "torch:invalid-magic-number-corrupt-file",
        # safetensors' Python binding (bindings/python/src/lib.rs): a header that does not read; transformers 4.x
        # modeling_utils.load_state_dict: a weights file that starts with 'version' (a Git LFS pointer)
        "third_party:safetensors-error-while-deserializing-header",
        "third_party:transformers-cloned-without-git-lfs",
        # transformers 3.x-4.x modeling_utils.load_state_dict: torch.load failed on a file that is no LFS pointer
        "third_party:transformers-unable-to-load-weights",
    ),
    title="a file that is not a checkpoint",
    anchors=(
        "invalid load key, ",
        "Invalid magic number; corrupt file?",
        "Error while deserializing header: ",
        "You seem to have cloned a repository without having git-lfs installed",
        "Unable to load weights from pytorch checkpoint file for",
    ),
    facts=(
        re.compile(r"invalid load key, '(?P<load_key>\\x[0-9a-f]{2}|.)'"),
        re.compile(r"(?P<torch_magic>Invalid magic number; corrupt file\?)"),
        re.compile(r"Error while deserializing header: (?P<safetensors_header>[^\n]{1,80})"),
        re.compile(r"Error while deserializing header: (?P<st_no_tensors>InvalidHeaderDeserialization)"),
        re.compile(r"(?P<lfs_clone>You seem to have cloned a repository without having git-lfs installed)"),
        re.compile(r"Unable to load weights from pytorch checkpoint file for '(?P<hf_unable>[^'\n]{1,300})'"),
    ),
    # pickle's "invalid load key" is any pickle's: certain beside torch.load; the others are the loaders' own words
    # transformers' "Unable to load weights" wraps whatever torch.load raised (printed above it): likely alone
    confirm=lambda hits, ctx: (
        (has_fact("saw_torch_load")(hits, ctx) and any("hf_unable" not in h.facts for h in hits))
        or any(
            k in h.facts and "st_no_tensors" not in h.facts
            for h in hits
            for k in ("torch_magic", "safetensors_header", "lfs_clone")
        )
    ),
    also=(
        # safetensors' InvalidHeaderDeserialization is also a whole file that holds no tensors (a header of
        # metadata only, which safetensors#466 shows the reader refuses): a PEFT adapter saved while ZeRO-3 held
        # its weights partitioned (transformers#28742 -> peft#1443; SAI990323/BIGRec#8 saved it again with
        # save_safetensors=False)
        Alternative(
            "zero3_partitioned_weights",
            "a file written whole but without tensors: an adapter or model saved while DeepSpeed ZeRO-3 (or FSDP) "
            "held its weights partitioned",
            "Look at the file's size (a few hundred bytes is a header without tensors): save the gathered weights "
            "again (stage3_gather_16bit_weights_on_model_save: true, or unwrap and gather before save_pretrained), "
            "or save with save_safetensors=False to see what was saved.",
            when=("st_no_tensors",),
        ),
        Alternative(
            "bad_training_data",
            "a data file read with pickle that is not a pickle (or was cut short)",
            "Check the data file the traceback reads (its format, its size) and regenerate or download it again.",
            unless=("hf_unable",),
        ),
    ),
    describe=_not_a_checkpoint,
)


def _save_folder(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        f"torch.save could not write the checkpoint: its folder {first(hits, 'save_parent')} does not exist"
        + on_ranks(hits),
        "torch.save creates the file, never its folders: create them before the first save, on the rank that "
        "saves (os.makedirs(os.path.dirname(path), exist_ok=True)), and check the path is the one meant (a "
        "relative path is read from the folder the job was started in, which a launcher or a cluster may set "
        "elsewhere).",
    )


CHECKPOINT_SAVE_FOLDER = Recogniser(
    # caffe2/serialize/inline_container.cc (PyTorchFileWriter): torch.save's writer checks the file's folder
    # before it opens the file ("Parent directory {} does not exist."); older releases failed to open the file
    # instead ("File {} cannot be opened.", read with a full disk as disk_full, kinds/checkpoint.py)
    kind="checkpoint_save_folder",
    templates=("torch_native:pytorchfilewriter-parent-directory-missing",),
    title="a checkpoint saved into a folder that is not there",
    anchors=("Parent directory ",),
    match=R(r"Parent directory (?!of )\S.{0,500} does not exist\."),
    facts=(R(r"Parent directory (?!of )(?P<save_parent>\S.{0,500}?) does not exist\."),),
    describe=_save_folder,
)

RECOGNISERS = (CHECKPOINT_PATH, CHECKPOINT_FILE_INVALID, CHECKPOINT_SAVE_FOLDER)
