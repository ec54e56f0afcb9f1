"""The compiled packages a training run installs beside torch, in their own load checks and with their own pairings.

The packages a training run builds or installs beside torch (flash-attn, mamba-ssm and causal-conv1d, PyG's
torch_scatter/torch_sparse/torch_cluster/torch_spline_conv and pyg-lib, torchvision and torchaudio, mmcv,
detectron2, pytorch3d, NVIDIA apex, bitsandbytes, tiny-cuda-nn, spconv, vllm) ship a compiled part built for one
torch and one CUDA. What their own import-time checks print when that part does not fit, each catalogued in
``catalog/third_party.tsv`` and read by build.py's ``extension_import``:

- PyG's extension packages (``torch_scatter/__init__.py``, the same lines in torch_sparse, torch_cluster and
  torch_spline_conv) compare ``torch.version.cuda`` with the CUDA their ``_version_cuda`` library was built with:
  "Detected that PyTorch and torch_scatter were compiled with different CUDA versions. PyTorch has CUDA version
  11.3 and torch_scatter has CUDA version 10.2. Please reinstall the torch_scatter that matches your PyTorch
  install."; torchvision's ``extension.py`` said the same before 0.8 ("CUDA Version=11.7"), torchaudio's
  ``_extension/utils.py`` says it with "whereas". Certain: the versions are printed.
- torch_scatter and its siblings raise "Could not find module '_version_cpu' in <folder>" when neither their CPU
  nor CUDA library is in the installed folder (an sdist build that failed half way, a wheel of another platform):
  likely, as a broken install says it too.
- torchvision's ``extension.py`` ``_assert_has_ops``: "Couldn't load custom C++ ops. This can happen if your
  PyTorch and torchvision versions are incompatible, or if you had errors while compiling torchvision from
  source." Its ``_C`` was not loaded: a torchvision of another torch release (torch 2.N pairs with torchvision
  0.(N+15), torch 1.M with 0.(M+1)). Certain.
- bitsandbytes 0.35-0.42 (``cextension.py``) fell back to ``libbitsandbytes_cpu.so`` when its CUDA setup found no
  library for the CUDA it detected; the GPU functions the optimizers and 8-bit layers call are then missing, and
  ctypes says "libbitsandbytes_cpu.so: undefined symbol: cget_col_row_stats" (cadam32bit_grad_fp32,
  cquantize_blockwise_fp16, ...). Certain: the CPU library was loaded on a run that needs the GPU one.
- tiny-cuda-nn's ``tinycudann/modules.py`` imports the ``_<cc>_C`` module built for the GPU's compute capability
  (``TCNN_CUDA_ARCHITECTURES`` at build time, else the GPU of the machine that built it) and raises "Could not find
  compatible tinycudann extension for compute capability 86." when none of its builds is for this GPU. Certain.
- The modules nothing but the package's own build provides (``mmcv._ext``: mmcv-full 1.x / mmcv 2.x's ops, absent
  from the ``mmcv`` 1.x / ``mmcv-lite`` builds; NVIDIA apex's ``amp_C``, ``fused_layer_norm_cuda``..., built only
  with ``--cpp_ext --cuda_ext``; ``flash_attn_2_cuda``, ``selective_scan_cuda``, ``causal_conv1d_cuda``;
  ``detectron2._C`` and ``pytorch3d._C`` of a source tree never built): "No module named 'mmcv._ext'" is that
  build missing, certain (launchers.py reads any other missing module as a package not installed); apex's
  ``syncbn`` only likely (apex guards its own import of it, and repositories name their own module so too).

- A build that left the CUDA part out: detectron2's csrc (and maskrcnn-benchmark's, DCNv2's, the repositories that
  copy them) raises "Not compiled with GPU support" when a CUDA tensor reaches an op compiled without ``WITH_CUDA``
  (setup.py found no GPU or no toolkit, and FORCE_CUDA was not set); mmcv-full 1.0-1.2 "nms is not compiled with
  GPU support", and from 1.4 its device registry's "nms_impl: implementation for device cuda:0 not found.".
  Certain. (GroundingDINO only warns "Failed to load custom C++ ops. Running on CPU mode Only!" when its ``_C``
  does not import, and its CUDA forward then stops on CPython's "name '_C' is not defined"; not read: torch's own
  ``torch/__init__.py`` prints the same NameError when torch is imported from its source tree, torch_shadowed.)
- bitsandbytes 0.45 on (``cextension.py``): "Configured CUDA binary not found at .../libbitsandbytes_cuda130.so":
  the release ships no library for torch's CUDA (a torch for a newer CUDA than the release knows). Likely: releases
  that can run without it log it and go on.
- Windows (CPython's ctypes): "Could not find module '...\\torch_sparse\\_convert_cuda.pyd' (or one of its
  dependencies)" for PyG's, torchvision's or torchaudio's own modules: likely, the wheel of another torch or CUDA.

- A source tree imported without its build: "cannot import name '_C' from 'detectron2' (.../detectron2/__init__.py)"
  (detectron2's INSTALL.md, Common Installation Issues: build and install it, or run from another folder than the
  repository's root), pytorch3d's and maskrcnn-benchmark's alike. Certain.
- xformers lists why each attention operator refused under "No operator found for
  `memory_efficient_attention_forward`"; "operator wasn't built - see `python -m xformers.info`" is its kernels
  missing from the build loaded (a wheel for another torch). Likely: the other operators' reasons may be the
  script's own (a CPU tensor, a dtype).
- A CUDA runtime library of one major release missing (``libcudart.so.11.0: cannot open shared object file``) while
  one of these packages' modules loads: the package was built for another CUDA than torch's. Likely.

- PyG 2.3 on imports pyg-lib, torch-scatter, torch-sparse... as optional (``torch_geometric/typing.py``) and only
  warns "An issue occurred while importing 'pyg-lib'. Disabling its usage. Stacktrace: ...undefined symbol: ..."
  when one does not load; the run goes on, so that warning is no finding (build.py rejects it). What then needs
  it fails: "'NeighborSampler' requires either 'pyg-lib' or 'torch-sparse'", certain with the warning in the log
  (the builds for another torch), likely without (not installed).

An undefined symbol of torch's own C++ names (build.py) in one of these packages' libraries is the same package
built for another torch; `explain` names the package's own way to the build that matches (``PAIRING``).
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = (
    "third_party:pyg-compiled-with-different-cuda-versions",
    "third_party:torchvision-compiled-with-different-cuda-versions",
    "third_party:torchaudio-compiled-with-different-cuda-versions",
    "third_party:pyg-could-not-find-module-in-folder",
    "third_party:torchvision-couldnt-load-custom-ops",
    "third_party:bitsandbytes-cpu-library-undefined-symbol",
    "third_party:tinycudann-no-compatible-extension",
    "third_party:extension-not-compiled-with-gpu-support",
    "third_party:mmcv-op-not-compiled-with-gpu-support",
    "third_party:mmcv-implementation-for-device-not-found",
    "third_party:bitsandbytes-configured-cuda-binary-not-found",
    "third_party:source-tree-cannot-import-c",
    "third_party:xformers-operator-wasnt-built",
    "third_party:pyg-sampler-requires-pyg-lib-or-torch-sparse",
)
ANCHORS = (
    "were compiled with different CUDA versions. PyTorch has CUDA",
    "_cpu' in ",
    "Couldn't load custom C++ ops.",
    "libbitsandbytes_cpu.so: undefined symbol",
    "Could not find compatible tinycudann extension",
    "compiled with GPU support",
    ": implementation for device ",
    "Configured CUDA binary not found at",
    "cannot import name '_C' from '",
    "operator wasn't built - see `python -m xformers.info`",
    "requires either 'pyg-lib' or 'torch-sparse'",
    "(or one of its dependencies). Try using the full path",
)

# the modules only the package's own build provides (CPython's ModuleNotFoundError quotes them), and the package
APEX_BUILT = (
    "apex_C|amp_C|syncbn|fused_layer_norm_cuda|mlp_cuda|fused_dense_cuda|fused_weight_gradient_mlp_cuda|"
    "distributed_adam_cuda|distributed_lamb_cuda|xentropy_cuda|focal_loss_cuda|fused_adam_cuda|fused_lamb_cuda"
)
BUILT_MODULE = rf"mmcv\._ext|detectron2\._C|pytorch3d\._C|flash_attn_2_cuda|selective_scan_cuda|causal_conv1d_cuda|{APEX_BUILT}"
MODULE_ANCHORS = tuple(
    f"No module named '{name}'"
    for name in (
        "mmcv._ext",
        "detectron2._C",
        "pytorch3d._C",
        "flash_attn_2_cuda",
        "selective_scan_cuda",
        "causal_conv1d_cuda",
        "amp_C",
        "apex_C",
        "fused_layer_norm_cuda",
        "fused_dense_cuda",
        "mlp_cuda",
        "syncbn",
        "xentropy_cuda",
        "fused_weight_gradient_mlp_cuda",
    )
)

_PYG = r"torch_scatter|torch_sparse|torch_cluster|torch_spline_conv"
MATCH = R(
    # (not sglang's "Ignore import error when loading <model>: ...": a model module it skips, the run goes on)
    r"^(?![^\n]*Ignore import error)[^\n]*?Detected that PyTorch and \w{1,40} were compiled with different CUDA "
    r"versions\. PyTorch has CUDA|"
    rf"Could not find module '_\w{{1,40}}_cpu' in \S{{0,300}}(?:{_PYG})|"
    r"Couldn't load custom C\+\+ ops\. This can happen if your PyTorch and torchvision|"
    r"libbitsandbytes_cpu\.so: undefined symbol: \w|"
    r"Could not find compatible tinycudann extension for compute capability|"
    r"\b(?:Not|[\w]{1,60} is not) compiled with GPU support|"
    r"Configured CUDA binary not found at |cannot import name '_C' from '(?:detectron2|pytorch3d|maskrcnn_benchmark)'|"
    r"operator wasn't built - see .python -m xformers\.info. for more info|requires either 'pyg-lib' or 'torch-sparse'|\w{1,60}: implementation for device cuda(?::\d{1,2})? not found|"
    rf"Could not find module '[^'\n]{{0,300}}(?:{_PYG}|pyg_lib|torchvision|torchaudio)[^'\n]{{0,200}}' \(or one of its "
    r"dependencies\)|"
    rf"No module named '(?:{BUILT_MODULE})'"
)
FACTS = (
    R(
        r"Detected that PyTorch and (?P<paired_package>\w{1,40}) were compiled with different CUDA versions\. "
        r"PyTorch has CUDA [Vv]ersion[= ]?(?P<paired_torch_cuda>\d{1,3}(?:\.\d{1,3}){0,2}) (?:and|whereas) \w{1,40} "
        r"has CUDA [Vv]ersion[= ]?(?P<paired_cuda>\d{1,3}(?:\.\d{1,3}){0,2})"
    ),
    R(rf"Could not find module '(?P<pyg_library>_\w{{1,40}})_cpu' in \S{{0,300}}?(?P<pyg_package>{_PYG})\b"),
    R(r"(?P<tv_no_ops>Couldn't load custom C\+\+ ops)\. This can happen if your PyTorch and torchvision"),
    R(r"libbitsandbytes_cpu\.so: undefined symbol: (?P<bnb_cpu_symbol>\w{1,80})"),
    # the failure itself (ctypes' AttributeError when the optimizer or layer calls it), not the line bitsandbytes'
    # CUDA setup prints while it probes its libraries
    R(r"(?P<bnb_cpu_error>AttributeError): \S{0,300}libbitsandbytes_cpu\.so: undefined symbol"),
    R(r"Could not find compatible tinycudann extension for compute capability (?P<tcnn_cc>\d{1,3})"),
    R(rf"No module named '(?P<built_module>{BUILT_MODULE})'"),
    # the csrc of detectron2, maskrcnn-benchmark and the repositories copying it (#ifdef WITH_CUDA ... #else
    # AT_ERROR("Not compiled with GPU support")); mmcv-full 1.x's "nms is not compiled with GPU support"
    R(r"\b(?P<no_gpu_build>Not|(?P<no_gpu_op>\w{1,60}) is not) compiled with GPU support"),
    # mmcv 1.4+/2.x's device registry (ops/csrc/common/pytorch_device_registry.hpp): no CUDA kernel registered
    R(r"(?P<mmcv_op>\w{1,60}): implementation for device (?P<mmcv_device>cuda(?::\d{1,2})?) not found"),
    # detectron2's INSTALL.md ("ImportError: cannot import name '_C'"): a source tree imported without its build
    R(
        r"cannot import name '_C' from '(?P<tree_c>detectron2|pytorch3d|maskrcnn_benchmark)' \((?P<tree_init>[^)\n]{1,300})\)"
    ),
    # xformers/ops/fmha: an operator's reason, listed under "No operator found for `memory_efficient_attention_...`"
    R(r"(?P<xf_not_built>operator wasn't built) - see .python -m xformers\.info. for more info"),
    # torch_geometric/sampler/neighbor_sampler.py: neither sampling backend imported
    R(r"'(?P<pyg_sampler>\w{1,60})' requires either 'pyg-lib' or 'torch-sparse'"),
    # a CUDA runtime library of another major release than torch's, missing when a package's module loads it
    R(
        r"(?P<cuda_lib>lib(?:cudart|cublas|cublasLt|cusparse|cufft|curand|cusolver|nvrtc)\.so\.(?P<cuda_lib_major>\d{2}))(?:\.\d)*: cannot open shared object file"
    ),
    R(
        r"Configured CUDA binary not found at (?P<bnb_binary>\S{0,300}libbitsandbytes_cuda(?P<bnb_cuda>\d{2,4})"
        r"\.(?:so|dll|dylib))"
    ),
    R(
        rf"Could not find module '(?P<win_module>[^'\n]{{0,300}}?(?P<win_package>{_PYG}|pyg_lib|torchvision|"
        r"torchaudio)[^'\n]{0,200})' \(or one of its dependencies\)"
    ),
)
# GroundingDINO's ms_deform_attn.py warns when ``from groundingdino import _C`` failed (and then runs on until a
# GPU forward calls _C): with it in the log, the NameError is that build missing
CONTEXT = (
    # torch_geometric/typing.py: an optional extension that did not import, disabled (its error in the Stacktrace)
    (
        "Disabling its usage",
        R(r"An issue occurred while importing '(?P<pyg_disabled>[\w-]{1,40})'\. Disabling its usage"),
    ),
)


def decided(facts: dict, ctx_facts: dict | None = None) -> bool:
    """Whether the package's own check establishes the cause: the two CUDA versions printed, torchvision's ops
    not loaded, bitsandbytes' CPU library failing a call, tiny-cuda-nn's builds for other GPUs, a built module missing."""
    return bool(
        facts.get("paired_cuda")
        or facts.get("tv_no_ops")
        or facts.get("bnb_cpu_error")
        or facts.get("tcnn_cc")
        # apex's "syncbn" is a name other repositories give their own synchronized BatchNorm module too (apex's
        # own imports of it are guarded: apex/parallel/__init__.py warns and goes on), so it alone is likely
        or (facts.get("built_module") and facts.get("built_module") != "syncbn")
        or facts.get("no_gpu_build")
        or facts.get("mmcv_device")
        or facts.get("tree_c")
        or (facts.get("pyg_sampler") and (ctx_facts or {}).get("pyg_disabled"))
    )


# how each package gets the build that matches the torch installed, from its own install guide / release assets
_FLASH_WHEEL = (
    "its setup.py downloads the release wheel named for the torch, CUDA major and C++ ABI it finds at install "
    "time ({wheel}-<version>+cu12torch2.4cxx11abiFALSE-cp310-cp310-linux_x86_64.whl), and a torch changed since "
    "then does not fit it. Reinstall it now that torch is what it will stay: pip uninstall -y {name} && pip install "
    "{name} --no-build-isolation --no-cache-dir (it picks the wheel for this torch, or builds from source: "
    "MAX_JOBS=4 and the nvcc of torch's CUDA), or download the wheel of the GitHub release whose name matches "
    "python -c 'import torch; print(torch.__version__, torch.version.cuda, torch._C._GLIBCXX_USE_CXX11_ABI)'"
)
_PYG_WHEEL = (
    "PyG publishes {name} wheels per torch release and CUDA at https://data.pyg.org/whl/torch-<X.Y>.0+<cuXYZ|cpu>"
    ".html (the index is named for the torch minor release with .0, for every patch of it): pip uninstall -y "
    "{name} && pip install {name} -f https://data.pyg.org/whl/torch-2.1.0+cu121.html with your torch.__version__ "
    "and torch.version.cuda (cu121 for 12.1); --no-cache-dir keeps pip from reusing a wheel built for the old "
    "torch. PyG 2.3 and later run most models without torch_scatter/torch_sparse: uninstalling them is also a fix"
)
_TORCH_PAIRS = (
    "torchvision and torchaudio are built for one torch release each: torch 2.N pairs with torchvision 0.(N+15) "
    "and torchaudio 2.N (2.5 with 0.20 and 2.5, 2.1 with 0.16 and 2.1), torch 1.M with torchvision 0.(M+1) and "
    "torchaudio 0.M (1.13 with 0.14 and 0.13). Install them together from the index of torch's CUDA so pip cannot "
    "pair them otherwise: pip install torch==2.5.1 torchvision==0.20.1 torchaudio==2.5.1 --index-url "
    "https://download.pytorch.org/whl/cu121 (with your torch and CUDA)"
)
PAIRING: dict[str, str] = {
    "flash_attn": "flash-attn: " + _FLASH_WHEEL.format(name="flash-attn", wheel="flash_attn"),
    "mamba_ssm": "mamba-ssm: " + _FLASH_WHEEL.format(name="mamba-ssm", wheel="mamba_ssm"),
    "causal_conv1d": "causal-conv1d: " + _FLASH_WHEEL.format(name="causal-conv1d", wheel="causal_conv1d"),
    **{
        p: _PYG_WHEEL.format(name=p)
        for p in ("torch_scatter", "torch_sparse", "torch_cluster", "torch_spline_conv")
    },
    "pyg_lib": _PYG_WHEEL.format(name="pyg-lib"),
    "torchvision": _TORCH_PAIRS,
    "torchaudio": _TORCH_PAIRS,
    "mmcv": (
        "MMCV's ops (mmcv._ext) are built for one torch and CUDA: install the build for yours with openmim (pip "
        "install -U openmim; mim install mmcv for mmcv 2.x, mim install mmcv-full for 1.x) or from "
        "https://download.openmmlab.com/mmcv/dist/<cuXYZ>/torch<X.Y>/index.html (pip install mmcv==2.1.0 -f "
        "https://download.openmmlab.com/mmcv/dist/cu121/torch2.1/index.html). Where that index has no folder for "
        "your torch, no prebuilt MMCV exists for it: build it from source (pip install mmcv --no-build-isolation, "
        "the nvcc of torch's CUDA on PATH), or install a torch it lists"
    ),
    "detectron2": (
        "detectron2's _C must be rebuilt after every change of torch or torchvision (its INSTALL.md: undefined "
        "symbols mean detectron2 or torchvision was not compiled with the PyTorch you run): rm -rf build/ "
        "**/*.so in a source tree, then python -m pip install --no-build-isolation "
        "'git+https://github.com/facebookresearch/detectron2.git' (its prebuilt wheels exist only for torch 1.10 "
        "and older, at https://dl.fbaipublicfiles.com/detectron2/wheels/<cuXYZ>/torch<X.Y>/index.html)"
    ),
    "pytorch3d": (
        "pytorch3d's _C is built for one torch and CUDA: install the build for yours (its INSTALL.md: the wheels "
        "named py3<X>_cu<XYZ>_pyt<torch> under https://dl.fbaipublicfiles.com/pytorch3d/packaging/wheels/, or "
        "conda install pytorch3d -c pytorch3d for the pairs it lists), else build it against the torch installed: "
        "pip install --no-build-isolation 'git+https://github.com/facebookresearch/pytorch3d.git@stable'"
    ),
    "vllm": (
        "each vllm release is built for the one torch its requirements pin (pip show vllm lists it): installing "
        "another torch after vllm breaks its _C. Install vllm into a fresh environment and let it bring its own "
        "torch (pip install vllm==<release>), or build vllm from source against your torch "
        "(python use_existing_torch.py; pip install -e . --no-build-isolation)"
    ),
    "spconv": (
        "spconv 2.x comes as one package per CUDA (spconv-cu118, spconv-cu120, ...) with its cumm-cuXYZ: pip "
        "uninstall every spconv-* and cumm-* package installed, then pip install the one for torch.version.cuda "
        "(spconv-cu120 for CUDA 12.x); spconv 1.x is built from source and must be rebuilt against this torch"
    ),
    "tinycudann": (
        "tiny-cuda-nn's torch bindings are compiled for the torch and GPUs of the build: rebuild them in this "
        "environment: TCNN_CUDA_ARCHITECTURES=<your GPU's compute capability, 86 for sm_86> pip install "
        "--no-build-isolation git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch"
    ),
}
# what to pip install for an import of these packages' modules (launchers.py's package not installed): PyPI's
# "apex" is an unrelated package, detectron2 is not on PyPI, PyG's extensions come from its wheel index
_PYG_INDEX = (
    " -f https://data.pyg.org/whl/torch-<X.Y>.0+<cuXYZ|cpu>.html (PyG's wheels for your torch and CUDA)"
)
PIP_INSTALL: dict[str, str] = {
    "apex": (
        "-v --no-build-isolation git+https://github.com/NVIDIA/apex (NVIDIA apex: PyPI's 'apex' is an unrelated "
        "package; its README adds --config-settings for the --cpp_ext --cuda_ext build)"
    ),
    "detectron2": "--no-build-isolation 'git+https://github.com/facebookresearch/detectron2.git' (not on PyPI)",
    "pytorch3d": "--no-build-isolation 'git+https://github.com/facebookresearch/pytorch3d.git@stable'",
    "mamba_ssm": "mamba-ssm --no-build-isolation",
    "causal_conv1d": "causal-conv1d --no-build-isolation",
    "tinycudann": "--no-build-isolation git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch",
    **{p: p + _PYG_INDEX for p in ("torch_scatter", "torch_sparse", "torch_cluster", "torch_spline_conv")},
    "pyg_lib": "pyg-lib" + _PYG_INDEX,
}

# a compiled file's name or folder -> its PAIRING key
_OWNER = R(
    r"[/\\](?P<owner>flash_attn|mamba_ssm|causal_conv1d|torch_scatter|torch_sparse|torch_cluster|"
    r"torch_spline_conv|torchvision|torchaudio|mmcv|detectron2|pytorch3d|vllm|spconv|tinycudann)[/\\]|"
    r"[/\\](?P<top>flash_attn_2_cuda|flash_attn_cuda|selective_scan_cuda|causal_conv1d_cuda|libpyg|"
    r"tinycudann_bindings\w*)[.\w-]*\.(?:so|pyd)"
)
_TOP = {
    "flash_attn_2_cuda": "flash_attn",
    "flash_attn_cuda": "flash_attn",
    "selective_scan_cuda": "mamba_ssm",
    "causal_conv1d_cuda": "causal_conv1d",
    "libpyg": "pyg_lib",
}


def owner(library: str) -> str | None:
    """The PAIRING key of a compiled file's path (``.../site-packages/flash_attn_2_cuda.cpython-310-...so`` ->
    ``flash_attn``), None for a file of another package."""
    found = _OWNER.search(library or "")
    if not found:
        return None
    if found["owner"]:
        return found["owner"]
    top = found["top"]
    return _TOP.get(top, "tinycudann" if top.startswith("tinycudann") else None)


def pairing(library: str) -> str | None:
    """How the package owning a compiled file gets the build for the torch installed, None for another file."""
    key = owner(library)
    return PAIRING.get(key) if key else None


def _built_module(module: str) -> tuple[str, str]:
    if module == "mmcv._ext":
        return (
            "mmcv._ext, MMCV's compiled ops, is not installed: the mmcv installed is a build without them (mmcv "
            "1.x's plain 'mmcv', 'mmcv-lite', or a source build without MMCV_WITH_OPS)",
            "Replace it with the full build for your torch and CUDA: pip uninstall -y mmcv mmcv-lite mmcv-full, then "
            + PAIRING["mmcv"]
            + ". The OpenMMLab package decides which MMCV: mmdet 2.x / mmseg 0.x need mmcv-full 1.x, mmdet 3.x / "
            "mmseg 1.x need mmcv 2.0-2.1.",
        )
    if module in ("detectron2._C", "pytorch3d._C"):
        package = module.split(".")[0]
        return (
            f"{module} is not there: {package} is imported from a source tree that was never built (or its build "
            "failed), so its compiled part is missing",
            f"Build it in that tree, or run from another folder so the installed {package} is imported: "
            + PAIRING[package]
            + ".",
        )
    if module in ("flash_attn_2_cuda", "selective_scan_cuda", "causal_conv1d_cuda"):
        package = _TOP[module]
        return (
            f"{module}, the compiled kernels of {package.replace('_', '-')}, is not installed: the package was "
            "installed without its CUDA build (a source install without nvcc, a failed build, or a checkout on the "
            "path)",
            "Install the build for your torch and CUDA: " + PAIRING[package] + ".",
        )
    return (
        f"{module}, a C++/CUDA extension of NVIDIA apex, is not installed: apex was installed without its "
        "extensions (a Python-only build, or the unrelated PyPI package 'apex')",
        "Build apex with its extensions against the torch installed, with the nvcc of torch's CUDA on PATH: pip "
        "uninstall -y apex; git clone https://github.com/NVIDIA/apex && cd apex && pip install -v "
        "--no-build-isolation --config-settings '--build-option=--cpp_ext' --config-settings "
        "'--build-option=--cuda_ext' . (pip older than 23.1: --global-option=--cpp_ext --global-option=--cuda_ext). "
        "apex's setup.py refuses an nvcc of another CUDA than torch's. Or drop apex: torch.amp, torch.optim.AdamW("
        "fused=True) and nn.LayerNorm replace it, and transformers/timm fall back to them when apex is absent.",
    )


def explain(facts: dict, ctx_facts: dict | None = None) -> tuple[str, str] | None:
    """The summary and fix for one of these packages' own load checks, or None when none was read."""
    if facts.get("paired_cuda"):
        package, theirs, torch_cuda = (
            facts["paired_package"],
            facts["paired_cuda"],
            facts["paired_torch_cuda"],
        )
        key = package.lower()
        how = PAIRING.get(key) or (
            f"install the {package} build for torch's CUDA from the index torch came from"
        )
        return (
            f"{package} was built for CUDA {theirs} and torch for CUDA {torch_cuda}: the two were installed from "
            "builds for different CUDA releases",
            f"Reinstall {package} built for CUDA {torch_cuda} (python -c 'import torch; print(torch.__version__, "
            f"torch.version.cuda)' says which torch): {how}.",
        )
    if facts.get("pyg_package"):
        package = facts["pyg_package"]
        return (
            f"{package}'s compiled library ({facts['pyg_library']}_cpu / _cuda) is not in its installed folder: the "
            "package was installed without its build (a source build that failed, a wheel for another platform "
            "or Python)",
            f"Reinstall it from PyG's wheels for your torch and CUDA: {PAIRING[package]}.",
        )
    if facts.get("tv_no_ops"):
        return (
            "torchvision could not load its compiled ops (torchvision._C): the torchvision installed was built for "
            "another torch release (or its source build failed)",
            "Check python -c 'import torch, torchvision; print(torch.__version__, torchvision.__version__)' and "
            f"install the pair that belongs together: {_TORCH_PAIRS}. A torchvision built from source must be "
            "rebuilt after torch changes.",
        )
    if facts.get("bnb_cpu_symbol"):
        return (
            f"bitsandbytes loaded its CPU library, which has no {facts['bnb_cpu_symbol']}: its CUDA setup found no "
            "library for the CUDA it detected (the GPU functions of 8-bit optimizers and layers are only in the "
            "CUDA library)",
            "Upgrade bitsandbytes: pip install -U 'bitsandbytes>=0.43' (from 0.43 its wheels carry the CUDA 11.7-"
            "12.x libraries and use the CUDA runtime torch brings; python -m bitsandbytes checks the setup). With "
            "0.35-0.42, make its CUDA setup find libcudart: LD_LIBRARY_PATH=$CONDA_PREFIX/lib (or "
            "/usr/local/cuda/lib64), and BNB_CUDA_VERSION=<the CUDA of a libbitsandbytes_cudaXYZ.so it ships> when "
            "the CUDA it detects has no library of its own; on Windows, use the official wheels of 0.43 or later.",
        )
    if facts.get("tcnn_cc"):
        cc = facts["tcnn_cc"]
        return (
            f"tiny-cuda-nn has no build for this GPU (compute capability {cc}): its torch bindings were compiled "
            "for other GPUs' architectures",
            f"Rebuild the bindings for this GPU: TCNN_CUDA_ARCHITECTURES={cc} pip install --no-build-isolation "
            "git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch (a list such as '75;86' builds "
            "for several; without it the build targets the GPU of the machine that builds).",
        )
    if facts.get("built_module"):
        return _built_module(facts["built_module"])
    if facts.get("no_gpu_build"):
        op = f" ({facts['no_gpu_op']})" if facts.get("no_gpu_op") else ""
        return (
            f"a CUDA tensor reached a compiled op{op} whose extension was built without CUDA: its setup.py found no "
            "GPU or no CUDA toolkit when it was built, and compiled only the CPU code (WITH_CUDA unset)",
            "Rebuild the extension with CUDA, in the environment that trains: remove the old build (rm -rf build/ "
            "and the *.so it left in the source tree; pip uninstall the package), make sure nvcc of torch's CUDA is "
            "found (export CUDA_HOME=/usr/local/cuda-<torch.version.cuda>) and force the CUDA build where no GPU is "
            "visible (a Docker build, a login node): FORCE_CUDA=1 TORCH_CUDA_ARCH_LIST='7.5;8.0;8.6' pip install "
            "--no-build-isolation -e . (detectron2, maskrcnn-benchmark; mmcv 1.x: pip install mmcv-full from the "
            "index of your torch and CUDA, MMCV_WITH_OPS=1 FORCE_CUDA=1 for a source build).",
        )
    if facts.get("mmcv_device"):
        return (
            f"MMCV's op {facts['mmcv_op']} has no implementation for {facts['mmcv_device']}: the mmcv installed "
            "was built without CUDA (a source build that found no GPU or no nvcc), so only its CPU kernels are "
            "registered",
            "Install an MMCV built with CUDA: pip uninstall -y mmcv mmcv-full, then "
            + PAIRING["mmcv"]
            + "; for "
            "a source build force CUDA where no GPU is visible: FORCE_CUDA=1 MMCV_WITH_OPS=1 pip install mmcv "
            "--no-build-isolation.",
        )
    if facts.get("pyg_sampler"):
        disabled = (ctx_facts or {}).get("pyg_disabled")
        why = (
            f"PyG disabled {disabled} at import because it did not load (the warning's Stacktrace says why: most "
            "often an undefined symbol, a build for another torch)"
            if disabled
            else "neither pyg-lib nor torch-sparse is installed for this torch"
        )
        return (
            f"PyG's {facts['pyg_sampler']} has no sampling backend: {why}",
            "Install pyg-lib (and torch-sparse if the code needs it) built for the torch and CUDA installed: "
            + _PYG_WHEEL.format(name="pyg-lib")
            + ".",
        )
    if facts.get("tree_c"):
        package = facts["tree_c"]
        return (
            f"{package} has no compiled _C where it was imported from ({facts['tree_init']}): a source tree that "
            "was never built, or one that shadows the installed package because the run starts in the "
            "repository's root",
            f"Build and install it ({package} INSTALL.md: 'please build and install {package}', or 'if you are "
            "running code from its root directory, cd to a different one'): python -m pip install "
            "--no-build-isolation -e . in the repository (the nvcc of torch's CUDA found), then run from another "
            f"folder. " + (PAIRING.get(package, "") + "." if package in PAIRING else ""),
        )
    if facts.get("xf_not_built") and not facts.get("xformers_no_cuda"):  # build.py says that one
        return (
            "xformers has no memory-efficient attention kernel to run: its operators were not built into the xformers "
            "installed (a wheel for another torch or CUDA, whose C++/CUDA part does not load)",
            "Each xformers wheel is built for one torch release: python -m xformers.info lists what was built and "
            "for which torch. Install the xformers made for the torch installed, from torch's index so pip cannot "
            "pick another torch: pip install -U xformers --index-url https://download.pytorch.org/whl/cu121 (your "
            "torch's CUDA; this also upgrades torch to the release it pins: pip install xformers==<release> "
            "--no-deps keeps torch), or turn xformers off and use torch's scaled_dot_product_attention.",
        )
    if facts.get("cuda_lib") and (facts.get("raised_in_package") or "").lower() in PAIRING:
        package = facts["raised_in_package"].lower()
        return (
            f"{package}'s compiled module needs {facts['cuda_lib']} (CUDA {facts['cuda_lib_major']}), which this "
            "environment does not have: the package was built for another CUDA major release than the torch "
            "installed",
            f"Install the {package} build for torch's CUDA (python -c 'import torch; print(torch.version.cuda)'): "
            + PAIRING[package]
            + ".",
        )
    if facts.get("bnb_cuda"):
        cuda = facts["bnb_cuda"]
        dotted = f"{cuda[:-1]}.{cuda[-1]}"
        return (
            f"bitsandbytes has no library for CUDA {dotted}, the CUDA torch was built for "
            f"(libbitsandbytes_cuda{cuda} is not in the installed release)",
            f"Install a bitsandbytes release that ships CUDA {dotted} (pip install -U bitsandbytes; its release "
            "notes list the CUDA versions of each wheel), or install torch built for a CUDA that release ships "
            "(the cu12x wheels of torch), or point it at a shipped library of the same CUDA major, which runs "
            f"on a newer minor: BNB_CUDA_VERSION=<one of its libbitsandbytes_cudaXYZ, e.g. {cuda[:-1]}0> (ls the "
            "bitsandbytes folder). If the run does not quantize, the message is only logged: the failure is "
            "elsewhere.",
        )
    if facts.get("win_package"):
        package = facts["win_package"]
        how = PAIRING.get(package) or _TORCH_PAIRS
        return (
            f"Windows cannot load {package}'s compiled module {facts['win_module']}: it, or a DLL it needs (torch's "
            "or CUDA's), is not found; most often a build for another torch or CUDA than the one installed",
            f"Reinstall {package} built for the torch and CUDA installed: {how}.",
        )
    return None
