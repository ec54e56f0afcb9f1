"""A fix says what to do with the checkpoint or the launch the log shows: a whole training checkpoint handed to
load_state_dict is loaded through the entry its keys name; CUDA initialised before a notebook launcher forks is
kept out of the parent. Each class on the train log's line as posted (tests/fixtures/corpus/train, cited) and on
a second wording or value of the same class, with a near miss where one reads otherwise."""

from __future__ import annotations

from explaining import explained as lead  # the lead finding on a pasted log

FORK = (
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
    "the 'spawn' start method\n"
)


# --- a training checkpoint passed whole to load_state_dict: its unexpected keys are the dict's own ---


def test_a_training_checkpoint_is_loaded_through_the_entry_its_keys_name():
    # train/4919.txt line 1 (LiheYoung/UniMatch#31: load checkpoint['model'], as unimatch.py does)
    found = lead(
        'As you can see in the error information, "Unexpected key(s) in state_dict: "model", "optimizer", '
        '"epoch", "previous_best"".\n'
    )
    assert found.id == "log.state_dict_keys"
    assert "model.load_state_dict(checkpoint['model'])" in found.fix
    assert "'model', 'optimizer', 'epoch', 'previous_best'" in found.summary
    assert "removeprefix" not in found.fix  # no wrapper's prefix is involved


def test_a_lightning_checkpoint_is_loaded_through_its_state_dict_entry():
    # OpenTabular/DeepTab#137: a Lightning .ckpt loaded into the bare model with load_state_dict
    found = lead(
        "RuntimeError: Error(s) in loading state_dict for BaseModel:\n"
        '\tUnexpected key(s) in state_dict: "epoch", "global_step", "pytorch-lightning_version", "state_dict", '
        '"loops", "callbacks", "optimizer_states", "lr_schedulers", "hparams_name", "hyper_parameters".\n'
    )
    assert found.id == "log.state_dict_keys"
    assert "model.load_state_dict(checkpoint['state_dict'])" in found.fix
    assert ".load_from_checkpoint(path)" in found.fix
    assert "its 'state_dict' entry" in found.summary


def test_top_level_parameters_are_not_read_as_a_training_checkpoint():
    # a ViT's own top-level parameters (no dot in their names) beside a head the model lacks: no loop state
    found = lead(
        "RuntimeError: Error(s) in loading state_dict for VisionTransformer:\n"
        '\tUnexpected key(s) in state_dict: "cls_token", "pos_embed", "head.weight", "head.bias".\n'
    )
    assert found.id == "log.state_dict_keys"
    assert "training checkpoint" not in found.summary and "checkpoint[" not in found.fix


# --- CUDA initialised in the parent before a fork: nothing may touch CUDA before the launcher forks ---


def test_a_fork_after_cuda_says_nothing_may_initialise_it_before_the_launch():
    # train/4921.txt lines 1-2 (roboflow/rf-detr#923: the model moved to CUDA in the notebook before ddp_notebook)
    found = lead(FORK)
    assert found.id == "log.cuda_fork"
    assert "nothing may initialise CUDA before it runs" in found.fix
    assert "strategy='ddp_notebook'" in found.fix and "notebook_launcher" in found.fix
    assert "keep the model on the CPU until the launch" in found.fix


def test_the_launcher_the_log_names_is_the_one_the_fix_names():
    # huggingface/accelerate#940: notebook_launcher's frame (IPython's traceback) above the child's error
    found = lead(
        "File ~/python3.8/site-packages/accelerate/launchers.py:122, in notebook_launcher(function, args, "
        "num_processes, use_fp16, mixed_precision, use_port)\n"
        '--> 122         start_processes(launcher, args=args, nprocs=num_processes, start_method="fork")\n'
        + FORK
    )
    assert found.id == "log.cuda_fork"
    assert "accelerate's notebook_launcher forks this process" in found.fix
    assert "ddp_notebook" not in found.fix


def test_a_deepspeed_model_states_file_is_loaded_through_its_module_entry():
    # DeepSpeed's mp_rank_00_model_states.pt (runtime/engine.py _save_checkpoint: dict(module=..., buffer_names=...,
    # optimizer=..., param_shapes=...)) loaded whole into the bare model, in torch's wording
    found = lead(
        "RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:\n"
        '\tUnexpected key(s) in state_dict: "module", "buffer_names", "optimizer", "param_shapes", '
        '"lr_scheduler", "global_steps", "ds_config", "ds_version".\n'
    )
    assert found.id == "log.state_dict_keys"
    assert "model.load_state_dict(checkpoint['module'])" in found.fix
    assert "zero_to_fp32.py" in found.fix
    assert "removeprefix('module.')" not in found.fix  # 'module' here is the entry, not DDP's prefix


def test_the_notebook_launchers_own_words_for_a_fork_after_cuda_are_read():
    # accelerate/launchers.py notebook_launcher re-raises torch's "Cannot re-initialize CUDA in forked subprocess" as
    # its own message; Lightning's _check_bad_cuda_fork (fabric/strategies/launchers/multiprocessing.py) raises its
    # own before a fork or forkserver start once torch.cuda.is_initialized(): neither printed torch's words
    accelerate = lead(
        "RuntimeError: CUDA has been initialized before the `notebook_launcher` could create a forked subprocess. "
        "This likely stems from an outside import causing issues once the `notebook_launcher()` is called.\n"
    )
    assert accelerate.id == "log.cuda_fork" and "notebook_launcher" in accelerate.fix
    lightning = lead(
        "RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually call "
        "`torch.cuda.*` functions, have moved the model to the device, or allocated memory on the GPU any other way? "
        "Please remove any such calls, or change the selected strategy. You will have to restart the Python kernel.\n"
    )
    assert lightning.id == "log.cuda_fork"
    # a message about CUDA being initialised that is not a fork (torch's lazy init check) is not this kind
    other = lead("RuntimeError: CUDA has been initialized already, cannot set the memory fraction now\n")
    assert other.id != "log.cuda_fork"
