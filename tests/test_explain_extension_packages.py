"""The compiled packages a training run installs beside torch (kinds/extension_packages.py, catalog/third_party.tsv):
PyG's extension packages, torchvision and torchaudio, bitsandbytes, tiny-cuda-nn, mmcv/mmengine, apex, flash-attn
and mamba's kernels, and torch.compile's Triton on an old GPU. Each message as its source prints it, values filled
in, with the kind and certainty it must give and a word its fix must hold (the package's own way to the build for
the torch installed); beside them, the lines that look alike and must not give that reading."""

from __future__ import annotations

import pytest
from explaining import explained, template

pytestmark = pytest.mark.usefixtures("every_message_seen")

SITE = "/home/ana/.venv/lib/python3.10/site-packages"

# (template id, values, text around it, kind, confidence, a word the summary or fix holds)
PRINTED = [
    # torch_scatter/__init__.py (and torch_sparse, torch_cluster, torch_spline_conv)
    (
        "third_party:pyg-compiled-with-different-cuda-versions",
        ("torch_sparse", "11", "8", "torch_sparse", "12", "1", "torch_sparse"),
        "RuntimeError: {}",
        "extension_import",
        "certain",
        "data.pyg.org/whl/torch-",
    ),
    # torchvision/extension.py before it compared the major version only
    (
        "third_party:torchvision-compiled-with-different-cuda-versions",
        ("10", "2", "10", "1"),
        "RuntimeError: {}",
        "extension_import",
        "certain",
        "CUDA 10.2",
    ),
    # torchaudio/_extension/utils.py
    (
        "third_party:torchaudio-compiled-with-different-cuda-versions",
        ("12.8", "12.9"),
        "RuntimeError: {}",
        "extension_import",
        "certain",
        "torchaudio 2.N",
    ),
    # torch_scatter/__init__.py: neither library of the package in its folder
    (
        "third_party:pyg-could-not-find-module-in-folder",
        ("_version", f"{SITE}/torch_scatter"),
        "ImportError: {}",
        "extension_import",
        "likely",
        "data.pyg.org",
    ),
    # torchvision/extension.py _assert_has_ops
    (
        "third_party:torchvision-couldnt-load-custom-ops",
        (),
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/torchvision/ops/boxes.py", line 40, in nms\n'
        "    _assert_has_ops()\n"
        "RuntimeError: {}",
        "extension_import",
        "certain",
        "torchvision 0.(N+15)",
    ),
    # ctypes on the CPU library bitsandbytes 0.35-0.42 fell back to
    (
        "third_party:bitsandbytes-cpu-library-undefined-symbol",
        (f"{SITE}/bitsandbytes/", "cget_col_row_stats"),
        "AttributeError: {}",
        "extension_import",
        "certain",
        "bitsandbytes>=0.43",
    ),
    # tinycudann/modules.py
    (
        "third_party:tinycudann-no-compatible-extension",
        ("86",),
        "OSError: {}",
        "extension_import",
        "certain",
        "TCNN_CUDA_ARCHITECTURES=86",
    ),
    # mmdet/__init__.py 3.x
    (
        "third_party:mmdet-mmengine-version-incompatible",
        ("0.7.0", "0.7.1", "1.0.0"),
        "AssertionError: {}",
        "dependency_version",
        "certain",
        "mmengine>=0.7.1,<1.0.0",
    ),
    # torch/_inductor/scheduler.py
    (
        "third_party:inductor-gpu-too-old-for-triton",
        ("Tesla P100-PCIE-16GB", "6", "0"),
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: {}",
        "triton_missing",
        "certain",
        "aot_eager",
    ),
]


def _reads_as(ident, values, around, kind, confidence, word):
    """Template ``ident`` filled with ``values``, printed inside ``around``: its lead is ``kind`` at
    ``confidence`` and names ``word``."""
    found = explained(around.replace("{}", template(ident, *values)) + "\n")
    assert (found.id, found.details["confidence"]) == (f"log.{kind}", confidence), found.summary
    assert word in found.summary + found.fix, found.fix


@pytest.mark.parametrize(("ident", "values", "around", "kind", "confidence", "word"), PRINTED)
def test_an_extension_package_message_gives_its_kind(ident, values, around, kind, confidence, word):
    _reads_as(ident, values, around, kind, confidence, word)


