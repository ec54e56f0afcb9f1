"""The fifty-seventh sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2667-2687)."""

from __future__ import annotations

from explaining import certain, explained


def likely(text: str, kind: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "likely", found.summary
    return found


# transformers/utils/import_utils.py is_torch_available: the torch minimum of the transformers installed
def test_transformers_disabling_pytorch_names_both_versions_and_both_ways_out():
    found = certain(
        "Disabling PyTorch because PyTorch >= 2.4 is required but found 2.3.1\n", "dependency_version"
    )
    assert "2.4" in found.summary and "2.3.1" in found.summary
    assert "torch>=2.4" in found.fix and "transformers" in found.fix


def test_disabling_another_feature_is_not_a_torch_too_old():
    found = explained("Disabling kernels at runtime is a no-op as there is no 'unkernelize' routine.\n")
    assert "PyTorch" not in found.summary or found.id != "log.dependency_version"


# transformers/utils/import_utils.py requires_backends: the BACKENDS_MAPPING message of a missing library
def test_a_transformers_class_without_its_library_says_which_package_to_install():
    found = certain(
        "ImportError: \n"
        "T5Tokenizer requires the SentencePiece library but it was not found in your environment. Checkout the "
        "instructions on the\n",
        "broken_install",
    )
    assert "pip install sentencepiece" in found.fix and "T5Tokenizer" in found.summary


def test_the_tokenizers_library_is_installed_under_its_pip_name():
    found = certain(
        "PreTrainedTokenizerFast requires the 🤗 Tokenizers library but it was not found in your environment.\n",
        "broken_install",
    )
    assert "pip install tokenizers" in found.fix


def test_the_pytorch_library_missing_is_not_read_as_a_package_to_pip_install():
    found = explained(
        "AutoModelForCausalLM requires the PyTorch library but it was not found in your environment.\n"
    )
    assert "pip install pytorch" not in found.fix.lower()


# pip/_internal/resolution/resolvelib/factory.py: no release of the name at all
def test_a_requirement_no_index_has_says_to_check_the_name_or_remove_it():
    found = likely(
        "ERROR: Could not find a version that satisfies the requirement torch-fancy-ops (from versions: none)\n"
        "ERROR: No matching distribution found for torch-fancy-ops\n",
        "no_matching_wheel",
    )
    assert "torch-fancy-ops" in found.summary and "remove" in found.fix and "pip index versions" in found.fix


def test_a_torch_pin_without_wheels_keeps_its_own_reading():
    found = explained(
        "ERROR: Could not find a version that satisfies the requirement torch==2.3.1 (from versions: none)\n"
        "ERROR: No matching distribution found for torch==2.3.1\n"
    )
    assert found.id == "log.no_matching_wheel" and "pip index versions" not in found.fix


# CPython Objects/abstract.c PyObject_GetItem: a class without __class_getitem__ subscripted
def test_builtin_generics_on_an_old_python_say_python_3_9_or_typing():
    found = likely(
        "Traceback (most recent call last):\n"
        '  File "/home/u/miniconda3/envs/rl/lib/python3.8/site-packages/agent/buffer.py", line 12, in Buffer\n'
        "    def sample(self) -> tuple[np.ndarray, np.ndarray]:\n"
        "TypeError: 'type' object is not subscriptable\n",
        "dependency_version",
    )
    assert "python=3.9" in found.fix and "typing" in found.fix and "Python 3.8" in found.summary


def test_a_none_value_subscripted_is_not_an_old_python():
    found = explained("TypeError: 'NoneType' object is not subscriptable\n")
    assert "Python 3.9" not in found.summary


# wandb/sdk/lib/retry.py Retry.__call__: "{error prefix} ({exception class}), entering retry loop."
def test_wandb_retrying_a_network_error_says_offline_or_disabled():
    found = likely(
        "wandb: Network error (ConnectTimeout), entering retry loop.\n", "wandb_server_unreachable"
    )
    assert "ConnectTimeout" in found.summary and "WANDB_MODE=offline" in found.fix and "disabled" in found.fix


def test_another_program_entering_a_retry_loop_is_not_wandb():
    found = explained("bot: startup poll failed (timeout); entering retry loop\n")
    assert found.id != "log.wandb_server_unreachable"


# the unified lightning package (1.8+): pytorch_lightning's API under lightning.pytorch
def test_lightning_callbacks_is_lightning_pytorch_callbacks():
    found = explained("ModuleNotFoundError: No module named 'lightning.callbacks'\n")
    assert found.id == "log.dependency_version" and "lightning.pytorch.callbacks" in found.fix


def test_a_lightning_module_outside_the_pytorch_api_keeps_the_general_reading():
    found = explained("ModuleNotFoundError: No module named 'lightning.app.frontend'\n")
    assert "lightning.pytorch.app" not in found.fix


# the PyPI distribution of a module whose name differs (flash-attn's setup.py, NVIDIA's modulus-launch)
def test_a_missing_flash_attn_module_names_the_flash_attn_distribution():
    found = explained("ModuleNotFoundError: No module named 'flash_attn'\n")
    assert found.id == "log.broken_install" and "pip install flash-attn" in found.fix


def test_modulus_launch_names_its_own_package():
    found = explained("ModuleNotFoundError: No module named 'modulus.launch'\n")
    assert "modulus-launch" in found.fix


def test_a_module_named_as_its_distribution_keeps_its_name():
    found = explained("ModuleNotFoundError: No module named 'einops'\n")
    assert "pip install einops" in found.fix
