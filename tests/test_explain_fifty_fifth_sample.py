"""The fifty-fifth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2567-2592)."""

from __future__ import annotations

import pytest
from explaining import certain, explained

pytestmark = pytest.mark.usefixtures("every_message_seen")

# CPython Lib/importlib/_bootstrap.py _sanity_check: a relative import in a module without a parent package
RELATIVE_IMPORT = (
    "Traceback (most recent call last):\n"
    '  File "tools/train.py", line 4, in <module>\n'
    "    from .engine import train_one_epoch\n"
    "ImportError: attempted relative import with no known parent package\n"
)


def test_a_relative_import_in_a_script_run_as_a_file_says_to_run_it_as_a_module():
    found = certain(RELATIVE_IMPORT, "relative_import_in_script")
    assert "python -m" in found.fix and "absolute" in found.fix and "no parent package" in found.summary


def test_a_relative_import_beyond_the_top_level_package_is_another_mistake():
    found = explained("ImportError: attempted relative import beyond top-level package\n")
    assert found.id != "log.relative_import_in_script"


# wandb/sdk/wandb_login.py _WandbLogin.prompt_api_key: UsageError("api_key not configured (no-tty). call " + directive)
def test_wandb_without_a_key_in_a_batch_job_names_the_key_and_turning_it_off():
    found = certain(
        "wandb: ERROR api_key not configured (no-tty). call wandb.login(key=[your_api_key])\n"
        "wandb.errors.errors.UsageError: api_key not configured (no-tty). call wandb.login(key=[your_api_key])\n",
        "wandb_api_key_missing",
    )
    assert "WANDB_API_KEY" in found.fix and "wandb login" in found.fix and "WANDB_MODE=disabled" in found.fix


def test_another_wandb_error_is_not_a_missing_key():
    found = explained("wandb: ERROR Run initialization has timed out after 90.0 sec.\n")
    assert found.id != "log.wandb_api_key_missing"


# pip/_internal/exceptions.py MetadataInvalid and resolution/resolvelib/factory.py (pip 24.1+)
PIP_METADATA = (
    "WARNING: Ignoring version 1.6.4 of pytorch-lightning since it has invalid metadata:\n"
    "Requested pytorch-lightning==1.6.4 from https://files.pythonhosted.org/packages/pytorch_lightning-1.6.4-py3-"
    "none-any.whl (from -r requirements.txt (line 3)) has invalid metadata: .* suffix can only be used with `==` "
    "or `!=` operators\n"
    "    torch (>=1.8.*)\n"
    "           ~~~~~~^\n"
    "Please use pip<24.1 if you need to use this version.\n"
)


def test_pip_refusing_an_old_wheels_metadata_says_to_install_an_older_pip():
    found = certain(PIP_METADATA, "dependency_version")
    assert "pip<24.1" in found.fix and "pytorch-lightning" in found.summary


def test_pips_inconsistent_version_warning_is_not_invalid_metadata():
    found = explained(
        "WARNING: Requested torch==2.1.0 from https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118-cp310-"
        "cp310-linux_x86_64.whl has inconsistent version: expected '2.1.0', but metadata has '2.1.0+cu118'\n"
    )
    assert "pip<24.1" not in found.fix


# pip/_internal/req/constructors.py before 21.3; req_install.py from 21.3 on (PEP 660)
def test_an_editable_install_with_a_pip_before_21_3_says_to_upgrade_pip():
    found = certain(
        'ERROR: File "setup.py" not found. Directory cannot be installed in editable mode: /home/ana/repo\n'
        '(A "pyproject.toml" file was found, but editable mode currently requires a setup.py based build.)\n',
        "dependency_version",
    )
    assert "pip install -U pip" in found.fix and "21.3" in found.summary


def test_a_build_backend_without_pep_660_names_setuptools_64():
    found = certain(
        "ERROR: Project file:///home/ana/repo has a 'pyproject.toml' and its build backend is missing the "
        "'build_editable' hook. Since it does not have a 'setup.py' nor a 'setup.cfg', it cannot be installed in "
        "editable mode. Consider using a build backend that supports PEP 660.\n",
        "dependency_version",
    )
    assert "setuptools>=64" in found.fix


