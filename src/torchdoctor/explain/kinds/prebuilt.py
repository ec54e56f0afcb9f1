"""Compiled packages that do not fit the machine or the torch they load beside.

Compiled packages that do not fit the machine or the torch they load beside (``extension_import``), in the
words of the loader and of the packages' own load checks (catalogued in ``catalog/build_tools.tsv``):

- glibc's loader (elf/dl-version.c): ``version `GLIBC_2.28' not found (required by .../libtorch_cpu.so)``: the
  binary was built on a newer Linux than this one. torch's Linux wheels are built on manylinux_2_28 from torch
  2.6 on (manylinux2014, glibc 2.17, before), so CentOS/RHEL 7 (glibc 2.17) and Ubuntu 18.04 (2.27) cannot load
  them.
- bitsandbytes' cextension.py: ``The installed version of bitsandbytes was compiled without GPU support`` (its
  CPU library was loaded: no CUDA library for this CUDA version found, or a CPU-only torch), and 0.37-0.43's
  ``CUDA Setup failed despite GPU being available`` (it found no CUDA runtime library it could load).
- xformers' _cpp_lib.py: ``xFormers can't load C++/CUDA extensions. xFormers was built for: PyTorch X with CUDA
  Y (you have Z)``: its compiled part is for another torch.

- Windows: CPython's ``DLL load failed while importing X: The specified module could not be found.``
  (Python/dynload_win.c: the module or a DLL it needs is not found) and torch's own ``[WinError 126] ... Error
  loading "...\\torch\\lib\\c10.dll" or one of its dependencies.`` (torch/__init__.py, _load_dll_libraries),
  beside its warning that the Microsoft Visual C++ Redistributable is not installed: a DLL torch's need (the VC++
  runtime, a CUDA DLL of another release) is missing, or another copy of it on PATH is loaded first. Only likely:
  a broken install prints the same.

- torchvision: extension.py refuses a torchvision built for another CUDA major version than torch (``Detected that
  PyTorch and torchvision were compiled with different CUDA major versions``, certain: the versions after it are read
  from the same line or, where a post wrapped the message, wherever the log has them); a torchvision built for another
  torch release cannot load its C++ ops, which it does not say: torch then refuses its meta registration with
  ``operator torchvision::nms does not exist`` (torch 2.N pairs with torchvision 0.(N+15)).
- DGL: src/runtime/c_runtime_api.cc (DeviceAPIManager::GetAPI) checks ``Device API cuda is not enabled. Please
  install the cuda version of dgl.`` (``gpu`` in releases before 0.9) when a graph or tensor is moved to a device
  whose runtime the loaded libdgl was not built with: the CPU build of dgl is installed (PyPI's ``dgl`` is CPU
  only; the CUDA builds come from DGL's wheel index as ``dgl`` +cuXYZ, formerly ``dgl-cuXYZ``), or is imported
  ahead of a CUDA build installed beside it. Certain.

bitsandbytes' and xformers' are warnings printed at import; what fails later (an 8-bit optimizer, memory-efficient attention)
is their consequence, so they are only likely (xformers' too where the versions it prints disagree: the run goes on,
and a failure found beside the warning leads).
"""

from __future__ import annotations

import re

from torchdoctor.explain import printed_versions
from torchdoctor.explain.kinds import wheel_tags
from torchdoctor.explain.recognisers import Pattern

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# bitsandbytes/cextension.py (0.38-0.42) leaves `lib` None where no native library loaded (no GPU torch can see: a
# Mac, a CPU-only torch; no binary for this CUDA) after warning it "was compiled without GPU support"; its
# functional.py then calls the library's C functions on None: the 8-bit optimizers' c<optimizer>32bit_grad_*,
# c<optimizer>_8bit_blockwise_grad_*, the (de)quantizers, the int8 and 4-bit matmuls, cget_managed_ptr
BNB_LIB_NONE = (
    r"'NoneType' object has no attribute '(?P<bnb_lib_none>c(?:adam|momentum|rmsprop|lion|adagrad|ademamix|lamb|lars)"
    r"\w{0,40}_(?:grad|blockwise)\w{0,30}|c(?:de)?quantize_blockwise\w{0,30}|cdequantize_blockwise\w{0,30}|"
    r"cget_managed_ptr|cprefetch|cfill_fp32|cigemm\w{0,20}|cbatched_igemm|cgemm_4bit_inference\w{0,30}|"
    r"c(?:de)?quantize_fp4\w{0,20}|c(?:de)?quantize_nf4\w{0,20}|cpercentile_clipping\w{0,20}|"
    r"cextractOutliers\w{0,20}|cspmm_coo\w{0,20}|cint8_vector_quant|cdouble_rowcol_quant|ctransform\w{0,30})'"
)