# a module nothing but the package's own build provides: that build missing, certain, with the package's way to it
BUILT = [
    ("mmcv._ext", "mmcv-full"),
    ("amp_C", "--cuda_ext"),
    ("fused_layer_norm_cuda", "--cuda_ext"),
    ("flash_attn_2_cuda", "--no-build-isolation"),
    ("selective_scan_cuda", "mamba-ssm"),
    ("detectron2._C", "detectron2.git"),
]


@pytest.mark.parametrize(("module", "word"), BUILT)
def test_a_module_only_its_build_provides_is_that_build_missing(module, word):
    found = explained(f"ModuleNotFoundError: No module named '{module}'\n")
    assert (found.id, found.details["confidence"]) == ("log.extension_import", "certain"), found.summary
    assert word in found.fix


# torch's own C++ name missing from one of these packages' libraries: the package's own way to the matching build
UNDEFINED = [
    (f"{SITE}/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so", "cxx11abi"),
    (f"{SITE}/selective_scan_cuda.cpython-310-x86_64-linux-gnu.so", "mamba_ssm-<version>"),
    (f"{SITE}/torch_scatter/_scatter_cuda.so", "https://data.pyg.org/whl/torch-"),
    (f"{SITE}/libpyg.so", "pip install pyg-lib -f"),
    (f"{SITE}/mmcv/_ext.cpython-310-x86_64-linux-gnu.so", "download.openmmlab.com/mmcv/dist"),
    (f"{SITE}/pytorch3d/_C.cpython-310-x86_64-linux-gnu.so", "pytorch3d.git@stable"),
    (f"{SITE}/torchaudio/lib/libtorchaudio.so", "torchaudio 2.N"),
]


