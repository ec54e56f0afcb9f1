"""The table of names each release of a library has (catalog/api_history.tsv, written by benchmarks/api_history.py
from the released wheels) and what `explain` says on CPython's line for a name the installed release lacks: the
release that removed or added it, the pin or the upgrade, the replacement. Nothing is downloaded here."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from explaining import explained, leads_with, made_wheel

from torchdoctor.explain.kinds import api_history

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
        assert releases == sorted(releases, key=_release) and len(releases) >= 10, package
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
    assert generator.Wheel(wheel).modules("lib") == {"lib", "lib.core", "lib.sub"}
