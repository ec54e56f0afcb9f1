"""The table of which release installs where (catalog/wheel_tags.tsv, written by benchmarks/wheel_tags.py from
PyPI's JSON API) and what `explain` says on pip's "Could not find a version that satisfies the requirement X==V
(from versions: ...)": the Pythons and platforms V has wheels for, and the interpreter the versions pip did list
point to. Lines as pip prints them (pip/_internal/resolution/resolvelib/factory.py); nothing is downloaded here."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from explaining import explained, leads_with

from torchdoctor.explain.kinds import wheel_tags

pytestmark = pytest.mark.usefixtures("every_message_seen")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import wheel_tags as generator  # noqa: E402

NOT_FOUND = "ERROR: Could not find a version that satisfies the requirement {} (from versions: {})"
NO_MATCH = "ERROR: No matching distribution found for {}"


def pip_refusal(requirement: str, versions: str) -> str:
    return NOT_FOUND.format(requirement, versions) + "\n" + NO_MATCH.format(requirement)


# --- the interpreter, from the versions pip did list ---------------------------------------------------------------


def test_old_torch_pin_on_a_python_it_predates():
    # torch 1.13.1 has wheels for 3.7-3.11; the releases pip lists start at 2.2, the first with 3.12 wheels
    leads_with(
        pip_refusal("torch==1.13.1", "2.2.0, 2.2.1, 2.2.2, 2.3.0, 2.3.1"),
        "no_matching_wheel",
        "certain",
        ["Python 3.7-3.11", "Python 3.12", "python 3.11"],
    )


def test_another_package_of_the_table_decided_by_its_wheels():
    # triton ships wheels only (no sdist): 2.0.0's Pythons against those every listed release has
    found = leads_with(
        pip_refusal("triton==2.0.0", "3.1.0, 3.2.0, 3.3.0"),
        "no_matching_wheel",
        "certain",
        ["triton 2.0.0 has wheels for Python", "pip install 'triton=="],
    )
    assert "3.12" in found.summary


def test_the_logs_python_decides_without_a_list():
    found = leads_with(
        "Requirement already satisfied: numpy in ./venv/lib/python3.12/site-packages (1.26.4)\n"
        + NOT_FOUND.format("torch==2.0.1", "none"),
        "no_matching_wheel",
        "certain",
        ["Python 3.8-3.11", "the log's Python is 3.12"],
    )
    assert "2.0.1" in found.summary


def test_pips_own_requires_python_note_decides():
    ignored = (
        "ERROR: Ignored the following versions that require a different python version: "
        "1.21.2 Requires-Python >=3.7,<3.11; 1.21.3 Requires-Python >=3.7,<3.11"
    )
    leads_with(
        ignored + "\n" + pip_refusal("numpy==1.21.3", "1.22.0, 1.26.4, 2.0.0"),
        "no_matching_wheel",
        "certain",
        ["numpy 1.21.3 requires Python >=3.7,<3.11"],
    )


# --- near misses: the table does not decide --------------------------------------------------------------------


def test_a_version_listed_for_this_python_is_not_a_python_mismatch():
    # 2.3.0 is among the versions pip found: this interpreter has it, so the list names no Python
    found = explained(pip_refusal("triton==3.1.0", "3.1.0, 3.2.0") + "\n")
    assert found.id != "log.no_matching_wheel" or found.details["confidence"] == "likely"
    assert "wheel for this interpreter" not in found.summary


@pytest.mark.parametrize(
    "requirement, versions, word",
    [
        # a release with an sdist: pip lists it for any Python, so the list names no interpreter
        ("xformers==0.0.23", "0.0.22, 0.0.23.post1", "mirror"),
        # a release with a wheel for every Python 3 and none listed at all: the index, not the interpreter
        ("accelerate==0.30.1", "none", "index was not reached"),
    ],
)
def test_what_the_table_cannot_decide_is_only_likely(requirement, versions, word):
    found = leads_with(pip_refusal(requirement, versions), "no_matching_wheel", "likely", [word])
    assert "interpreter" not in found.summary


def test_a_package_with_an_sdist_names_no_interpreter():
    # flash-attn uploads only an sdist: pip lists it for every Python, the list says nothing about this one
    found = explained(pip_refusal("flash-attn==2.5.8", "none") + "\n")
    assert found.id != "log.no_matching_wheel" or found.details["confidence"] == "likely"


def test_a_release_that_never_was_is_not_this_kind():
    # numpy 9.9 does not exist: a wrong pin, not a missing build for this interpreter
    assert explained(pip_refusal("numpy==9.9", "1.26.4, 2.0.0") + "\n").id != "log.no_matching_wheel"


def test_a_package_not_in_the_table_is_not_this_kind():
    found = explained(pip_refusal("mysteriouspkg==1.0.0", "0.9.0, 0.9.1") + "\n")
    assert found.id != "log.no_matching_wheel"


# --- the table itself -----------------------------------------------------------------------------------------


def test_table_holds_each_package_and_known_python_ranges():
    table = wheel_tags.load()
    assert set(generator.PACKAGES) <= set(table)
    assert wheel_tags.python_range(wheel_tags.release("torch", "1.13.1").pythons) == "3.7-3.11"
    assert "cp312" in wheel_tags.release("torch", "2.2.0").pythons
    assert "cp312" not in wheel_tags.release("torch", "2.1.2").pythons
    assert wheel_tags.release("flash-attn", "2.5.8").sdist


def test_torch_wheels_on_pypi_carry_their_cuda():
    assert wheel_tags.release("torch", "2.1.0").cuda == "12.1"
    assert wheel_tags.release("torch", "1.13.1").cuda == "11.7"
    assert {r.version for r in wheel_tags.torch_with_cuda("11")} >= {"1.13.1", "2.0.1"}


def test_the_requirement_pattern_names_the_releases_of_the_table():
    pattern = re.compile(rf"(?:{wheel_tags.released_pins()})(?![\w.\-])")
    assert pattern.fullmatch("flash_attn==2.5.8") and pattern.fullmatch("numpy==1.26.4")
    assert not pattern.fullmatch("numpy==9.9") and not pattern.fullmatch("numpy==1.26.40")


def test_the_generator_reads_tags_from_file_names():
    files = [
        {"filename": "torch-2.2.0-cp312-cp312-manylinux1_x86_64.whl", "packagetype": "bdist_wheel"},
        {"filename": "torch-2.2.0-cp38-none-macosx_11_0_arm64.whl", "packagetype": "bdist_wheel"},
        {"filename": "torch-2.2.0-cp313-cp313t-win_amd64.whl", "packagetype": "bdist_wheel"},
        {"filename": "tokenizers-0.19.1-cp37-abi3-manylinux_2_17_aarch64.whl", "packagetype": "bdist_wheel"},
    ]
    assert generator.python_tags(files) == ["py3", "cp38", "cp312"]
    assert generator.platforms(files) == ["linux_x86_64", "linux_aarch64", "macos_arm64", "win_amd64"]


def test_pips_final_version_wording_is_read_the_same():
    # pip 26 says "final version" when its release control allows only final releases for the project
    leads_with(
        "ERROR: Could not find a final version that satisfies the requirement torch==2.1.2 (from versions: "
        "2.5.0, 2.5.1, 2.6.0)",
        "no_matching_wheel",
        "certain",
        ["Python 3.8-3.11", "Python 3.12 or 3.13"],
    )


# --- which release of a package that pins torch goes with a torch ------------------------------------------------

RESOLVER = """ERROR: Cannot install torch==2.1.0 and torchvision==0.17.0 because these package versions have conflicting dependencies.