@pytest.mark.parametrize(("library", "word"), UNDEFINED)
def test_a_package_built_for_another_torch_names_its_own_matching_build(library, word):
    found = explained(f"ImportError: {library}: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    assert (found.id, found.details["confidence"]) == ("log.extension_import", "certain"), found.summary
    assert word in found.fix, found.fix


# -- near misses ------------------------------------------------------------------------------------------------


def test_sglang_skipping_a_model_module_over_torchaudio_is_no_failure():
    """sglang logs the import error of a model module it skips and goes on: not the run's failure."""
    found = explained(
        "[2026-02-04 11:26:54] Ignore import error when loading sglang.srt.models.midashenglm: "
        + template("third_party:torchaudio-compiled-with-different-cuda-versions", "12.8", "12.9")
        + "\nLoading safetensors checkpoint shards:   0% Completed | 0/1 [00:00<?, ?it/s]\n"
    )
    assert found.id != "log.extension_import", found.summary


def test_torchvision_image_extension_warning_is_no_failure():
    """torchvision/io/image.py warns that image.so did not load ("you can ignore this warning"); the run goes on."""
    found = explained(
        f"{SITE}/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: "
        f"'{SITE}/torchvision/image.so: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev'If you don't plan on using "
        "image functionality from `torchvision.io`, you can ignore this warning. Otherwise, there might be "
        "something wrong with your environment.\n  warn(\nEpoch 1: loss 0.52\n"
    )
    assert found.id != "log.extension_import", found.summary


def test_tinycudann_lower_capability_warning_is_no_failure():
    found = explained(
        f"{SITE}/tinycudann/modules.py:53: UserWarning: tinycudann was built for lower compute capability (75) "
        "than the system's (86). Performance may be suboptimal.\n"
    )
    assert found.id != "log.extension_import", found.summary


def test_bitsandbytes_probing_its_cpu_library_is_not_certain():
    """bitsandbytes' CUDA setup prints the CPU library's missing symbol while it probes: not the failure itself."""
    found = explained(
        f"CUDA SETUP: Loading binary {SITE}/bitsandbytes/libbitsandbytes_cpu.so...\n"
        f"{SITE}/bitsandbytes/libbitsandbytes_cpu.so: undefined symbol: cadam32bit_grad_fp32\n"
    )
    assert found.details.get("confidence") != "certain", found.summary


@pytest.mark.parametrize("module", ["mmcv", "apex", "flash_attn", "detectron2"])
def test_the_package_itself_missing_is_still_a_package_not_installed(module):
    found = explained(f"ModuleNotFoundError: No module named '{module}'\n")
    assert found.id != "log.extension_import", found.summary


def test_triton_missing_keeps_its_own_reading():
    found = explained(
        template("third_party:inductor-triton-missing", "https://github.com/openai/triton") + "\n"
    )
    assert found.id == "log.triton_missing" and "no working Triton is installed" in found.summary


# -- builds that left the CUDA part out, libraries missing for torch's CUDA, and their look-alikes ----------------

LEFT_OUT = [
    # detectron2's csrc (and the repositories copying it), from a CUDA tensor's op
    (
        "third_party:extension-not-compiled-with-gpu-support",
        (),
        "Traceback (most recent call last):\n"
        '  File "/home/ana/detectron2/detectron2/layers/nms.py", line 20, in nms_rotated\n'
        "    return torch.ops.detectron2.nms_rotated(boxes, scores, iou_threshold)\n"
        "RuntimeError: {}",
        "extension_import",
        "certain",
        "FORCE_CUDA=1",
    ),
    (
        "third_party:mmcv-op-not-compiled-with-gpu-support",
        ("nms",),
        "RuntimeError: {}",
        "extension_import",
        "certain",
        "mmcv-full",
    ),
    (
        "third_party:mmcv-implementation-for-device-not-found",
        ("nms_impl", "cuda:0"),
        "RuntimeError: {}",
        "extension_import",
        "certain",
        "MMCV_WITH_OPS=1",
    ),
    # bitsandbytes 0.45+: no library for torch's CUDA (some releases log it and go on: likely)
    (
        "third_party:bitsandbytes-configured-cuda-binary-not-found",
        (f"{SITE}/bitsandbytes/libbitsandbytes_cuda130.so",),
        "RuntimeError: {}",
        "extension_import",
        "likely",
        "BNB_CUDA_VERSION",
    ),
    # tiny-cuda-nn's setup.py with no GPU visible to the build
    (
        "build_tools:tinycudann-unknown-compute-capability",
        (),
        "      OSError: {}",
        "cuda_build",
        "certain",
        "TCNN_CUDA_ARCHITECTURES=86",
    ),
]


@pytest.mark.parametrize(("ident", "values", "around", "kind", "confidence", "word"), LEFT_OUT)
def test_a_build_without_its_cuda_part_gives_its_kind(ident, values, around, kind, confidence, word):
    _reads_as(ident, values, around, kind, confidence, word)


def test_pyg_on_windows_missing_a_dll_names_its_wheels():
    found = explained(
        "OSError: Could not find module 'C:\\Users\\ana\\anaconda3\\envs\\g\\lib\\site-packages\\torch_sparse\\"
        "_convert_cuda.pyd' (or one of its dependencies). Try using the full path with constructor syntax.\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.extension_import", "likely"), found.summary
    assert "data.pyg.org" in found.fix


def test_a_cpu_op_missing_from_mmcv_is_not_a_build_without_cuda():
    """The registry's cpu line is a CUDA-only op given CPU tensors: not MMCV built without CUDA."""
    found = explained("RuntimeError: nms_rotated_impl: implementation for device cpu not found.\n")
    assert found.id != "log.extension_import", found.summary


def test_torch_without_cuda_keeps_its_own_reading():
    found = explained("AssertionError: Torch not compiled with CUDA enabled\n")
    assert found.id != "log.extension_import", found.summary


def test_torch_imported_from_its_source_tree_is_not_a_package_beside_it():
    """torch/__init__.py's own NameError for _C (torch run from its source folder) is no extension's build."""
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/pytorch/torch/__init__.py", line 300, in <module>\n'
        "    for name in dir(_C._VariableFunctions):\n"
        "NameError: name '_C' is not defined\n"
    )
    assert found.id != "log.extension_import", found.summary


def test_a_source_tree_without_its_build_is_named():
    """detectron2's INSTALL.md: build and install it, or run from another folder than the repository's root."""
    found = explained(
        "ImportError: "
        + template(
            "third_party:source-tree-cannot-import-c",
            "detectron2",
            "/home/ana/detectron2/detectron2/__init__.py",
        )
        + "\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.extension_import", "certain"), found.summary
    assert "cd to a different one" in found.fix


