"""The fifty-third sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2467-2482)."""

from __future__ import annotations

import pytest
from explaining import certain, explained

pytestmark = pytest.mark.usefixtures("every_message_seen")

# torch/utils/cpp_extension.py _get_build_directory: os.makedirs of the extension's folder under the build root
# (TORCH_EXTENSIONS_DIR, else get_default_build_root(); <tempdir>/torch_extensions in older releases)
SHARED_EXTENSIONS_ROOT = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.8/os.py", line 223, in makedirs\n'
    "    mkdir(name, mode)\n"
    "PermissionError: [Errno 13] Permission denied: '/tmp/torch_extensions/fused_adam'\n"
)


def test_the_extensions_build_root_another_user_made_names_its_variable():
    found = certain(SHARED_EXTENSIONS_ROOT, "cache_dir_not_writable")
    assert "TORCH_EXTENSIONS_DIR" in found.fix and "torch's extension builds" in found.summary


def test_torch_hubs_download_folder_names_torch_home():
    # torch/hub.py download_url_to_file into _get_torch_home()/hub/checkpoints (a rank's prefix in front)
    found = certain(
        "[rank2]: PermissionError: [Errno 13] Permission denied: "
        "'/home/ana/.cache/torch/hub/checkpoints/resnet50-11ad3fa6.pth'\n",
        "cache_dir_not_writable",
    )
    assert "TORCH_HOME" in found.fix and "on rank 2" in found.summary


def test_inductors_cache_on_a_read_only_file_system():
    found = certain(
        "OSError: [Errno 30] Read-only file system: '/tmp/torchinductor_ana/fxgraph'\n",
        "cache_dir_not_writable",
    )
    assert "TORCHINDUCTOR_CACHE_DIR" in found.fix and "read-only" in found.summary


def test_a_dataset_folder_refused_is_not_a_cache_folder():
    found = explained("PermissionError: [Errno 13] Permission denied: '/data/imagenet/train/n01440764'\n")
    assert found.id != "log.cache_dir_not_writable"


def test_a_checkpoint_path_refused_is_not_a_cache_folder():
    found = explained(
        "PermissionError: [Errno 13] Permission denied: 'outputs/run3/checkpoint-500/model.pt'\n"
    )
    assert found.id != "log.cache_dir_not_writable"


# mmtrack/models/mot/deep_sort.py forward_train (0.10+); the backslash continuation keeps the indent in the message
DEEPSORT_TRAINED = (
    "NotImplementedError: Please train `detector` and `reid` models firstly, then "
    "                inference with SORT/DeepSORT.\n"
)


def test_mmtracking_refusing_to_train_deepsort_names_the_two_configs():
    found = certain(DEEPSORT_TRAINED, "library_option_conflict")
    assert "configs/reid" in found.fix and "configs/det" in found.fix and "SORT/DeepSORT" in found.summary


def test_mmtracking_0_6s_wording_names_tracktor_or_deepsort():
    # mmtrack/models/mot/deep_sort.py and tracktor.py up to 0.9: DeepSORT's copy of the message names Tracktor
    found = certain(
        "NotImplementedError: Please train `detector` and `reid` models first and                 "
        "inference with Tracktor.\n",
        "library_option_conflict",
    )
    assert "DeepSORT or Tracktor" in found.summary


def test_another_train_first_message_is_not_mmtrackings_refusal():
    found = explained("NotImplementedError: Please train the tokenizer first\n")
    assert found.id != "log.library_option_conflict"


# CUDA's cuda_fp16.hpp declares half2 arithmetic only for __CUDA_ARCH__ >= 530; torch's extension builder
# compiles for every visible GPU when TORCH_CUDA_ARCH_LIST is unset
OLD_GPU_VISIBLE = (
    '/home/ana/natten/src/natten1dav_cuda_kernel.cu(58): error: identifier "__hfma2" is undefined\n'
    '          detected during instantiation of "void natten1dav_cuda_forward_kernel_fp16<KS,NS,scalar_t>'
    '(int) [with KS=5, NS=2, scalar_t=c10::Half]"\n'
)


def test_a_half_intrinsic_missing_names_the_old_gpu_visible_to_the_build():
    found = explained(OLD_GPU_VISIBLE)
    assert found.id == "log.cuda_build" and "CUDA_VISIBLE_DEVICES" in found.fix and "visible" in found.fix


def test_a_double_atomic_missing_does_not_blame_a_visible_gpu_for_half_arithmetic():
    found = explained('kernel.cu(12): error: no instance of overloaded function "atomicAdd" matches\n')
    assert "Half arithmetic needs 5.3" not in found.fix