The conflict is caused by:
    The user requested torch=={}
    torchvision 0.17.0 depends on torch==2.2.0

To fix this you could try to:
1. loosen the range of package versions you've specified
2. remove package versions to allow pip attempt to solve the dependency conflict

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts
"""


def test_resolver_conflict_names_the_torchvision_built_for_the_requested_torch():
    found = explained(RESOLVER.format("2.1.0"))
    assert "The torchvision release built for torch 2.1.0 is 0.16.0" in found.fix, found.fix


def test_resolver_conflict_on_the_same_torch_names_no_other_release():
    # near miss: the pin asks for the torch torchvision needs (the conflict is elsewhere)
    found = explained(RESOLVER.format("2.2.0"))
    assert "release built for torch" not in found.fix


def test_torchvision_ops_missing_names_the_torchvision_for_the_logs_torch():
    found = explained(
        "PyTorch version: 2.4.1+cu121\nRuntimeError: operator torchvision::nms does not exist\n"
    )
    assert found.id == "log.extension_import"
    assert "torchvision 0.19.1" in found.fix, found.fix


def test_torchvision_ops_missing_without_a_torch_version_names_no_release():
    found = explained("RuntimeError: operator torchvision::nms does not exist\n")
    assert "For this log's torch" not in found.fix


def test_the_table_pairs_releases_as_their_metadata_says():
    assert wheel_tags.built_for_torch("torchvision", "2.1.0").version == "0.16.0"
    assert wheel_tags.built_for_torch("torchaudio", "2.4.1").version == "2.4.1"
    assert wheel_tags.built_for_torch("torchvision", "9.9.9") is None


def test_the_list_of_an_intel_mac_names_the_platform():
    # torch 2.3 dropped macOS x86-64 wheels: an Intel Mac's pip lists releases up to 2.2.2 (pip's refusal for
    # torch is this kind whatever the reason; which reason is the table's reading of the list)
    found = leads_with(
        pip_refusal("torch==2.3.0", "2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0, 2.2.1, 2.2.2"),
        "no_matching_wheel",
        "certain",
        ["wheel for macos_x86_64", "the last torch with one: 2.2.2", "torch==2.2.2"],
    )
    assert "interpreter" not in found.summary


XFORMERS = """WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.1.0+cu121 with CUDA 1201 (you have {})
    Python  3.10.13 (you have 3.10.13)
  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)
  Memory-efficient attention, SwiGLU, sparse and more won't be available.
