"""The table of names each release of a library has (catalog/api_history.tsv, written by benchmarks/api_history.py
from the released wheels) and what `explain` says on CPython's line for a name the installed release lacks: the
release that removed or added it, the pin or the upgrade, the replacement. Nothing is downloaded here."""

from __future__ import annotations

import io
import re
import sys
import tarfile
from pathlib import Path

import pytest
from explaining import called_from, explained, leads_with, made_wheel

from torchdoctor.explain.kinds import api_history
from torchdoctor.explain.kinds.release_pins import below, spelled

pytestmark = pytest.mark.usefixtures("every_message_seen")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import api_history as generator  # noqa: E402

SITE = "/opt/conda/lib/python3.11/site-packages"


# --- one line per library, as CPython (or NumPy) prints it ------------------------------------------------------


def test_numpy_2_removal_as_numpy_prints_it():
    # numpy/__init__.py __getattr__ (2.0+), the name from numpy/_expired_attrs_2_0.py
    leads_with(
        "AttributeError: `np.float_` was removed in the NumPy 2.0 release. Use `np.float64` instead.",
        "dependency_version",
        "certain",
        ["numpy.float_", "numpy 2.0", "numpy<2.0", "np.float64"],
    )


def test_numpy_name_2_0_dropped_without_a_note():
    # np.product is not in __expired_attributes__: numpy 2 raises the plain module AttributeError
    leads_with(
        "AttributeError: module 'numpy' has no attribute 'product'. Did you mean: 'prod'?",
        "dependency_version",
        "certain",
        ["numpy.product", "removed in numpy 2.0", "numpy<2.0"],
    )


def test_transformers_removed_adamw_with_the_torch_replacement():
    leads_with(
        f"ImportError: cannot import name 'AdamW' from 'transformers' ({SITE}/transformers/__init__.py)",
        "dependency_version",
        "certain",
        ["removed in transformers 4.50", "transformers<4.50", "torch.optim.AdamW"],
    )


def test_transformers_model_added_later_says_upgrade():
    leads_with(
        "ImportError: cannot import name 'Qwen2ForCausalLM' from 'transformers' "
        "(/usr/local/lib/python3.8/dist-packages/transformers/__init__.py)",
        "dependency_version",
        "certain",
        ["came in transformers 4.37", "older", "transformers>=4.37"],
    )


def test_huggingface_hub_cached_download():
    leads_with(
        f"ImportError: cannot import name 'cached_download' from 'huggingface_hub' ({SITE}/huggingface_hub/__init__.py)",
        "dependency_version",
        "certain",
        ["huggingface_hub<0.26", "hf_hub_download"],
    )


def test_datasets_load_metric():
    leads_with(
        f"ImportError: cannot import name 'load_metric' from 'datasets' ({SITE}/datasets/__init__.py)",
        "dependency_version",
        "certain",
        ["datasets<3.0", "evaluate.load"],
    )


def test_peft_int8_preparation():
    leads_with(
        f"ImportError: cannot import name 'prepare_model_for_int8_training' from 'peft' ({SITE}/peft/__init__.py)",
        "dependency_version",
        "certain",
        ["removed in peft 0.10", "peft<0.10"],
    )


def test_accelerate_name_added_later():
    leads_with(
        f"ImportError: cannot import name 'DataLoaderConfiguration' from 'accelerate' ({SITE}/accelerate/__init__.py)",
        "dependency_version",
        "certain",
        ["came in accelerate 0.28", "accelerate>=0.28"],
    )


def test_torch_module_removed():
    leads_with(
        "ModuleNotFoundError: No module named 'torch.distributed.pipeline'",
        "dependency_version",
        "certain",
        ["the module torch.distributed.pipeline", "removed in torch 2.4", "torch<2.4"],
    )


def test_torch_name_added_says_upgrade_from_its_index():
    leads_with(
        "ImportError: cannot import name 'PrepareModuleInputOutput' from 'torch.distributed.tensor.parallel' "
        f"({SITE}/torch/distributed/tensor/parallel/__init__.py)",
        "dependency_version",
        "certain",
        ["came in torch 2.8", "torch>=2.8", "--index-url", "nightly"],
    )