TEMPLATES = (
    "build_tools:importerror-version-glibc-not-found-required",
    "build_tools:the-installed-version-of-bitsandbytes-was",
    "build_tools:the-installed-version-of-bitsandbytes-was-2",
    "build_tools:cuda-setup-failed-despite-gpu-being",
    "third_party:bitsandbytes-native-library-none",
    "build_tools:warning-xformers-xformers-can-load-cuda",
    "build_tools:importerror-dll-load-failed-while-importing",
    "build_tools:importerror-dll-load-failed",
    "build_tools:oserror-winerror-error-loading-or-one",
    "build_tools:microsoft-visual-redistributable-is-not-installed",
    "build_tools:detected-that-pytorch-and-torchvision-were",
    "build_tools:runtimeerror-operator-torchvision-does-not-exist",
    "third_party:dgl-device-api-not-enabled",
    "third_party:dgl-cannot-find-graphbolt-library",
    "third_party:dgl-cannot-load-graphbolt-library",
)
ANCHORS = (
    "version `GLIBC_",
    "bitsandbytes was compiled without GPU support",
    "CUDA Setup failed despite GPU being available",
    # bitsandbytes' C functions (all named c...) called on the library its cextension.py left None
    "'NoneType' object has no attribute 'c",
    "xFormers can't load C++/CUDA extensions",
    "DLL load failed",
    "or one of its dependencies.",
    "Visual C++ Redistributable is not installed",
    "were compiled with different CUDA major versions",
    "operator torchvision::",
    "is not enabled. Please install the cuda version of dgl",
    "Cannot find DGL C++ graphbolt library at ",
    "Cannot load Graphbolt C++ library",
)
MATCH = R(
    r"version `GLIBC_[\d.]{1,10}' not found|bitsandbytes was compiled without GPU support|"
    r"CUDA Setup failed despite GPU being available|xFormers can't load C\+\+/CUDA extensions|"
    + BNB_LIB_NONE
    + r"|"
    r"DLL load failed|Error loading \"[^\"\n]{1,300}\" or one of its dependencies\.|Visual C\+\+ Redistributable is not installed|"
    r"were compiled with different CUDA major versions|operator torchvision::\w{1,60} does not exist|"
    r"Device API \w{1,20} is not enabled\. Please install the cuda version of dgl|"
    r"Cannot find DGL C\+\+ graphbolt library at |Cannot load Graphbolt C\+\+ library"
)
# torchvision/extension.py _check_cuda_version: the CUDA each of the two was built for
TV_VERSIONS = r"PyTorch has CUDA Version=(?P<tv_torch_cuda>\d{1,3}\.\d{1,3}) and torchvision has CUDA Version=(?P<tv_cuda>\d{1,3}\.\d{1,3})"
FACTS = (
    R(r"version `(?P<glibc>GLIBC_[\d.]{1,10})' not found \(required by (?P<glibc_needer>[^)\n]{1,200})\)"),
    R(r"(?P<bnb_no_gpu>bitsandbytes was compiled without GPU support)"),
    R(r"(?P<bnb_setup>CUDA Setup failed despite GPU being available)"),
    R(BNB_LIB_NONE),
    R(r"(?P<xformers_mismatch>xFormers can't load C\+\+/CUDA extensions)"),
    R(r"(?P<dll_failed>DLL load failed)(?: while importing (?P<dll_module>[\w.]{1,100}))?"),
    R(
        r"(?:\[WinError (?P<win_error>\d{1,5})\][^\n]{0,200})?Error loading \"(?P<dll_file>[^\"\n]{1,300})\" or one of its dependencies"
    ),
    R(r"(?P<no_vc_runtime>Visual C\+\+ Redistributable is not installed)"),
    R(r"(?P<tv_major>were compiled with different CUDA major versions)"),
    R(TV_VERSIONS),
    R(r"(?P<tv_ops>operator torchvision::\w{1,60}) does not exist"),
    R(r"Device API (?P<dgl_device>\w{1,20}) is not enabled\. Please install the cuda version of dgl"),
    # dgl/graphbolt/__init__.py load_graphbolt: no library for this torch in the package, or it did not load
    R(
        r"(?:Cannot find DGL C\+\+ graphbolt library at [^\n]{0,300}?libgraphbolt_pytorch_(?P<graphbolt_torch>[\w.+]{1,40})\."
        r"(?:so|dylib|dll)|(?P<graphbolt_load>Cannot load Graphbolt C\+\+ library))"
    ),
)
# the torch xformers was built for, on the line after its warning: read wherever the log has it; torchvision's CUDA
# versions, which its one-line message puts after "major versions." and a post may wrap onto the next line
CONTEXT = (
    ("and torchvision has CUDA Version=", R(TV_VERSIONS)),
    (
        "(you have ",
        R(
            r"PyTorch (?P<xf_built>[\w.+]{1,40}) with CUDA (?P<xf_cuda>\w{1,10}) \(you have (?P<xf_have>[\w.+]{1,40})\)"
        ),
    ),
)