"""


def test_xformers_built_for_another_torch_names_the_release_for_this_one():
    found = explained(XFORMERS.format("2.2.1+cu121"))
    assert found.id == "log.extension_import"
    assert "xformers 0.0.25 (its wheel requires torch==2.2.1)" in found.fix, found.fix


def test_xformers_for_a_torch_no_release_pins_names_none():
    # near miss: a torch no xformers wheel on PyPI requires (a nightly): no release is named
    found = explained(XFORMERS.format("2.7.0.dev20250101+cu126"))
    assert "its wheel requires" not in found.fix


def test_a_wheel_for_another_platform_says_what_its_name_is_for():
    leads_with(
        "ERROR: torch-2.1.0+cu121-cp310-cp310-linux_x86_64.whl is not a supported wheel on this platform.",
        "no_matching_wheel",
        "certain",
        ["it is for CPython 3.10 on linux_x86_64"],
    )
    assert wheel_tags.file_tags("not-a-wheel.tar.gz") == ""


def test_uvs_abi_tag_refusal_says_what_the_release_has():
    # uv (crates/uv-resolver/src/pubgrub/report.rs): the pinned release has no wheel for this interpreter's tag
    leads_with(
        "  × No solution found when resolving dependencies:\n"
        "  ╰─▶ Because torch==2.1.0 has no wheels with a matching Python ABI tag (e.g., `cp313`) and you require "
        "torch==2.1.0, we can conclude that your requirements are unsatisfiable.",
        "no_matching_wheel",
        "certain",
        ["e.g. cp313", "torch 2.1.0 has wheels for Python 3.8-3.11", "uv venv --python 3.11"],
    )


def test_uvs_abi_tag_refusal_for_a_package_not_in_the_table_names_no_release():
    found = explained(
        "  ╰─▶ Because mysteriouspkg==1.0 has no wheels with a matching Python ABI tag (e.g., `cp313`) and you "
        "require mysteriouspkg==1.0, we can conclude that your requirements are unsatisfiable.\n"
    )
    assert "has wheels for Python" not in found.summary