def test_hand_written_changes_still_lead():
    # api_changes.py's own text for NumPy 1.24's aliases comes first (likely, as before: np.float was served by
    # numpy's module __getattr__ from 1.20 to 1.23, which the table does not read)
    leads_with(
        "AttributeError: module 'numpy' has no attribute 'float'",
        "dependency_version",
        "likely",
        ["NumPy 1.24", "numpy<1.24"],
    )


# --- near misses: the same CPython lines for other causes ---------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        # a name no release read ever had (a typo)
        f"ImportError: cannot import name 'AdamWW' from 'transformers' ({SITE}/transformers/__init__.py)",
        "ModuleNotFoundError: No module named 'torch.distributed.pipelinez'",
        # a file of the user's that shadows the package
        "ImportError: cannot import name 'AdamW' from 'transformers' (/home/me/project/transformers.py)",
        "ImportError: cannot import name 'load_metric' from 'datasets' (unknown location)",
        # one letter off horovod.torch.broadcast_object (0.19+): no horovod release read had it
        "AttributeError: module 'horovod.torch' has no attribute 'broadcast_objects'",
    ],
)
def test_other_readings_are_not_certain(line):
    found = explained(line + "\n")
    assert not (found.id == "log.dependency_version" and found.details.get("confidence") == "certain"), (
        found.summary
    )
    assert "came in" not in found.summary and "was removed in" not in found.summary


@pytest.mark.parametrize(
    "line",
    [
        "ImportError: cannot import name 'AdamW' from partially initialized module 'transformers' (most likely due "
        f"to a circular import) ({SITE}/transformers/__init__.py)",
        "AttributeError: partially initialized module 'numpy' has no attribute 'product' (most likely due to a "
        "circular import)",
    ],
)
def test_circular_import_is_never_a_release(line):
    found = explained(line + "\n")
    assert "was removed in" not in found.summary and "came in" not in found.summary, found.summary
    assert not (found.id == "log.dependency_version" and found.details.get("confidence") == "certain")


def test_a_torch_distributed_name_is_only_likely():
    # torch/distributed/__init__.py binds its names only when is_available(): a build without it lacks them too
    found = leads_with(
        "AttributeError: module 'torch.distributed' has no attribute 'all_gather_into_tensor'",
        "dependency_version",
        "likely",
        ["came in torch", "torch>="],
    )
    assert "log.backend_unavailable" in found.details["alternatives"]


def test_shadowing_reads_the_path():
    assert api_history.shadowed("transformers", "/home/me/transformers/__init__.py")
    assert api_history.shadowed("datasets", "unknown location")
    assert not api_history.shadowed(
        "transformers", r"C:\Python311\Lib\site-packages\transformers\__init__.py"
    )
    assert not api_history.shadowed("transformers", None)


# --- the table ------------------------------------------------------------------------------------------------


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def test_table_is_small_and_well_formed():
    assert api_history.TABLE.stat().st_size < 1_000_000
    table = api_history.load()
    assert set(table) == set(api_history.PACKAGES.split("|"))
    for package, (releases, rows) in table.items():
        assert releases == sorted(releases, key=_release) and len(releases) >= 8, (
            package
        )  # lightning: 1.8-2.5
        assert rows, package
        for row in rows:
            assert row.package == package and row.module.split(".")[0] == package, row
            assert row.name == "" or row.name.isidentifier(), row
            assert row.added or row.removed, row  # in every release read: not a change, not kept
            for version in (row.added, row.last, row.removed):
                assert version == "" or version in releases, row
            assert bool(row.last) == bool(row.removed), row
            if row.removed:
                assert releases.index(row.removed) == releases.index(row.last) + 1, row
                if row.added:
                    assert _release(row.added) <= _release(row.last), row


def test_lookup_reads_rows():
    row = api_history.lookup("huggingface_hub", "cached_download")
    assert row is not None and row.removed.startswith("0.26") and row.replacement == "hf_hub_download"
    assert api_history.lookup("transformers", "AutoModel") is None  # in every release read
    assert api_history.lookup("torch._six").removed.startswith("2.0")


# --- the generator's static reading, on a wheel made here ------------------------------------------------------


def _wheel(tmp_path: Path, files: dict[str, str]) -> Path:
    return made_wheel(tmp_path, "lib-1.0-py3-none-any.whl", files)


