"""A fix names what the log and the release tables already say: the release to pin, the arguments that replace a
removed one, the name a library renamed. Each class on the train log's line as posted (tests/fixtures/corpus/
train, cited) and on a second wording or value of the same class."""

from __future__ import annotations

from explaining import explained as lead  # the lead finding on a pasted log

SITE = "/opt/conda/lib/python3.10/site-packages"


# --- a removed name: the pin names the release it installs (the last patch before the removal) ---


def test_a_removed_name_pin_names_the_last_release_with_it():
    # train/1235.txt line 1 (YanjieZe/3D-Diffusion-Policy#91: pip install huggingface_hub==0.25.2 fixed it)
    found = lead(
        "ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
        "(~/mambaforge/envs/dp3/lib/python3.8/site-packages/huggingface_hub/__init__.py)\n"
    )
    assert found.id == "log.dependency_version"
    assert "pip install 'huggingface_hub<0.26' (0.25.2 is the last release with it)" in found.fix


def test_another_package_and_wording_names_its_own_last_release():
    # train/1324.txt's removal (datasets 3.0 dropped load_metric) as CPython's attribute line
    found = lead("AttributeError: module 'datasets' has no attribute 'load_metric'\n")
    assert found.id == "log.dependency_version"
    assert "pip install 'datasets<3.0' (2.21.0 is the last release with it)" in found.fix


def test_a_name_that_came_in_a_release_names_no_last_release():
    # torch.cuda.OutOfMemoryError came in 1.13 (train/1279.txt): an upgrade, nothing was removed
    found = lead("AttributeError: module 'torch.cuda' has no attribute 'OutOfMemoryError'\n")
    assert found.id == "log.dependency_version" and "1.13" in found.fix
    assert "last release with it" not in found.fix


# --- a removed keyword whose value the deprecation spread over two ---


def test_modelcheckpoint_filepath_is_split_into_dirpath_and_filename():
    # train/1574.txt line 1 (Lightning-AI/pytorch-lightning#6608: use dirpath and filename)
    found = lead(
        "When filepath is used as an argument in ModelCheckpoint it says TypeError: __init__() got an "
        "unexpected keyword argument 'filepath'\n"
    )
    assert found.id == "log.dependency_version"
    assert "dirpath= (its folder) and filename=" in found.fix
    assert "(the same value)" not in found.fix
    assert "split into dirpath and filename" in found.summary
    assert "pip install 'pytorch-lightning<1.2' (1.1.8 is the last release with it)" in found.fix


def test_the_qualified_python_310_call_reads_the_same():
    found = lead(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    ckpt = ModelCheckpoint(filepath='checkpoints/{epoch}', monitor='val_loss')\n"
        "TypeError: ModelCheckpoint.__init__() got an unexpected keyword argument 'filepath'\n"
    )
    assert found.id == "log.dependency_version"
    assert "dirpath= (its folder) and filename=" in found.fix


def test_a_keyword_renamed_one_for_one_keeps_its_rename():
    # Lightning 1.6 removed ModelCheckpoint(period=...) for every_n_epochs: one name, no split
    found = lead("TypeError: ModelCheckpoint.__init__() got an unexpected keyword argument 'period'\n")
    assert found.id == "log.dependency_version"
    assert "Pass every_n_epochs= instead of period=" in found.fix and "dirpath" not in found.fix


# --- a name flash-attn 2.0 renamed ---


def test_flash_attn_unpadded_func_names_its_flash_attn_2_name():
    # train/1675.txt line 1 (princeton-nlp/LLM-Shearing#33)
    found = lead(
        "AttributeError: module 'flash_attn.flash_attn_interface' has no attribute 'flash_attn_unpadded_func'\n"
    )
    assert found.id == "log.dependency_version"
    assert "renamed flash_attn_varlen_func" in found.summary
    assert "Call flash_attn_varlen_func instead (the same arguments)" in found.fix
    assert "pip install 'flash-attn<2'" in found.fix


def test_the_import_line_from_an_installed_package_names_the_upgrade_of_the_importer():
    # train/1673.txt line 1 (IEIT-Yuan/Yuan-2.0#30: upgrading transformer-engine fixed it), the sentence around it
    found = lead(
        "在进行与训练脚本的时候会出现ImportError: cannot import name 'flash_attn_unpadded_func' from "
        "'flash_attn.flash_attn_interface' (/usr/local/lib/python3.10/dist-packages/flash_attn-2.0.0.post1-py3.10-"
        "linux-x86_64.egg/flash_attn/flash_attn_interface.py)的报错\n"
    )
    assert found.id == "log.dependency_version"
    assert "an older transformer-engine" in found.fix and "flash_attn_varlen_func" in found.fix


def test_the_packed_variant_names_its_own_new_name():
    found = lead(
        "ImportError: cannot import name 'flash_attn_unpadded_qkvpacked_func' from "
        f"'flash_attn.flash_attn_interface' ({SITE}/flash_attn/flash_attn_interface.py)\n"
    )
    assert found.id == "log.dependency_version"
    assert "Call flash_attn_varlen_qkvpacked_func instead" in found.fix


def test_a_flash_attn_name_that_was_not_renamed_is_not_read_as_the_rename():
    found = lead(
        "ImportError: cannot import name 'flash_attn_func' from "
        f"'flash_attn.flash_attn_interface' ({SITE}/flash_attn/flash_attn_interface.py)\n"
    )
    assert "varlen" not in found.fix


def test_a_renamed_keyword_is_not_said_to_take_the_same_value():
    # accelerate 0.16 renamed Accelerator's fp16= to mixed_precision=, whose values are "no", "fp16", "bf16": the
    # old fix said "(the same value)", and fp16=True passed as mixed_precision=True is refused
    found = lead(
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 12, in <module>\n'
        "    accelerator = Accelerator(fp16=True)\n"
        "TypeError: Accelerator.__init__() got an unexpected keyword argument 'fp16'\n"
    )
    assert found.id == "log.dependency_version"
    assert "Pass mixed_precision= instead of fp16=" in found.fix
    assert "the same value" not in found.fix
    assert "a renamed keyword may take others" in found.fix


def test_a_missing_module_not_in_the_table_is_not_sent_to_pip_by_its_name_alone():
    # train/1285.txt (microsoft/Swin-Transformer#37): "No module named 'amp'" from `from apex import amp`, a
    # submodule of apex's install; PyPI's "amp" is another project, and the fix said "pip install amp"
    found = lead(
        'when I "from apex import amp", the error is "ModuleNotFoundError: No module named \'amp\'".\n'
    )
    assert found.id == "log.broken_install"
    assert "pip install amp." not in found.fix
    assert "where that is its name on PyPI" in found.fix
    # a module the table knows keeps its plain install line
    named = lead("ModuleNotFoundError: No module named 'flash_attn'\n")
    assert "pip install flash-attn" in named.fix and "where that is its name" not in named.fix