def decided(facts: dict, ctx_facts: dict) -> bool:
    """Whether what was read makes the finding certain: glibc's own words, or xformers naming another torch."""
    # torchvision's refusal names its cause whether or not the versions after it were read
    if facts.get("glibc") or facts.get("tv_major") or facts.get("tv_cuda") or facts.get("dgl_device"):
        return True
    if facts.get("graphbolt_torch") or facts.get("graphbolt_load"):
        return True
    # xformers' mismatch, even with the two versions it prints disagreeing, is a warning printed at import: the run
    # goes on without its compiled ops, so it is likely and a failure found beside it (a CUDA out of memory) leads;
    # its consequence, "No operator found for memory_efficient_attention_forward", is certain by its own words
    return False


def explain(facts: dict, ctx_facts: dict) -> tuple[str, str] | None:
    """The summary and fix for a compiled package that does not fit, or None when none of `FACTS` was read."""
    if facts.get("glibc"):
        needer = facts.get("glibc_needer", "a compiled module").strip()
        return (
            f"{needer} needs {facts['glibc']}: the C library of this Linux (glibc) is older than the one it was "
            "built against",
            "The binary was built on a newer Linux than this machine (`ldd --version` shows its glibc). Run it "
            "where glibc is new enough (a newer OS or container image: Ubuntu 22.04 has 2.35, RHEL 8 has 2.28), "
            "or install a build made for older systems: torch's Linux wheels need glibc 2.28 from torch 2.6 on "
            "(2.17 before), so on CentOS/RHEL 7 stay at torch 2.5 or build from source; for another package, "
            "its older release or a source build (pip install --no-binary <package> <package>).",
        )
    if facts.get("dgl_device"):
        return (
            f"the dgl installed has no {facts['dgl_device']} runtime: its CPU build was loaded, so a graph cannot "
            "move to the GPU",
            "PyPI's dgl is the CPU build. Remove every dgl in the job's environment (pip uninstall dgl until none "
            "is left; pip list | grep dgl also shows dgl-cuXYZ and dglgo), then install the cuda version of dgl "
            "built for torch's CUDA and release from DGL's wheel index (pip install dgl -f "
            "https://data.dgl.ai/wheels/torch-2.X/cuXYZ/repo.html, the torch and CUDA of python -c 'import torch; "
            "print(torch.__version__, torch.version.cuda)'; releases before 1.0: pip install dgl-cuXYZ -f "
            "https://data.dgl.ai/wheels/repo.html), or keep the graph on the CPU.",
        )
    if facts.get("graphbolt_torch") or facts.get("graphbolt_load"):
        what = (
            f"the dgl installed has no graphbolt library for torch {facts['graphbolt_torch']}"
            if facts.get("graphbolt_torch")
            else "dgl's compiled graphbolt library did not load with the torch installed"
        )
        return (
            f"{what}: dgl is built for given torch and CUDA releases, and importing it fails with another",
            "Install the dgl built for this torch and CUDA, or the torch this dgl was built for: python -c 'import "
            "torch; print(torch.__version__, torch.version.cuda)', then pip install dgl -f "
            "https://data.dgl.ai/wheels/torch-2.X/cuXYZ/repo.html (conda: the dglteam/label/th2X_cuXYZ channel), "
            "in a clean environment if reinstalling torch alone leaves the old one (e.g. torch 2.1.0 with CUDA "
            "11.8 and dgl from th21_cu118). A dgl release supports only the torch releases out when it was built "
            "(dgl 2.1 up to torch 2.2.1). Where the versions match, the library also fails to load when the CUDA "
            "libraries torch brings are not found: run from the activated environment (LD_LIBRARY_PATH of a "
            "batch job).",
        )
    if facts.get("tv_cuda") or facts.get("tv_major"):
        # the versions on the message's own line, else where the log has them (a post that wrapped the message)
        said = facts if facts.get("tv_cuda") else ctx_facts
        built = (
            f"torchvision was built for CUDA {said['tv_cuda']} and torch for CUDA {said['tv_torch_cuda']}"
            if said.get("tv_cuda")
            else "torchvision was built for another CUDA major version than torch"
        )
        return (
            f"{built}: torchvision refuses to load",
            "torch and torchvision must come from the same index (the same CUDA build) and release: reinstall "
            "torchvision from torch's index, keeping torch as it is: pip install --force-reinstall --no-deps "
            "torchvision==0.<N+15>.x --index-url https://download.pytorch.org/whl/cu<XY> (torch 2.N pairs with "
            "torchvision 0.(N+15); cu<XY> is torch's CUDA: python -c 'import torch; print(torch.version.cuda)').",
        )
    if facts.get("tv_ops"):
        fix = (
            "torchvision's C++ ops only load into the torch release they were built for (torch 2.N pairs with "
            "torchvision 0.(N+15): torch 2.4 / torchvision 0.19), and when they do not, torchvision says nothing "
            "until torch refuses its operators. Install the matching pair from one index in one command (pip "
            "install torch==2.4.1 torchvision==0.19.1 --index-url https://download.pytorch.org/whl/cu121), or "
            "the torchvision for the torch you keep (pip show torch; --no-deps keeps torch as it is)."
        )
        # the table of released wheels: the torchvision whose wheel requires the torch this log names
        torch = (printed_versions.shown(ctx_facts, "torch") or ctx_facts.get("torch_version", "")).split("+")[
            0
        ]
        partner = wheel_tags.built_for_torch("torchvision", torch) if torch else None
        if partner is not None:
            fix += (
                f" For this log's torch {torch} that is torchvision {partner.version} (its wheel requires "
                f"torch{partner.torch}): pip install --no-deps 'torchvision=={partner.version}' with torch's "
                "--index-url."
            )
        return (
            f"torchvision's compiled ops did not load ({facts['tv_ops']} does not exist): the torchvision "
            "installed was built for another torch release",
            fix,
        )
    if facts.get("dll_file") or facts.get("dll_failed") or facts.get("no_vc_runtime"):
        return _windows_dll(facts)
    if facts.get("xformers_mismatch"):
        built, have = ctx_facts.get("xf_built"), ctx_facts.get("xf_have")
        versions = f" (built for torch {built}, this is {have})" if built and have else ""
        fix = (
            "Each xformers release is built for one torch release and CUDA: install the one made for your torch "
            "(pip install -U xformers --index-url https://download.pytorch.org/whl/cu121, your torch's CUDA; "
            "`pip install xformers==<version> --no-deps` keeps torch as it is; python -m xformers.info shows "
            "what loads), or turn xformers off and use torch's scaled_dot_product_attention."
        )
        # the table of released wheels: the xformers whose wheel requires the torch installed
        partner = wheel_tags.built_for_torch("xformers", have.split("+")[0]) if have else None
        if partner is not None:
            fix += (
                f" For torch {have.split('+')[0]} that is xformers {partner.version} (its wheel requires "
                f"torch{partner.torch}): pip install --no-deps 'xformers=={partner.version}'."
            )
        return (
            f"xformers' compiled part does not fit the torch installed{versions}: its memory-efficient attention "
            "and other ops are unavailable",
            fix,
        )
    if facts.get("bnb_setup"):
        return (
            "bitsandbytes found no CUDA runtime library it could load, although a GPU is there",
            "bitsandbytes 0.37-0.43 search the library path for libcudart.so and load the matching "
            "libbitsandbytes_cudaXYZ.so: `python -m bitsandbytes` says which one it looked for. Upgrade it first "
            "(pip install -U bitsandbytes: later releases choose the library by torch.version.cuda); otherwise add the "
            "toolkit's lib64 to LD_LIBRARY_PATH, or set BNB_CUDA_VERSION to the CUDA of a library it ships.",
        )
    if facts.get("bnb_lib_none"):
        return (
            f"bitsandbytes' native library is not loaded, so its C function {facts['bnb_lib_none']} was called on "
            "None: its 8-bit optimizers and quantization cannot run here",
            "bitsandbytes loads a compiled library for the GPU torch sees; with none (no NVIDIA GPU visible: a "
            "Mac, a CPU-only torch, CUDA_VISIBLE_DEVICES empty; or no binary for this CUDA) its import only warns "
            '("compiled without GPU support", above in the log) and the first call fails. Check python -c '
            "'import torch; print(torch.cuda.is_available(), torch.version.cuda)' and `python -m bitsandbytes`; "
            "install the CUDA build of torch and a bitsandbytes release with binaries for that CUDA (pip install "
            "-U bitsandbytes; on Windows 0.43 or later), or, without an NVIDIA GPU, use the optimizer's torch "
            'version (torch.optim.AdamW instead of bnb.optim.AdamW8bit, optim="adamw_torch" in the Trainer).',
        )
    if facts.get("bnb_no_gpu"):
        return (
            "bitsandbytes loaded its CPU-only library: 8-bit optimizers and 4/8-bit quantization on the GPU are "
            "unavailable",
            "It found no CUDA library matching this CUDA (or torch sees no GPU: python -c 'import torch; "
            "print(torch.cuda.is_available())'). Install a bitsandbytes release with binaries for your CUDA "
            "(pip install -U bitsandbytes; `python -m bitsandbytes` reports what it loaded), with the CUDA build "
            "of torch; on Windows use 0.43 or later (earlier releases had no Windows CUDA build).",
        )
    return None