def test_a_directory_without_any_project_file_is_not_an_old_pip():
    found = explained(
        "ERROR: Directory '.' is not installable. Neither 'setup.py' nor 'pyproject.toml' found.\n"
    )
    assert found.id != "log.dependency_version"


# fire/core.py (python-fire): an option the fired function has no parameter for
def test_fire_refusing_a_scripts_own_option_is_the_launch_command():
    found = certain(
        "ERROR: Could not consume arg: --lora_target_modules\nUsage: finetune.py <flags>\n", "launch_command"
    )
    assert "--lora_target_modules" in found.summary and "argparse" in found.fix


def test_fire_refusing_the_launchers_local_rank_stays_local_rank_argument():
    found = certain(
        "ERROR: Could not consume arg: --local-rank=1\nUsage: train.py <flags>\n", "local_rank_argument"
    )
    assert "--local-rank=1" in found.summary


def test_each_ranks_own_local_rank_is_not_quoted_as_the_one_refused():
    # python -m torch.distributed.launch hands every rank its own value (noticed running pytorch/examples'
    # multinode.py under it): the summary quoted one rank's value as what every rank named was refused; now the
    # flag, which every rank was refused
    found = certain(
        "[rank1]: multinode.py: error: unrecognized arguments: --local-rank=1\n"
        "[rank0]: multinode.py: error: unrecognized arguments: --local-rank=0\n",
        "local_rank_argument",
    )
    assert "does not accept the --local-rank argument its launcher adds" in found.summary, found.summary


# yacs/config.py CfgNode._load_cfg_py_source: a .py file given as the config without a cfg in it
def test_yacs_given_a_python_file_without_cfg_says_to_pass_a_yaml():
    found = certain(
        '  File "/usr/lib/python3/site-packages/yacs/config.py", line 393, in _load_cfg_py_source\n'
        "    \"Python module from file {} must have 'cfg' attr\".format(filename),\n"
        "AssertionError: Python module from file defaults.py must have 'cfg' attr\n",
        "launch_command",
    )
    assert "defaults.py" in found.summary and ".yaml" in found.fix


def test_another_yacs_assertion_is_not_the_config_file():
    found = explained(
        "AssertionError: Type mismatch (<class 'int'> vs. <class 'str'>) with values (1 vs. a) for config key: "
        "SOLVER.IMS_PER_BATCH\n"
    )
    assert found.id != "log.launch_command"


# transformers/utils/hub.py cached_file; huggingface_hub's GatedRepoError
def test_a_gated_model_names_the_repository_access_and_the_token():
    found = certain(
        "OSError: You are trying to access a gated repo.\n"
        "Make sure to have access to it at https://huggingface.co/meta-llama/Llama-3.1-8B.\n"
        "401 Client Error. (Request ID: Root=1-66a0)\n",
        "download_refused",
    )
    assert "meta-llama/Llama-3.1-8B" in found.summary and "HF_TOKEN" in found.fix and "accept" in found.fix


def test_a_model_name_that_does_not_exist_is_not_a_gated_repository():
    found = explained(
        "OSError: meta-llama/Llama-3-8b is not a local folder and is not a valid model identifier listed on "
        "'https://huggingface.co/models'\n"
    )
    assert found.id != "log.download_refused"


# dgl/graphbolt/__init__.py load_graphbolt (dgl 2.x)
def test_dgl_without_a_graphbolt_library_for_this_torch_names_the_torch():
    found = certain(
        "FileNotFoundError: Cannot find DGL C++ graphbolt library at "
        "/opt/conda/lib/python3.11/site-packages/dgl/graphbolt/libgraphbolt_pytorch_2.4.1.so\n",
        "extension_import",
    )
    assert "torch 2.4.1" in found.summary and "data.dgl.ai" in found.fix


def test_dgls_sparse_library_is_not_read_as_graphbolt():
    found = explained(
        "FileNotFoundError: Cannot find DGL C++ sparse library at "
        "/opt/conda/lib/python3.11/site-packages/dgl/dgl_sparse/libdgl_sparse_pytorch_2.4.0.so\n"
    )
    assert "graphbolt" not in found.summary
