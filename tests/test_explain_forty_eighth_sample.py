"""The forty-eighth sample's train misses: each reading on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2217-2266)."""

from __future__ import annotations

import pytest
from explaining import explained as lead
from explaining import leads_with, likely_with

# aten TensorIterator::compute_types (torch 1.3-1.5), as VITA-Group/AutoGAN#11 posted it: two GPUs in one process
TWO_GPUS = (
    "Traceback (most recent call last):\n"
    '  File "/home/ht/projects/AutoGAN/functions.py", line 213, in train_controller\n'
    "    cur_batch_rewards = cur_batch_rewards.unsqueeze(-1) + args.entropy_coeff * entropies  # bs * 1\n"
    "RuntimeError: expected device cuda:0 but got device cuda:1\n"
)
# aten index_put_ (TensorAdvancedIndexing.cpp): x[idx] = value with value on the CPU
VALUE_ON_CPU = "RuntimeError: expected device cuda:0 but got device cpu for value tensor\n"


def test_an_operand_on_the_second_gpu_is_a_likely_device_mismatch_that_says_one_gpu_per_process():
    found = leads_with(TWO_GPUS, "device_mismatch", "likely", ["cuda:0 and cuda:1", "CUDA_VISIBLE_DEVICES"])
    assert found.details["alternatives"], found.summary


def test_a_value_on_the_cpu_written_into_a_gpu_tensor_is_a_device_mismatch():
    leads_with(VALUE_ON_CPU, "device_mismatch", "likely", ["cuda:0 and cpu"])


def test_rpc_asking_for_cuda_devices_is_not_a_device_mismatch():
    found = lead("ValueError: `set_devices` expect a list of CUDA devices, but got device type cpu.\n")
    assert found.id != "log.device_mismatch"


# detectron2/data/catalog.py _DatasetCatalog.register, as facebookresearch/detectron2#1637 posted it
REGISTERED = "AssertionError: Dataset 'train' is already registered!\n"
REGISTERED_IN_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "train_coco.py", line 34, in <module>\n'
    '    register_coco_instances("coco_2017_train", {}, TRAIN_JSON, TRAIN_PATH)\n'
    '  File "/home/ren/envs/yolov7/lib/python3.7/site-packages/detectron2/data/catalog.py", line 37, in register\n'
    "    assert name not in self, \"Dataset '{}' is already registered!\".format(name)\n"
    "AssertionError: Dataset 'coco_2017_train' is already registered!\n"
)


@pytest.mark.parametrize(
    ("log", "name"),
    [(REGISTERED, "'train'"), (REGISTERED_IN_TRACEBACK, "'coco_2017_train'")],
    ids=["line", "trace"],
)
def test_a_dataset_name_registered_twice_is_certain_and_says_remove_it(log, name):
    leads_with(log, "dataset_registered_twice", "certain", [name, "DatasetCatalog.remove", "registered"])


def test_another_registry_refusing_a_plugin_is_not_a_dataset_registered_twice():
    assert lead("RuntimeError: Plugin foo is already registered!\n").id != "log.dataset_registered_twice"


# librosa/util/utils.py valid_audio, as mozilla/TTS#360 posted it: a stereo file where one channel is needed
STEREO = (
    "librosa.util.exceptions.ParameterError: Invalid shape for monophonic audio: ndim=2, shape=(28666, 2)\n"
)


def test_stereo_audio_given_to_librosa_is_likely_bad_training_data_that_says_mono():
    found = likely_with(STEREO, "bad_training_data", "log.input_shape_mismatch")
    assert "mono" in found.fix and "(28666, 2)" in found.summary


def test_librosa_refusing_a_three_dimensional_array_is_not_stereo_data():
    found = lead(
        "librosa.util.exceptions.ParameterError: Invalid shape for audio: ndim=3, shape=(4, 2, 16000)\n"
    )
    assert found.id != "log.bad_training_data"


# colmap src/colmap/exe/sfm.cc RunMapper, as dunbar12138/DSNeRF#26 posted it from LLFF's imgs2poses.py
NO_MODEL = (
    "Need to run COLMAP\n"
    "Features extracted\n"
    "Features matched\n"
    "ERROR: failed to create sparse model\n"
    "Traceback (most recent call last):\n"
    '  File "imgs2poses.py", line 18, in <module>\n'
    "    gen_poses(args.scenedir, args.match_type)\n"
    "subprocess.CalledProcessError: Command '['/usr/local/bin/colmap', 'mapper']' returned non-zero exit status 1.\n"
)


def test_colmap_finding_no_model_is_likely_bad_training_data_that_says_more_overlapping_images():
    leads_with(NO_MODEL, "bad_training_data", "likely", ["images", "overlapping"])


def test_colmap_failing_to_open_its_database_is_not_bad_training_data():
    found = lead("ERROR: Failed to open database: unable to open database file\n")
    assert found.id != "log.bad_training_data"