_VC_REDIST = "https://aka.ms/vs/17/release/vc_redist.x64.exe"


def _windows_dll(facts: dict) -> tuple[str, str]:
    dll, module = facts.get("dll_file", ""), facts.get("dll_module", "")
    if dll or facts.get("no_vc_runtime"):
        error = f" [WinError {facts['win_error']}]" if facts.get("win_error") else ""
        name = re.split(r"[/\\]", dll)[-1] if dll else "its DLLs"
        owner = "torch's own " if not dll or "torch" in dll.lower() else ""
        return (
            f"{owner}{name} (or a DLL it needs) does not load on Windows{error}",
            "torch's DLLs need the Microsoft Visual C++ Redistributable (x64) and, for a CUDA build, the CUDA DLLs "
            f"of its wheel. Install or update the redistributable ({_VC_REDIST}) and restart; then reinstall torch "
            "in a fresh environment (pip uninstall -y torch until none is left, pip install torch --index-url "
            "https://download.pytorch.org/whl/cu121). WinError 1114 (initialization failed) is the same runtime out "
            "of date, or another copy of its DLLs found first through PATH (another CUDA, an application's folder): "
            "take those off PATH.",
        )
    what = f"the compiled module {module}" if module else "a compiled module"
    return (
        f"{what} does not load on Windows: it, or a DLL it needs, is not found",
        "A module built for another torch or CUDA asks for DLLs that are not there (cudart64_*.dll, c10.dll of "
        "another release), or it was imported before torch added its DLL folder: import torch first, then "
        "install the build of the package made for your torch and CUDA (its Windows wheel, or build it against "
        f"this torch), with the Microsoft Visual C++ Redistributable (x64) installed ({_VC_REDIST}).",
    )
