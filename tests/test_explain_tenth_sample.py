"""The knowledge the tenth sample by symptom (corpus files 385-402, train half) asked for, each anchored on the
message its source prints: DeepSpeed 0.17.2-0.17.5 refusing a torch.autocast enabled outside its engine
(deepspeed/runtime/torch_autocast.py), CPython's FileExistsError when ranks create the same directory at once,
accelerate's config file that does not exist (accelerate/commands/config/config_args.py, and CPython's open() of
the default config before 0.17), and DDP's model check across ranks when a hyperparameter search drew a trial in
every process. Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_deepspeeds_refusal_of_an_outer_autocast_is_a_version_that_disagrees_certain():
    # 395.txt (aigc-apps/VideoX-Fun#250): a training script's torch.cuda.amp.autocast under DeepSpeed 0.17.x
    found = lead("395.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "0.17.2-0.17.5" in found.summary
    assert "pip install -U deepspeed" in found.fix and "accelerate" in found.fix
    assert '"torch_autocast"' in found.fix
    # the message as torch_autocast.py raises it, in a traceback's last line
    line = "AssertionError: " + template("deepspeed:torch-autocast-is-enabled-outside-deepspeed-2")
    assert explained(line + "\n").id == "log.dependency_version"


def test_deepspeeds_later_warning_about_an_outer_autocast_is_not_a_failure():
    # 0.17.6+ (deepspeedai/DeepSpeed#7543) only warns and follows the config: nothing to explain
    warning = template("deepspeed:torch-autocast-is-enabled-outside-deepspeed")
    assert explained(warning + "\n").id == "log.unrecognised"
    notice = template("deepspeed:deepspeed-detected-torch-autocast-context-outside")
    assert explained(notice + "\n").id == "log.unrecognised"


def test_a_directory_that_already_exists_is_ranks_creating_it_at_once_only_likely():
    # 397.txt (allenai/allennlp#3841): every process's tensorboardX writer made the same log folder
    found = lead("397.txt")
    assert found.id == "log.makedirs_race" and found.details["confidence"] == "likely"
    assert "/path/to/run_dir/log/validation" in found.summary
    assert "exist_ok=True" in found.fix and "barrier" in found.fix and "earlier run" in found.fix
    # a rank's traceback on a distributed filesystem, as the template prints it: still only likely
    line = "[rank8]: " + template("system:python-file-exists", "/ckpt/epoch_3/model")
    found = explained(line + "\n")
    assert found.id == "log.makedirs_race" and found.details["confidence"] == "likely"


def test_other_errors_about_existing_files_are_not_a_directory_race():
    assert explained("mkdir: cannot create directory 'out': File exists\n").id != "log.makedirs_race"
    windows = "FileExistsError: [WinError 183] Cannot create a file when that file already exists: 'out'\n"
    assert explained(windows).id != "log.makedirs_race"


def test_accelerates_missing_config_file_is_the_launch_command_certain_where_accelerate_says_so():
    # accelerate 0.17+ names the file passed to --config_file (accelerate/commands/config/config_args.py)
    line = "FileNotFoundError: " + template("accelerate:the-passed-configuration-file-does-not", "1gpu.yaml")
    found = explained(line + "\n")
    assert found.id == "log.launch_command" and found.details["confidence"] == "certain"
    assert "1gpu.yaml" in found.summary and "accelerate config" in found.fix and "--config_file" in found.fix


def test_accelerates_missing_default_config_before_0_17_is_the_launch_command_only_likely():
    # 401.txt (huggingface/accelerate#1073): a --config_file path that did not exist, then the default one missing
    found = lead("401.txt")
    assert found.id == "log.launch_command" and found.details["confidence"] == "likely"
    assert "default config" in found.summary and "config_file" in found.fix
    line = template("system:accelerate-default-config-not-found", "/home/u/.cache/huggingface")
    assert explained(line + "\n").id == "log.launch_command"


def test_other_missing_files_are_not_accelerates_config():
    for path in ("configs/accelerate.yaml", "/root/.cache/huggingface/hub/models--gpt2/config.json"):
        line = f"FileNotFoundError: [Errno 2] No such file or directory: '{path}'\n"
        assert explained(line).id != "log.launch_command"


def test_ranks_with_different_models_under_a_hyperparameter_search_name_the_search_only_likely():
    # 400.txt (huggingface/transformers#18609): Trainer.hyperparameter_search with optuna under torchrun
    found = lead("400.txt")
    assert found.id == "log.ddp_model_mismatch" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.library_version_bug"]
    assert "trial" in found.summary
    assert "transformers" in found.fix and "TorchDistributedTrial" in found.fix
    # the search named far from the refusal: a frame of optuna's study earlier in the log
    log = (
        '  File "/opt/conda/lib/python3.9/site-packages/optuna/study/_optimize.py", line 200, in _run_trial\n'
        "    value_or_values = func(trial)\n"
        + "RuntimeError: "
        + template("torch_cpp:ddp-expects-same-model-across-all")
        + " 0 has 199 params, while rank 1 has inconsistent 0 params.\n"
    )
    assert explained(log).details["alternatives"] == ["log.library_version_bug"]


def test_ranks_with_different_models_without_a_search_stay_certain():
    line = (
        "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 199 params, while rank 1 has "
        "inconsistent 0 params.\n"
    )
    found = explained(line)
    assert found.id == "log.ddp_model_mismatch" and found.details["confidence"] == "certain"
    assert "trial" not in found.summary and "transformers" not in found.fix