def test_generator_reads_lazy_dicts_stars_and_stubs(tmp_path):
    wheel = _wheel(
        tmp_path,
        {
            "lib/__init__.py": (
                "from typing import TYPE_CHECKING\n"
                "from .core import *\n"
                "_import_structure = {'models': ['LazyModel']}\n"
                "_import_structure['extra'] = ['ExtraThing']\n"
                "_import_structure['models'].append('OtherModel')\n"
                "if TYPE_CHECKING:\n    from .checked_only import NotAtRunTime\n"
                "try:\n    from .fast import Fast\nexcept ImportError:\n    Fast = None\n"
                "def helper():\n    from .inside import NotBound\n"
            ),
            "lib/core.py": "__all__ = ['public']\npublic = 1\nhidden = 2\n",
            "lib/__init__.pyi": "from typing import Literal\nfrom typing import Final as Final\nfrom .core import stub_only\n",
            "lib/sub/__init__.py": "",
            "lib/sub/deep/module.py": "",
            "lib/tests/test_x.py": "",
        },
    )
    found = generator.Names(generator.Wheel(wheel), "lib", [])
    names, _ = found.of("lib")
    assert {
        "public",
        "LazyModel",
        "ExtraThing",
        "OtherModel",
        "Fast",
        "Final",
        "stub_only",
        "helper",
    } <= names
    assert not {"hidden", "NotAtRunTime", "NotBound", "Literal"} & names
    assert {"models", "extra", "core"} <= names  # the lazy module's submodules, and one a star import bound
    assert generator.Wheel(wheel).modules("lib") == {"lib", "lib.core", "lib.sub"}


# --- the torch family and the training libraries (one line each, as CPython prints it) --------------------------


def test_torchvision_functional_tensor_removed_in_0_17_names_its_replacement():
    # basicsr's degradations.py imports the module torchvision 0.17 removed
    leads_with(
        called_from(
            f"{SITE}/basicsr/data/degradations.py",
            "from torchvision.transforms.functional_tensor import rgb_to_grayscale",
            "No module named 'torchvision.transforms.functional_tensor'",
            "ModuleNotFoundError",
        ),
        "dependency_version",
        "certain",
        ["removed in torchvision 0.17", "torchvision<0.17", "torchvision.transforms.functional"],
    )


def test_torchtext_dataset_added_later_says_upgrade():
    # (torchtext.legacy's removal keeps api_changes.py's own fix, with the torch each torchtext was built for)
    leads_with(
        f"ImportError: cannot import name 'CoLA' from 'torchtext.datasets' ({SITE}/torchtext/datasets/__init__.py)",
        "dependency_version",
        "certain",
        ["came in torchtext 0.13", "torchtext>=0.13"],
    )


def test_diffusers_pipeline_added_later_says_upgrade():
    leads_with(
        "ImportError: cannot import name 'FluxPipeline' from 'diffusers' "
        "(/usr/local/lib/python3.10/dist-packages/diffusers/__init__.py)",
        "dependency_version",
        "certain",
        ["came in diffusers 0.30", "diffusers>=0.30"],
    )


def test_deepspeed_module_read_from_its_source_tars():
    leads_with(
        "ModuleNotFoundError: No module named 'deepspeed.accelerator'",
        "dependency_version",
        "certain",
        ["came in deepspeed 0.7", "deepspeed>=0.7"],
    )


def test_trl_trainer_added_later():
    leads_with(
        f"ImportError: cannot import name 'GRPOTrainer' from 'trl' ({SITE}/trl/__init__.py)",
        "dependency_version",
        "certain",
        ["came in trl 0.14", "trl>=0.14"],
    )


def test_timm_layers_came_after_a_gap_in_its_minors():
    # timm has no 0.7 or 0.8 release read (0.6.13 -> 0.9.16): "after 0.6, by 0.9", never "in 0.9"
    found = leads_with(
        "ModuleNotFoundError: No module named 'timm.layers'",
        "dependency_version",
        "certain",
        ["after 0.6, by timm 0.9", "timm>=0.9"],
    )
    assert "came in timm" not in found.summary


def test_timm_patch_releases_are_pinned_as_patches():
    releases = api_history.load()["timm"][0]
    assert spelled(releases, "1.0.9") == "1.0.9" and spelled(releases, "0.6.13") == "0.6"
    assert below(releases, "1.0.9", "1.0.12") == "==1.0.9"


