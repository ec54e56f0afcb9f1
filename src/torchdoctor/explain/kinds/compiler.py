"""What a compiler's own error line says about a failed build, whatever the package being built.

A build log ends in lines that say only that it failed (ninja's "build stopped", setuptools' "command 'nvcc'
failed with exit status 1", torch's "Error building extension"); the cause is the first ``error:`` line the
compiler printed above them. Its class, not its words, decides the fix:

- an ``#include`` the search path lacks (gcc ``fatal error: X: No such file or directory``, clang's
  ``'X' file not found``, MSVC's ``C1083: Cannot open include file``): which header says which package —
  the CUDA toolkit's (``cuda_runtime.h``, ``cublas_v2.h``, ``nccl.h``, ``thrust/``), Python's (``Python.h``,
  build.py), torch's own (``torch/extension.h``: the build does not see the torch installed; ``THC/THC.h``,
  ``TH/TH.h``: torch's old C headers, removed in torch 1.11, so the source was written for an older torch),
  or another library's (its development package, or a source tree whose submodules were not checked out);
- a name the headers do not declare (gcc's ``was not declared in this scope``, ``has no member named``,
  ``is not a member of``, clang's ``no member named``, ``use of undeclared identifier``, nvcc's ``identifier
  "X" is undefined`` and ``no suitable constructor exists to convert``, MSVC's C2039/C2065/C3861), or a call that several of their overloads
  fit (gcc's ``call of overloaded 'X' is ambiguous``, clang's ``call to 'X' is ambiguous``, nvcc's ``more than one
  instance of overloaded function``, MSVC's C2668): the source
  and the headers it compiles against come from releases that disagree — the extension was written for another
  torch (or CUDA), or that release of it has a bug a later one fixes. When the name is torch's own API (``THCState``, ``AT_CHECK``, ``at::``,
  ``c10::``), which torch release removed it says which to install.

The diagnostics' forms are gcc's (gcc/diagnostic.cc: ``file:line:col: error: ...``), clang's and nvcc's
front end's (``file(line): error: ...``), and MSVC's (``file(line): error Cnnnn: ...``); `kinds/build.py`
(``cuda_build``) reads them beside the toolkit-level reasons it already knows.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Pattern

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# gcc/clang/MSVC: an #include that the search path lacks (system:gcc-missing-header, system:clang-header-not-found,
# system:msvc-cannot-open-include)
HEADER = R(
    r"(?:fatal error: '?|fatal error C1083: Cannot open include file: ')"
    r"(?P<any_header>[\w.+-][\w/.+-]{0,120}\.(?:h|hh|hpp|hxx|cuh|inc|inl))'?:? "
    r"(?:No such file or directory|file not found)"
)
# a name the headers in use do not declare (gcc/cp, clang Sema, nvcc's EDG front end, MSVC)
SOURCE_ERROR = R(
    r"(?:error|error C(?:2039|2065|3861|2664|2660|2668)): (?P<source_error>[^\n]{0,160}?(?:was not declared in this scope|"
    r"has no member named|is not a member of|incomplete type|no member named|undeclared identifier|"
    r"does not name a type|unknown type name|identifier not found|cannot convert|invalid conversion|"
    r"too (?:few|many) arguments|identifier \"[^\"\n]{1,80}\" is undefined|no matching function for call to|"
    r"no instance of overloaded function|no suitable constructor exists to convert|no suitable conversion function|"
    # nvcc's EDG front end: 'namespace "cub" has no member "Sum"', 'class "at::Tensor" has no member "data"'
    r"has no member \"[^\"\n]{1,80}\"|"
    # the call fits several overloads the headers declare (an overload added or changed in another release)
    r"call of overloaded [^\n]{1,200}? is ambiguous|call to ['\u2018][^\n]{1,200}? is ambiguous|"
    r"more than one instance of overloaded function|ambiguous call to overloaded function)"
    r"[^\n]{0,120})"
)
# CUDA's device functions that only some architectures have (the CUDA C++ Programming Guide: atomicAdd on
# double from compute capability 6.0, __nv_bfloat16 arithmetic from 8.0, half arithmetic from 5.3): missing from
# the headers for the architecture compiled, they are a TORCH_CUDA_ARCH_LIST (or -gencode) too old for the source
CUDA_INTRINSIC = R(
    r"(?:\berror\b)[^\n]{0,200}?(?P<cuda_intrinsic>atomicAdd|__nv_bfloat16\w{0,20}|__hmul\w{0,6}|__hadd\w{0,6}|"
    r"__hfma\w{0,6}|__float2bfloat16\w{0,10}|__bfloat162float|__hmax\w{0,6}|__hmin\w{0,6})\b"
)
# the linker on one of torch's own C++ symbols: the extension is linked against another torch, or compiled
# with another C++ ABI (_GLIBCXX_USE_CXX11_ABI) than the torch it links (bfd/ldmisc.c's undefined reference)
# the linker on a symbol of one of CUDA's libraries: the link lacks that library (its -l flag or its folder)
LIBRARY_SYMBOL = R(
    r"undefined reference to `(?P<library_symbol>(?:cublasLt|cublas|cudnn|cufft|curand|cusparse|cusolver|nccl|"
    r"nvrtc|cuda)[A-Z_]\w{0,80})'"
)
_LIBRARIES = ("cublasLt", "cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver", "nccl", "nvrtc")
TORCH_SYMBOL = R(r"undefined reference to `(?P<torch_symbol>(?:at|c10|torch|caffe2)::[^'\n(]{1,120})")
# torch's own C/C++ API in such a message: TH/THC (removed in torch 1.11), AT_* macros, at::/c10::/torch::
TORCH_API = R(
    r"(?:\berror\b|error C\d{4})[^\n]{0,200}?(?<![\w/])"
    r"(?P<torch_api>THC?/\w{1,40}\.h|THC?[A-Z][a-z]\w{0,60}|AT_[A-Z]\w{0,60}|(?:at|c10|torch|caffe2)::\w[\w:]{0,80})"
)
# torch C++ API that only older releases have, named by a compiler's error: the TH/THC C library (torch 1.11
# removed it: THTensor, THCState, THC/THC.h), AT_CHECK (TORCH_CHECK since torch 1.2, AT_CHECK gone in 1.5) and
# at::Type (DeprecatedTypeProperties since 1.3). The source using it, or headers asking for it (an installed torch
# older than the source), say that the source and the torch it is built against come from different releases
LEGACY_TORCH_API = R(
    r"(?:\berror\b|error C\d{4})[^\n]{0,200}?(?<![\w/])"
    r"(?P<legacy_torch_api>THC?/\w{1,40}\.h|THC?(?:[A-Z][a-z]\w{0,60}|State)|AT_CHECK|at::Type)(?![\w:])"
)
# where torch 1.11's removal of its old C headers sent their functions (versions.py's refusal table names it too)
TH_THC_GONE = (
    "TH and THC are gone from torch 1.11 on (their functions moved to ATen: THCudaCheck -> C10_CUDA_CHECK / "
    "AT_CUDA_CHECK, THCudaMalloc -> c10::cuda::CUDACachingAllocator::raw_alloc, the current stream -> "
    "at::cuda::getCurrentCUDAStream(); THCState is dropped)."
)
TORCH_HEADER = R(r"^(?P<torch_header>(?:torch|ATen|c10|TH|THC|caffe2)/)")
# the CUDA toolkit's own headers (not CUTLASS, a library of its own that projects vendor as a submodule)
CUDA_HEADER = R(
    r"^(?:cuda|cublas|cufft|curand|cusparse|cusolver|cudnn|cupti|nvrtc|nvToolsExt|nvtx3|nvml|nccl|nvcc|"
    r"device_launch_parameters|thrust/|cub/|crt/|cooperative_groups|mma\.h|math_constants|vector_types)"
)

# the literals a line must hold to be read as one of these (every one also needs the compiler's "error")
SOURCE_ANCHORS = (
    "was not declared in this scope",
    "has no member named",
    # gcc's "'X' is not a member of 'Y'" (curly quotes in a UTF-8 locale), MSVC's C2039 "'X': is not a member of
    # 'Y'": the quote that opens the scope's name, so that NCCL's "world rank 3 is not a member of the LSA team"
    # (src/dev_runtime.cc, a device-API team lookup at run time) is not read as a compiler's error
    "is not a member of '",
    "is not a member of \u2018",
    "incomplete type",
    "no member named",
    "undeclared identifier",
    "does not name a type",
    "unknown type name",
    "identifier not found",
    "error: cannot convert",
    "error: invalid conversion",
    "error: too few arguments",
    "error: too many arguments",
    "no instance of overloaded function",
    # nvcc's EDG front end on a value of one type where the headers want another (gcc's "cannot convert")
    "no suitable constructor exists to convert",
    "no suitable conversion function from",
    # nvcc's EDG front end on a name a namespace or class does not declare (gcc's "is not a member of")
    'has no member "',
    # a call the headers' overloads all fit (gcc, clang, nvcc's EDG front end, MSVC C2668): an overload that another
    # release of the library added or changed (torch 1.3's Tensor::mean over an initializer list)
    "error: call of overloaded",
    "error: call to '",
    "error: call to \u2018",
    "more than one instance of overloaded function",
    "ambiguous call to overloaded function",
)
HEADER_ANCHORS = ("fatal error: ", "Cannot open include file: ")
# a line with one of the anchors above that is not a compiler's error (prose, a Python exception's message)
NOT_A_DIAGNOSTIC = (
    r"^(?![^\n]*(?:\berror\b|error C\d{4}))[^\n]*(?:" + "|".join(re.escape(a) for a in SOURCE_ANCHORS) + ")"
)

TEMPLATES = (
    "system:gcc-missing-header",
    "system:clang-header-not-found",
    "system:msvc-cannot-open-include",
    "system:gcc-not-declared-in-scope",
    "system:gcc-has-no-member-named",
    "system:gcc-is-not-a-member-of",
    "system:gcc-incomplete-type",
    "system:gcc-deref-incomplete-type",
    "system:clang-no-member-named",
    "system:clang-undeclared-identifier",
    "system:gcc-does-not-name-a-type",
    "system:clang-unknown-type-name",
    "system:msvc-identifier-not-found",
    "system:msvc-not-a-member",
    "system:msvc-undeclared-identifier",
    "system:gcc-cannot-convert",
    "system:gcc-invalid-conversion",
    "system:gcc-too-few-arguments",
    "system:gcc-too-many-arguments",
    "system:nvcc-no-instance-of-overloaded",
    "system:nvcc-no-suitable-constructor",
    "system:nvcc-no-suitable-conversion-function",
    "system:nvcc-has-no-member",
    "system:gcc-call-of-overloaded-ambiguous",
    "system:clang-call-ambiguous",
    "system:nvcc-more-than-one-overload-matches",
    "system:msvc-ambiguous-call-to-overloaded",
)

_VERSIONED_SOURCE = (
    "Install the release of the package being built that is written for the torch (and CUDA) installed — its "
    "README or release notes name the torch each release supports; a prebuilt wheel for your torch and CUDA "
    "avoids the build — or install the torch release the source was written for (pip install "
    "'torch==<that version>' --index-url https://download.pytorch.org/whl/cu<XY>). If the source is the "
    "latest, a fix for this torch may be in the project's issues or a newer commit (pip install "
    "git+<its repository>). Delete the old build folder (build/, ~/.cache/torch_extensions) before building again."
)


def explain_header(header: str) -> tuple[str, str, bool]:
    """(summary, fix, old_torch) for an ``#include`` the build could not find, by whose header it is.

    >>> explain_header("THC/THC.h")[2]
    True
    """
    if CUDA_HEADER.match(header):
        return (
            f"the build cannot find the CUDA header {header}",
            "The CUDA toolkit (its headers, not only the runtime) is not installed or not found: install the "
            "toolkit matching torch.version.cuda (e.g. cuda-toolkit-12-4 / conda install -c nvidia cuda-toolkit) "
            "and export CUDA_HOME=/usr/local/cuda-<version>; `torchdoctor env` lists the toolkits. Where the "
            "toolkit is there (nvcc runs) and only the host compiler misses the header, the extension's setup.py "
            "leaves the toolkit off the include path: add its include folder (os.path.join(CUDA_HOME, 'include'), "
            "e.g. /usr/local/cuda/include) to the Extension's include_dirs, or build it with CUDAExtension, which "
            "adds it.",
            False,
        )
    torch_header = TORCH_HEADER.match(header)
    if torch_header and torch_header["torch_header"] in ("TH/", "THC/"):
        return (
            f"the source includes {header}, one of torch's old C headers (TH/THC), which torch removed in 1.11: "
            "it was written for an older torch than the one installed",
            TH_THC_GONE + " " + _VERSIONED_SOURCE,
            True,
        )
    if torch_header:
        return (
            f"the build cannot find torch's header {header}: the compiler was not given the include folders of "
            "the torch installed",
            "Build it with the Python whose site-packages has torch (python -c 'import torch; "
            "print(torch.utils.cpp_extension.include_paths())'), through torch.utils.cpp_extension "
            "(CUDAExtension / load), which adds them; pip's isolated build environment has no torch unless "
            "the package declares it: install torch first, then pip install --no-build-isolation <package>. "
            "With CMake, point it at torch: -DCMAKE_PREFIX_PATH=$(python -c 'import torch; "
            "print(torch.utils.cmake_prefix_path)').",
            False,
        )
    name = header.rsplit("/", 1)[-1].removesuffix(".h").removesuffix(".hpp")
    return (
        f"the build cannot find the header {header}: the library that provides it is not installed (or not "
        "on the include path)",
        f"Install the development package of the library that ships {header} (Debian/Ubuntu: apt-file search "
        f"{header}; e.g. lib{name.removeprefix('lib')}-dev; conda install -c conda-forge <library>), or point "
        "the build at the folder that holds it: export CPATH=<prefix>/include (CPLUS_INCLUDE_PATH for C++). If "
        "the header belongs to the project itself or a library vendored in its source tree (a third_party/ or "
        "submodule folder), the source is incomplete: git submodule update --init --recursive, or a full "
        "release archive instead of GitHub's 'Source code' zip.",
        False,
    )


def explain_source_error(message: str, torch_api: str | None) -> tuple[str, str]:
    """(summary, fix) for a compiler error about a name the headers do not declare: the source and the
    headers it compiles against come from releases that disagree."""
    quoted = message.strip()[:160]
    if "ambiguous" in quoted or "more than one instance of overloaded" in quoted:
        summary = (
            f"the source does not compile against the headers installed (error: {quoted}): several overloads "
            f"{'of ' + torch_api + ' ' if torch_api else ''}fit the call, an overload another release of a library "
            "it uses (torch, CUDA) added or changed, or that release of it has a bug"
        )
        fix = (
            "The first compiler error is a call that several overloads the headers declare fit equally: the "
            "library (torch's at::/c10::, CUDA's, another package's) added or changed an overload in the release "
            "installed, and the source was written against one without it; an explicit argument type "
            "(std::vector<int64_t>{0, 2}, a cast) picks one. " + _VERSIONED_SOURCE
        )
        return summary, fix
    if torch_api:
        summary = (
            f"the source does not compile against the torch installed: its headers do not define {torch_api} "
            f"(error: {quoted}), torch API of another release"
        )
        fix = (
            f"{torch_api} is torch API this release does not have: removed since (TH/THC in torch 1.11, AT_CHECK "
            "replaced by TORCH_CHECK, tensor.data<T>() by data_ptr<T>()) or added after it. "
            + _VERSIONED_SOURCE
        )
        return summary, fix
    summary = (
        f"the source does not compile against the headers installed (error: {quoted}): it was written for "
        "another release of a library it uses (torch, CUDA), or that release of it has a bug"
    )
    fix = (
        "The first compiler error names a type, member or function the headers in use do not declare. Which "
        "header declares it says which library's version disagrees (torch's at::/c10::, CUDA's cu*/thrust, "
        "another package's). " + _VERSIONED_SOURCE
    )
    return summary, fix


def explain_old_architecture(intrinsic: str) -> tuple[str, str]:
    """(summary, fix) for a CUDA device function the architecture compiled for does not have.

    With TORCH_CUDA_ARCH_LIST unset, torch's extension builder (torch/utils/cpp_extension.py
    ``_get_cuda_arch_flags``) compiles for the capability of every GPU ``torch.cuda.device_count()`` sees, so an
    old GPU visible beside a new one puts its architecture in the list. CUDA's cuda_fp16.hpp declares the half2
    arithmetic (__hfma2, __hadd2, __hmul2, ...) only for __CUDA_ARCH__ >= 530.
    """
    half = intrinsic.startswith("__h") or "half" in intrinsic
    visible = (
        " Half arithmetic needs 5.3, so an architecture of 5.2 or older is in the list: with "
        "TORCH_CUDA_ARCH_LIST unset that is usually an older GPU visible beside the one you run on (Maxwell, "
        "Kepler): hide it from the build (CUDA_VISIBLE_DEVICES=<index of the newer GPU> pip install ... / python "
        "setup.py ...) or name the architectures yourself."
        if half
        else ""
    )
    return (
        f"the build compiles for a GPU architecture older than the source needs: {intrinsic} does not exist "
        "there (TORCH_CUDA_ARCH_LIST, or -gencode flags)",
        "CUDA's device functions come with the architecture: atomicAdd on double from compute capability 6.0, "
        "half arithmetic from 5.3, bfloat16 (__nv_bfloat16) from 8.0. The build compiles for every "
        "architecture in TORCH_CUDA_ARCH_LIST (or, unset, every GPU it sees, each visible one's; none seen: a "
        'list of old ones): name only the GPUs you run on, e.g. export TORCH_CUDA_ARCH_LIST="8.0;8.6" '
        "(nvidia-smi --query-gpu=compute_cap --format=csv), delete the build folder and build again."
        + visible,
    )


def explain_torch_symbol(symbol: str) -> tuple[str, str]:
    """(summary, fix) for a link that cannot find one of torch's own C++ symbols."""
    return (
        f"the link cannot find torch's own symbol {symbol[:100]}: the extension is built against another torch "
        "(or with another C++ ABI) than the libtorch it links",
        "Build it with the torch it will run with, through torch.utils.cpp_extension (which links that torch's "
        "libraries and sets _GLIBCXX_USE_CXX11_ABI as torch was built: python -c 'import torch; "
        "print(torch._C._GLIBCXX_USE_CXX11_ABI)'); with CMake, find_package(Torch) from that torch "
        "(-DCMAKE_PREFIX_PATH=$(python -c 'import torch; print(torch.utils.cmake_prefix_path)')). If the "
        "symbol is gone from this torch release, the source was written for another one: "
        + _VERSIONED_SOURCE,
    )


def explain_library_symbol(symbol: str) -> tuple[str, str]:
    """(summary, fix) for a link that cannot find a symbol of one of CUDA's libraries."""
    library = next((name for name in _LIBRARIES if symbol.startswith(name)), "cudart")
    return (
        f"the link cannot find {symbol}: it is not linked with lib{library} (or that library is not where the "
        "linker looks)",
        f"Add the library to the link (torch's CUDAExtension: libraries=['{library}']; a Makefile or CMake: "
        f"-l{library}) and its folder to the search path: export LIBRARY_PATH=$CUDA_HOME/lib64 (a pip-installed "
        f"CUDA keeps it in site-packages/nvidia/*/lib; ls $CUDA_HOME/lib64/lib{library}*: only lib{library}.so.N "
        f"there needs the unversioned link). A symbol the CUDA installed does not have at all means an older "
        "CUDA than the source needs: build with the toolkit matching torch.version.cuda.",
    )
