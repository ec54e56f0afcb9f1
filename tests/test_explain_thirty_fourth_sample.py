"""The thirty-fourth sample's train miss and the ROCm device-visibility messages beside it: each on its lines as
the source prints them, filled in as the threads posted them, and a near-miss that must not read as it
(tests/fixtures/corpus/SAMPLING.md, files 1517-1522)."""

from __future__ import annotations

import io

import pytest

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def lead(text: str):
    """The first finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


SEED_FRAMES = (
    'File "/path/to/torch/random.py", line 46, in manual_seed\n'
    "  torch.cuda.manual_seed_all(seed)\n"
    'File "/path/to/torch/cuda/random.py", line 131, in manual_seed_all\n'
    "  _lazy_call(cb, seed_all=True)\n"
    'File "/path/to/torch/cuda/__init__.py", line 249, in _lazy_call\n'
)


def test_seeding_every_gpu_cut_before_its_error_is_likely_a_torch_release_bug():
    # pytorch/pytorch#140318 (ROCR_VISIBLE_DEVICES ignored when torch counted GPUs; fixed by pytorch#142292)
    found = lead(SEED_FRAMES)
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "manual_seed_all" in found.summary
    assert "ROCR_VISIBLE_DEVICES" in found.fix and "2.7" in found.fix


def test_the_generators_index_error_names_variables_changed_in_the_process():
    found = lead(
        '  File "/opt/venv/lib/python3.10/site-packages/torch/cuda/random.py", line 127, in cb\n'
        "    default_generator = torch.cuda.default_generators[i]\n"
        "IndexError: tuple index out of range\n"
    )
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "gpu_selection" in str(found.details)


def test_another_backends_manual_seed_all_is_not_read_as_the_cuda_count():
    found = lead(
        '  File "/usr/local/lib/python3.9/site-packages/torch_npu/npu/random.py", line 90, in manual_seed_all\n'
        "    _lazy_call(cb, seed_all=True)\n"
    )
    assert "seeding every GPU" not in found.summary


def test_hip_listing_more_gpus_than_rocr_is_certain_gpu_selection():
    # torch/cuda/__init__.py _parse_visible_devices
    found = lead("RuntimeError: HIP_VISIBLE_DEVICES contains more devices than ROCR_VISIBLE_DEVICES\n")
    assert found.id == "log.gpu_selection" and found.details["confidence"] == "certain"
    assert "ROCR_VISIBLE_DEVICES=2,3 HIP_VISIBLE_DEVICES=0,1" in found.fix


def test_the_variables_printed_by_a_launcher_are_not_a_failure():
    found = lead("ROCR_VISIBLE_DEVICES=0,1 HIP_VISIBLE_DEVICES=0 python train.py\n")
    assert found.id != "log.gpu_selection"


def test_a_gpu_hip_visible_devices_hides_is_invalid_device_ordinal():
    found = lead("RuntimeError: device 3 is not visible (HIP_VISIBLE_DEVICES=0,1)\n")
    assert found.id == "log.invalid_device_ordinal" and found.details["confidence"] == "certain"


def test_a_visible_gpu_message_without_the_refusal_is_not_an_ordinal():
    assert lead("HIP_VISIBLE_DEVICES=0,1 is set for rank 0\n").id != "log.invalid_device_ordinal"