def test_torchaudio_name_set_at_import_is_only_said_removed():
    # torchaudio 0.8-2.1 set torchaudio.info with setattr at import: no release is named for its arrival
    found = leads_with(
        "AttributeError: module 'torchaudio' has no attribute 'info'",
        "dependency_version",
        "certain",
        ["removed in torchaudio 2.9", "torchaudio<2.9"],
    )
    assert "came in" not in found.summary


def test_lightning_fabric_came_in_1_9():
    leads_with(
        "ModuleNotFoundError: No module named 'lightning.fabric'",
        "dependency_version",
        "certain",
        ["came in lightning 1.9", "lightning>=1.9"],
    )


def test_a_name_no_diffusers_release_had_is_left_alone():
    found = explained(
        f"ImportError: cannot import name 'FluxPipline' from 'diffusers' ({SITE}/diffusers/__init__.py)\n"
    )
    assert "0.30" not in found.summary + found.fix
    assert found.details.get("confidence") != "certain"


def test_a_project_folder_named_like_the_library_is_not_the_release():
    found = explained(
        "ImportError: cannot import name 'FluxPipeline' from 'diffusers' (/home/ana/project/diffusers/__init__.py)\n"
    )
    assert "0.30" not in found.summary + found.fix
    assert found.details.get("confidence") != "certain"


def test_generator_reads_a_source_tar_and_submodules_bound_by_import(tmp_path):
    tar = tmp_path / "lib-1.0.tar.gz"
    with tarfile.open(tar, "w:gz") as archive:
        for inside, text in {
            "lib-1.0/src/lib/__init__.py": (
                "from .backend import helper\nfrom otherlib import reexported, used_here\n"
                "__all__ = ['helper', 'reexported']\n"
            ),
            "lib-1.0/src/lib/backend.py": "def helper():\n    pass\n",
            "lib-1.0/setup.py": "",
        }.items():
            data = text.encode()
            info = tarfile.TarInfo(inside)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    wheel = generator.Wheel(tar)
    assert set(wheel.files) == {"lib/__init__.py", "lib/backend.py", "setup.py"}
    names, _ = generator.Names(wheel, "lib", []).of("lib")
    # another library's name counts only where the module's __all__ re-exports it
    assert {"helper", "backend", "reexported"} <= names and "used_here" not in names
    assert generator.version_of(tar) == "1.0"
    assert generator.version_of(tmp_path / "sentence-transformers-2.2.2.tar.gz") == "2.2.2"


def test_pytorch_lightning_cli_moved_names_the_new_module():
    leads_with(
        "ImportError: cannot import name 'LightningCLI' from 'pytorch_lightning.utilities.cli' "
        f"({SITE}/pytorch_lightning/utilities/cli.py)",
        "dependency_version",
        "certain",
        ["pytorch_lightning<1.9", "pytorch_lightning.cli.LightningCLI"],
    )


def test_pytorch_lightning_metrics_removed_in_1_5():
    leads_with(
        "ModuleNotFoundError: No module named 'pytorch_lightning.metrics'",
        "dependency_version",
        "certain",
        ["removed in pytorch_lightning 1.5", "pytorch_lightning<1.5", "torchmetrics"],
    )


def test_bitsandbytes_paged_optimizer_came_in_0_39():
    leads_with(
        "AttributeError: module 'bitsandbytes.optim' has no attribute 'PagedAdamW8bit'",
        "dependency_version",
        "certain",
        ["came in bitsandbytes 0.39", "bitsandbytes>=0.39"],
    )


def test_sentence_transformers_trainer_came_in_3_0():
    leads_with(
        f"ImportError: cannot import name 'SentenceTransformerTrainer' from 'sentence_transformers' "
        f"({SITE}/sentence_transformers/__init__.py)",
        "dependency_version",
        "certain",
        ["came in sentence_transformers 3.0", "sentence_transformers>=3.0"],
    )


def test_torchmetrics_auc_removed_in_0_11():
    leads_with(
        f"ImportError: cannot import name 'AUC' from 'torchmetrics' ({SITE}/torchmetrics/__init__.py)",
        "dependency_version",
        "certain",
        ["removed in torchmetrics 0.11", "torchmetrics<0.11"],
    )


