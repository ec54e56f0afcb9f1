"""The certainty review's sixth part (helper V16, issue 19): the older recognisers of the DeepSpeed, checkpoint /
state-dict and launcher families that speak with certainty, read against the sources that print their messages.
Each test gives the line as its source prints it, where the reading holds (certain) and where another does
(likely, or another kind).

- torch's nn/modules/module.py ``load_state_dict`` lists the model's keys the state dict lacks first ("Missing
  key(s)"), the state dict's keys the model lacks after ("Unexpected key(s)"). A wrapper's prefix ("module.",
  "_orig_mod.") on the unexpected keys is a checkpoint saved through the wrapper, loaded into the bare model; on
  the missing keys it is the opposite, a bare model's checkpoint loaded into the wrapped model, whose fix is to
  load into ``model.module`` (or before wrapping), not to take a prefix off. Certain only when the prefix, taken
  off one list's key, names a key of the other list; a prefix on one list alone stays likely. Lightning Fabric's
  "The model contains a key 'X'" names the model's key: one key, likely.
- OpenSSH's "ssh: connect to host" / "Could not resolve hostname" / the host-key banner are printed for git's ssh
  too (a clone, a pip install from git+ssh), followed by git's "fatal: Could not read from remote repository."
  (connect.c): rejected beside it, likely where the log has it further on.
- transformers' deepspeed_load_checkpoint raises "[deepspeed] failed to resume from checkpoint" only where the
  folder has global_step* folders and DeepSpeed's load_checkpoint returned None (no 'latest', which
  save_checkpoint writes last): save_only_model or a save that did not finish; likely, the fix naming both.
- torch's reducer "Expected to have finished reduction" under gradient checkpointing: the reentrant variant gives a
  block whose inputs do not require grad no gradients (LoRA; huggingface/peft#951, huggingface/trl#835); likely
  there, use_reentrant=False named first.
- accelerate's prepare_model skips DDP for a module without trainable parameters from 0.14.0 on (#761).
- Slurm's srun "step creation temporarily disabled, retrying" then "Step created for": a wait that ended.
- CPython's pickle "Can't pickle <class X>: it's not the same object as X": a class defined again, not a lambda.
- CPython's "attempted relative import with no known parent package" raised in a file the traceback's outer frames
  imported or executed (a library's config loader): not the script started as a file; likely, its own fix.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained

pytestmark = pytest.mark.usefixtures("every_message_seen")

HEAD = "RuntimeError: Error(s) in loading state_dict for {}:\n"


def _keys(model: str, missing: list[str], unexpected: list[str]) -> str:
    text = HEAD.format(model)
    if missing:
        text += "\tMissing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". \n"
    if unexpected:
        text += "\tUnexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". \n"
    return text


def test_a_prefix_on_the_missing_keys_is_a_bare_checkpoint_loaded_into_the_wrapped_model():
    found = certain(
        _keys(
            "DistributedDataParallel",
            ["module.conv1.weight", "module.bn1.weight", "module.fc.weight"],
            ["conv1.weight", "bn1.weight", "fc.weight"],
        ),
        "state_dict_keys",
    )
    assert "the model's keys start with 'module.'" in found.summary
    assert "model.module.load_state_dict" in found.fix and "removeprefix" not in found.fix
    # torch.compile's prefix the same way: the compiled model's keys, a checkpoint of the plain one
    found = certain(
        _keys("OptimizedModule", ["_orig_mod.encoder.weight"], ["encoder.weight"]),
        "state_dict_keys",
    )
    assert "model._orig_mod" in found.fix


def test_a_prefix_on_the_unexpected_keys_is_still_a_checkpoint_saved_through_the_wrapper():
    found = certain(
        _keys("ResNet", ["conv1.weight", "fc.weight"], ["module.conv1.weight", "module.fc.weight"]),
        "state_dict_keys",
    )
    assert "saved through DistributedDataParallel" in found.summary and "removeprefix('module.')" in found.fix


def test_a_prefix_that_pairs_no_key_of_the_other_list_is_only_likely():
    # the checkpoint's keys carry 'module.', but taken off it names no key the model misses: another model
    found = explained(_keys("ResNet", ["layer5.0.weight"], ["module.head.weight"]))
    assert found.id == "log.state_dict_keys" and found.details["confidence"] == "likely", found.summary
    assert "saved through" not in found.summary
    # a prefix on the unexpected keys with no missing keys listed (a strict load of a bigger checkpoint)
    found = explained(_keys("ResNet", [], ["module.extra.weight"]))
    assert found.id == "log.state_dict_keys" and found.details["confidence"] == "likely", found.summary


# OpenSSH's lines as a launcher's ssh prints them (pdsh prefixes the host) and as git's ssh prints them for a git
# server: git (connect.c) follows with "fatal: Could not read from remote repository."
GIT_FATAL = (
    "fatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\n"
)


def test_git_over_ssh_to_any_git_server_is_not_a_launchers_host():
    for line in (
        "ssh: connect to host git.example.com port 22: Connection timed out\n",
        "  ssh: Could not resolve hostname gitlab.internal.org: Name or service not known\n  ",
    ):
        found = explained("Cloning into 'third_party/apex'...\n" + line + GIT_FATAL)
        assert found.id != "log.ssh_connect", found.summary
    banner = (
        "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n"
        "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n"
        "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n"
        "IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\n"
        "Someone could be eavesdropping on you right now (man-in-the-middle attack)!\n"
        "It is also possible that a host key has just been changed.\n"
        "The fingerprint for the ED25519 key sent by the remote host is\n"
        "SHA256:q1w2e3r4t5y6u7i8o9p0.\n"
        "Please contact your system administrator.\n"
        "Add correct host key in /home/ana/.ssh/known_hosts to get rid of this message.\n"
        "Offending ECDSA key in /home/ana/.ssh/known_hosts:3\n"
        "Host key for git.example.com has changed and you have requested strict checking.\n"
        "Host key verification failed.\n"
    )
    found = explained(banner + GIT_FATAL)
    assert not (found.id == "log.ssh_connect" and found.details["confidence"] == "certain"), found.summary


def test_a_launchers_ssh_to_a_node_stays_ssh_connect():
    found = certain("node1: ssh: connect to host node2 port 22: Connection refused\n", "ssh_connect")
    assert "node2" in found.summary
    certain("ssh: Could not resolve hostname worker-3: Name or service not known\n", "ssh_connect")


def test_the_trainers_failed_resume_names_a_save_cut_short_beside_save_only_model():
    # transformers integrations/deepspeed.py deepspeed_load_checkpoint: raised only where the folder has
    # global_step* folders and DeepSpeed's load_checkpoint returned None (no 'latest' file, which save_checkpoint
    # writes last): save_only_model, or a save the job did not finish
    found = explained(
        "[WARNING] [engine.py:3012:load_checkpoint] Unable to find latest file at /out/checkpoint-500/latest, if "
        "trying to load latest checkpoint please ensure this file exists or pass an explicit checkpoint tag when "
        "loading a checkpoint.\n"
        "ValueError: [deepspeed] failed to resume from checkpoint /out/checkpoint-500\n"
    )
    assert found.id == "log.checkpoint_incomplete" and found.details["confidence"] == "likely", found.summary
    assert "save_only_model" in found.fix and "did not finish" in found.fix and "checkpoint-M" in found.fix
    assert "no global_step" not in found.fix
    # Lightning's line that says the file holds only the model stays certain
    certain(
        "KeyError: 'Trying to restore optimizer state but checkpoint contains only the model. This is probably due "
        "to `ModelCheckpoint.save_weights_only` being set to `True`.'\n",
        "checkpoint_incomplete",
    )


UNUSED = (
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This "
    "error indicates that your module has parameters that were not used in producing loss. You can enable unused "
    "parameter detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss.\n"
)


def test_unused_parameters_under_reentrant_gradient_checkpointing_name_use_reentrant():
    # torch/utils/checkpoint.py: the reentrant variant computes no gradient for a block none of whose inputs
    # requires grad (it warns so), the parameters DDP's reducer then waits for (LoRA with gradient checkpointing,
    # huggingface/peft#951, huggingface/trl#835): find_unused_parameters is not that fix
    for warning in (
        "/usr/lib/python3.10/site-packages/torch/utils/checkpoint.py:31: UserWarning: None of the inputs have "
        'requires_grad=True. Gradients will be None\n  warnings.warn("None of the inputs have requires_grad=True. '
        'Gradients will be None")\n',
        "/usr/lib/python3.10/site-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the "
        "use_reentrant parameter should be passed explicitly. In version 2.5 we will raise an exception if "
        "use_reentrant is not passed. use_reentrant=False is recommended, but if you need to preserve the current "
        "default behavior, you can pass use_reentrant=True.\n",
    ):
        found = explained(warning + UNUSED)
        assert found.id == "log.ddp_unused_parameters" and found.details["confidence"] == "likely", (
            found.summary
        )
        assert '"use_reentrant": False' in found.fix and "enable_input_require_grads" in found.fix
    # without gradient checkpointing in the log: the model's unused parameters, certain as before
    found = certain(UNUSED, "ddp_unused_parameters")
    assert "use_reentrant" not in found.fix and "find_unused_parameters=True" in found.fix


def test_ddp_over_a_frozen_module_names_accelerates_release_that_stopped_wrapping_it():
    # accelerate's prepare_model wraps a module in DDP only when some parameter requires grad from 0.14.0 on
    # (a7334df9, huggingface/accelerate#761): the fix must not say prepare() wraps every module whatever the release
    found = certain(
        "RuntimeError: DistributedDataParallel is not needed when a module doesn't have any parameter that "
        "requires a gradient.\n",
        "ddp_no_grad_params",
    )
    assert "prepare() before 0.14.0 wraps every module" in found.fix and "accelerate#761" in found.fix


BUSY = "srun: Job 88123 step creation temporarily disabled, retrying (Requested nodes are busy)\n"


def test_an_srun_wait_that_ended_in_a_created_step_is_no_failure():
    # Slurm's srun (launch.c) retries a step that cannot get its resources yet, and prints "Step created for
    # <step>" when it can: the step then runs, and what fails after is another failure's
    assert certain(BUSY, "slurm_step_busy")
    for created in ("srun: Step created for StepId=88123.1\n", "srun: Step created for job 88123\n"):
        found = explained(BUSY + created + "epoch 1 loss 0.51\n")
        assert found.id != "log.slurm_step_busy", found.summary
    # the step created past the lines read with the wait: likely, never certain
    found = explained(
        BUSY + "".join(f"0: step {i} loss 0.5\n" for i in range(12)) + "srun: Step created for job 88123\n"
    )
    assert not (found.id == "log.slurm_step_busy" and found.details["confidence"] == "certain"), found.summary
    # a failure after the step was created leads, not the wait
    found = explained(
        BUSY + "srun: Step created for StepId=88123.1\n"
        "slurmstepd: error: execve(): /home/ana/run_inner.sh: No such file or directory\n"
        "srun: error: gpu017: task 0: Exited with exit code 2\n"
    )
    assert found.id != "log.slurm_step_busy", found.summary


def test_a_class_pickle_finds_redefined_is_not_a_lambda():
    # CPython's pickle save_global: "Can't pickle <class ...>: it's not the same object as ..." where the name
    # imports to another class than the object's: the class was defined again (a reload, a cell run again)
    found = certain(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/train.py", line 40, in <module>\n'
        '    torch.save(model, "m.pt")\n'
        '  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 652, in _save\n'
        "    pickler.dump(obj)\n"
        "_pickle.PicklingError: Can't pickle <class 'model.Net'>: it's not the same object as model.Net\n",
        "unpicklable_checkpoint_object",
    )
    assert "defined again" in found.summary and "importlib.reload" in found.fix and "lambda" not in found.fix


RELATIVE = "ImportError: attempted relative import with no known parent package\n"


def test_a_relative_import_in_a_file_other_code_loaded_is_not_a_script_run_as_a_file():
    # CPython's _sanity_check raises it for any module without a package: the file started with python <file>.py,
    # and a file that other code imported by its bare name or executed (a library's config loader)
    certain(RELATIVE, "relative_import_in_script")
    found = certain(
        'Traceback (most recent call last):\n  File "/home/ana/proj/src/train.py", line 3, in <module>\n'
        "    from .utils import seed_all\n" + RELATIVE,
        "relative_import_in_script",
    )
    assert "python -m" in found.fix
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/tools/train.py", line 12, in <module>\n'
        "    cfg = Config.fromfile(args.config)\n"
        '  File "/usr/lib/python3.10/site-packages/mmengine/config/config.py", line 460, in fromfile\n'
        "    exec(compile(f.read(), filename, 'exec'), cfg_dict)\n"
        '  File "/home/ana/configs/my_cfg.py", line 1, in <module>\n'
        "    from .base import model\n" + RELATIVE
    )
    assert found.id == "log.relative_import_in_script" and found.details["confidence"] == "likely", (
        found.summary
    )
    assert "/home/ana/tools/train.py" in found.summary and "absolute" in found.fix
