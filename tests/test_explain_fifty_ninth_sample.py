"""The fifty-ninth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2767-2783)."""

from __future__ import annotations

from explaining import certain, explained


def likely(text: str, kind: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "likely", found.summary
    return found


# vits monotonic_align/__init__.py: from .monotonic_align.core import maximum_path_c (the Cython build's output)
def test_vits_monotonic_align_not_built_says_to_build_it_in_place():
    found = certain(
        '  File "/work/vits/monotonic_align/__init__.py", line 4, in <module>\n'
        "    from .monotonic_align.core import maximum_path_c\n"
        "ModuleNotFoundError: No module named 'monotonic_align.monotonic_align'\n",
        "extension_import",
    )
    assert "build_ext --inplace" in found.fix and "monotonic_align/monotonic_align" in found.fix


def test_a_copy_under_another_package_is_the_same_extension():
    found = certain(
        "ModuleNotFoundError: No module named 'piper_train.vits.monotonic_align.monotonic_align.core'\n",
        "extension_import",
    )
    assert "build_monotonic_align.sh" in found.fix


def test_a_bare_monotonic_align_is_a_folder_or_package_not_the_build():
    found = explained("ModuleNotFoundError: No module named 'monotonic_align'\n")
    assert found.id != "log.extension_import"


def test_a_failed_build_in_the_log_leads_for_monotonic_align():
    found = explained(
        "error: command '/usr/bin/gcc' failed with exit code 1\n"
        "ModuleNotFoundError: No module named 'monotonic_align.core'\n"
    )
    assert found.details["confidence"] != "certain" or found.id != "log.extension_import"


# LightZero lzero/policy/alphazero.py: import mcts_alphazero from ctree_alphazero/build (make.sh, CMake)
def test_lightzero_alphazero_ctree_not_built_names_make_sh():
    found = likely("ModuleNotFoundError: No module named 'mcts_alphazero'\n", "extension_import")
    assert "make.sh" in found.fix and "ctree_alphazero" in found.fix and "cmake" in found.fix


def test_another_alphazero_module_is_not_the_lightzero_tree():
    found = explained("ModuleNotFoundError: No module named 'mcts_alphaZero'\n")
    assert "ctree_alphazero" not in found.fix


# torch/utils/cpp_extension.py: the just-in-time build's .so in torch_extensions, named by the loader
def test_a_jit_plugin_missing_from_torch_extensions_without_the_importerror_prefix():
    found = explained(
        "/root/.cache/torch_extensions/py38_cu111/bias_act_plugin/3cb5-tesla-v100/bias_act_plugin.so: cannot open "
        "shared object file: No such file or directory\n"
    )
    assert found.id == "log.extension_import", found.summary
    assert "just-in-time build" in found.summary and "ninja" in found.fix


def test_another_library_that_cannot_be_opened_is_not_a_jit_build():
    found = explained("OSError: libgomp.so.1: cannot open shared object file: No such file or directory\n")
    assert "just-in-time" not in found.summary


# dm_control/mujoco/index.py struct_indexer: getattr(struct, field_name) on the installed mujoco's MjModel
def test_dm_control_asking_mujoco_for_a_field_it_lacks_is_the_release_pair():
    found = likely(
        '  File "/env/lib/python3.10/site-packages/dm_control/mujoco/index.py", line 629, in struct_indexer\n'
        "    attr = getattr(struct, field_name)\n"
        "AttributeError: 'MjModel' object has no attribute 'eq_active'\n",
        "dependency_version",
    )
    assert "dm_control" in found.summary and "eq_active" in found.summary
    assert "pip show dm_control mujoco" in found.fix


def test_a_mujoco_field_read_by_the_script_itself_is_its_release_or_a_typo():
    found = likely(
        "    x = model.geom_rbound\nAttributeError: 'MjModel' object has no attribute 'geom_rbound'\n",
        "dependency_version",
    )
    assert "dm_control" not in found.summary and "misspelt" in found.summary


def test_another_class_without_the_field_is_not_mujoco():
    found = explained("AttributeError: 'Model' object has no attribute 'eq_active'\n")
    assert "MuJoCo" not in found.summary


# pysc2/run_configs/lib.py RunConfig.map_data: the map file not under <SC2PATH>/Maps
def test_a_smac_map_not_copied_into_starcraft_says_where_to_copy_it():
    found = likely("ValueError: Map 'SMAC_Maps/3m.SC2Map' not found.\n", "broken_install")
    assert "SMAC_Maps" in found.fix and "$SC2PATH/Maps" in found.fix


def test_pysc2_4_names_the_maps_folder_it_looked_in():
    found = likely(
        "ValueError: Map Melee/Simple64.SC2Map not found in /home/u/StarCraftII/Maps.\n", "broken_install"
    )
    assert "/home/u/StarCraftII/Maps" in found.summary


def test_another_map_not_found_is_not_starcraft():
    found = explained("KeyError: Map 'level3' not found.\n")
    assert "StarCraft" not in found.summary