def test_diffusers_module_moved_names_where_it_went():
    # an older training script imports the UNet from the module diffusers 0.29 removed
    leads_with(
        called_from(
            "/home/ana/project/train_dreambooth.py",
            "from diffusers.models.unet_2d_condition import UNet2DConditionModel",
            "No module named 'diffusers.models.unet_2d_condition'",
            "ModuleNotFoundError",
        ),
        "dependency_version",
        "certain",
        ["removed in diffusers 0.29", "diffusers<0.29", "diffusers.models.unets.unet_2d_condition"],
    )


# horovod publishes only source tars (read as deepspeed's are); 0.13 to 0.28, no 0.17 was released


def test_horovod_broadcast_object_came_in_0_19():
    # horovod#376: an example called hvd.broadcast_object before any release had it (0.19 added it)
    leads_with(
        called_from(
            "/home/ana/project/resnet.py",
            "state_dict = hvd.broadcast_object(optimizer.state_dict(), root_rank=0)",
            "module 'horovod.torch' has no attribute 'broadcast_object'",
            "AttributeError",
        ),
        "dependency_version",
        "certain",
        ["came in horovod 0.19", "horovod>=0.19"],
    )


def test_horovod_reducescatter_came_in_0_25():
    leads_with(
        f"ImportError: cannot import name 'reducescatter' from 'horovod.torch' ({SITE}/horovod/torch/__init__.py)",
        "dependency_version",
        "certain",
        ["came in horovod 0.25", "horovod>=0.25"],
    )


def test_horovod_run_package_removed_in_0_20():
    # 0.20 renamed the horovod.run package to horovod.runner and bound horovod.run to its run() function
    leads_with(
        "ModuleNotFoundError: No module named 'horovod.run.common'; 'horovod.run' is not a package",
        "dependency_version",
        "certain",
        ["was removed in horovod 0.20", "horovod<0.20", "0.19.5 is the last release with it"],
    )


def test_the_fix_names_the_name_it_pins_or_upgrades_for():
    removed = explained(
        f"ImportError: cannot import name 'AdamW' from 'transformers' ({SITE}/transformers/__init__.py)\n"
    )
    assert "pin the last release with transformers.AdamW" in removed.fix
    added = explained(
        "ImportError: cannot import name 'Qwen2ForCausalLM' from 'transformers' "
        "(/usr/local/lib/python3.8/dist-packages/transformers/__init__.py)\n"
    )
    assert "Upgrade to a release that has transformers.Qwen2ForCausalLM" in added.fix


def test_webdataset_shardlist_renamed_as_the_train_file_prints_it():
    # corpus train 7568 (webdataset/webdataset#219): code from the 0.1 multinode example under webdataset 2; the
    # maintainer: "ShardList is now called SimpleShardList". The release tables read 0.1.62 (the last with it) and
    # 0.1.73 (without it)
    log = (
        "AttributeError: module 'webdataset' has no attribute 'ShardList'\n[...]\n"
        "ValueError: you need to add an explicit nodesplitter to your input pipeline for multi-node training\n[...]\n"
        "TypeError: __init__() got an unexpected keyword argument 'splitter'"
    )
    leads_with(
        log, "dependency_version", "certain", ["webdataset.ShardList", "0.1.73", "wds.SimpleShardList"]
    )


def test_webdataset_shardlist_in_a_traceback():
    # the line as CPython prints it under a script's frame
    leads_with(
        'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n'
        "    urls = wds.ShardList(urls, splitter=wds.split_by_node)\n"
        "AttributeError: module 'webdataset' has no attribute 'ShardList'",
        "dependency_version",
        "certain",
        ["webdataset==0.1.62", "wds.SimpleShardList"],
    )


def test_webdataset_shardlists_replacement_names_the_releases_its_node_split_needs():
    # the wheels: 0.1.73's and 0.1.103's WebDataset() take no nodesplitter= (back in 0.2.4's class), 0.1.73 has no
    # DataPipeline or split_by_node (0.1.103 has): the replacement says from which release each form works
    fix = explained("AttributeError: module 'webdataset' has no attribute 'ShardList'\n").fix
    assert (
        "wds.split_by_node, ...) from 0.1.103" in fix and "nodesplitter=wds.split_by_node) from 0.2.4" in fix
    ), fix