def test_another_packages_c_is_not_read_as_a_source_tree():
    found = explained("ImportError: cannot import name '_C' from 'mypkg' (/home/ana/mypkg/__init__.py)\n")
    assert not (found.id == "log.extension_import" and found.details["confidence"] == "certain"), (
        found.summary
    )


def test_xformers_operators_not_built_is_likely_its_build():
    found = explained(
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "     query       : shape=(2, 1024, 8, 64) (torch.float16)\n"
        "`cutlassF` is not supported because:\n"
        "    " + template("third_party:xformers-operator-wasnt-built") + "\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.extension_import", "likely"), found.summary
    assert "xformers.info" in found.fix


def test_xformers_refusing_a_cpu_tensor_is_not_its_build():
    found = explained(
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "     query       : shape=(1, 4096, 1, 512) (torch.float32)\n"
        "`cutlassF` is not supported because:\n"
        "    device=cpu (supported: {'cuda'})\n"
    )
    assert found.id != "log.extension_import", found.summary


def test_a_cuda_11_library_missing_under_flash_attn_names_its_build():
    found = explained(
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/flash_attn/flash_attn_interface.py", line 10, in <module>\n'
        "    import flash_attn_2_cuda as flash_attn_cuda\n"
        "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
    )
    assert (found.id, found.details["confidence"]) == ("log.extension_import", "likely"), found.summary
    assert "CUDA 11" in found.summary and "cxx11abi" in found.fix


@pytest.mark.parametrize(
    ("module", "install"),
    [
        ("apex", "git+https://github.com/NVIDIA/apex"),
        ("torch_scatter", "data.pyg.org/whl/torch-"),
        ("detectron2", "facebookresearch/detectron2.git"),
        ("mamba_ssm", "pip install mamba-ssm --no-build-isolation"),
    ],
)
def test_a_package_beside_torch_not_installed_names_where_it_comes_from(module, install):
    """PyPI's 'apex' is an unrelated package, detectron2 is not on PyPI, PyG's extensions come from its index."""
    found = explained(f"ModuleNotFoundError: No module named '{module}'\n")
    assert found.id == "log.broken_install" and install in found.fix, found.fix


@pytest.mark.parametrize(
    ("ident", "word"),
    [
        ("third_party:flash-attn-backward-head-dim-192", "2.5.5"),
        ("third_party:flash-attn-backward-head-dim-256-dropout", "dropout to 0"),
    ],
)
def test_flash_attn_backward_refusing_a_head_dim_on_this_gpu(ident, word):
    found = explained("RuntimeError: " + template(ident) + "\n")
    assert (found.id, found.details["confidence"]) == ("log.attention_implementation", "certain"), (
        found.summary
    )
    assert word in found.fix


def test_flash_attn_readme_limit_is_no_failure():
    """The README's line of the same limit, quoted in an install log, is no refusal."""
    found = explained(
        "All head dimensions up to 256. Head dim > 192 backward requires A100/A800 or H100/H800.\nSuccessfully "
        "installed flash-attn-2.5.8\n"
    )
    assert found.id != "log.attention_implementation", found.summary


PYG_WARNING = (
    f"{SITE}/torch_geometric/typing.py:54: UserWarning: "
    + template(
        "third_party:pyg-issue-occurred-while-importing",
        "pyg-lib",
        f"{SITE}/libpyg.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb",
    )
    + "\n  warnings.warn(f\"An issue occurred while importing 'pyg-lib'. \"\n"
)


def test_pyg_disabling_an_extension_is_no_failure_of_its_own():
    """PyG warns and goes on without the extension: a run that then fails for another reason is read for that one."""
    found = explained(
        PYG_WARNING + "Epoch: 001, Loss: 1.9461\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity; "
        "20.10 GiB already allocated)\n"
    )
    assert found.id == "log.cuda_oom", found.summary


def test_pyg_sampler_without_its_backend_after_the_warning_is_the_extension():
    text = (
        "ImportError: "
        + template("third_party:pyg-sampler-requires-pyg-lib-or-torch-sparse", "NeighborSampler")
        + "\n"
    )
    found = explained(PYG_WARNING + text)
    assert (found.id, found.details["confidence"]) == ("log.extension_import", "certain"), found.summary
    assert "data.pyg.org" in found.fix
    alone = explained(text)  # not installed, or not loaded: the log does not say which
    assert (alone.id, alone.details["confidence"]) == ("log.extension_import", "likely"), alone.summary
