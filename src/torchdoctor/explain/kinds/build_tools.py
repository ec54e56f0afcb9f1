"""What nvcc, gcc, ninja, CMake and setuptools say when a CUDA extension does not build.

What the build tools themselves say when a CUDA extension does not build: nvcc and its host-compiler check,
gcc's driver, ninja and CMake, setuptools, and the nvcc checks of the packages' own setup.py.

`kinds/build.py` (``cuda_build``) reads these beside torch's own reasons: the anchors, the facts and the fix
each one names. The messages are catalogued in ``catalog/build_tools.tsv``, each row naming its source:

- CUDA's ``crt/host_config.h`` stops every compile whose host compiler is newer (or older) than the toolkit
  release supports: ``#error -- unsupported GNU version! gcc versions later than N are not supported!`` and its
  clang twin ``clang version must be less than N``. The number is the toolkit's own limit, so the fix names
  the compiler to install; nvcc's ``-ccbin`` (``CUDAHOSTCXX`` for CMake, ``CC``/``CXX`` for torch's builder)
  points it there.
- nvcc's driver: ``Value 'sm_35' is not defined for option 'gpu-architecture'`` (an ``-arch`` this toolkit does
  not know: too new for an old toolkit, or dropped by a newer one — CUDA 11 dropped sm_30, CUDA 12 sm_35/sm_37),
  ``The version ('X') of the host compiler ('Y') is not supported`` (Apple clang, MSVC), and ``'cicc' died due
  to signal 9 (Kill signal)``: the compiler killed, on Linux nearly always the out-of-memory killer while ninja
  runs one nvcc per core. gcc's driver says the same as ``fatal error: Killed signal terminated program
  cc1plus``.
- CMake without ninja (``unable to find a build program corresponding to "Ninja"``), distutils without the
  compiler (``unable to execute 'gcc'``) or without Visual C++ (``Unable to find vcvarsall.bat``, setuptools'
  older ``Microsoft Visual C++ 14.0 is required``).
- NVIDIA apex's and flash-attn's setup.py: ``--cuda_ext was requested, but nvcc was not found`` (torch's
  ``CUDA_HOME`` is None: no toolkit found); tiny-cuda-nn's: ``Unknown compute capability. Specify the target
  compute capabilities in the TCNN_CUDA_ARCHITECTURES environment variable`` (no GPU visible to the build).
"""

from __future__ import annotations

from torchdoctor.explain.kinds import toolkits
from torchdoctor.explain.recognisers import Pattern

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = (
    "build_tools:error-unsupported-gnu-version-gcc-versions",
    "build_tools:error-unsupported-gnu-version-gcc-versions-2",
    "build_tools:error-unsupported-clang-version-clang-version",
    "build_tools:nvcc-fatal-value-is-not-defined",
    "build_tools:nvcc-fatal-the-version-of-the",
    "build_tools:nvcc-fatal-host-compiler-targets-unsupported",
    "build_tools:nvcc-error-died-due-to-signal",
    "build_tools:nvcc-error-died-due-to-signal-2",
    "build_tools:fatal-error-killed-signal-terminated-program",
    "build_tools:error-building-extension",
    "build_tools:error-compiling-objects-for-extension",
    "build_tools:error-or-later-compatible-compiler-is",
    "build_tools:cmake-error-cmake-was-unable-to",
    "build_tools:error-command-failed-with-exit-status",
    "build_tools:unable-to-execute-no-such-file",
    "build_tools:error-microsoft-visual-is-required-get",
    "build_tools:error-unable-to-find-vcvarsall-bat",
    "build_tools:failed-building-wheel-for",
    "build_tools:error-failed-to-build-installable-wheels",
    "build_tools:usr-bin-ld-cannot-find-no",
    "build_tools:was-requested-but-nvcc-was-not",
    "build_tools:subprocess-calledprocesserror-command-ninja-returned-non",
    "build_tools:is-only-supported-on-cuda-and",
    "build_tools:tinycudann-unknown-compute-capability",
    # uv's failed build of a source package: "× Failed to build `flash-attn==2.7.4`" (0.5+), "Build backend
    # failed to build wheel through `build_wheel()` with exit status: 1" (0.4 and before)
    "build_tools:failed-to-build-2",
    "build_tools:uv-build-backend-failed-to-build-wheel",
)

ANCHORS = (
    "unsupported clang version",
    "is not defined for option 'gpu-architecture'",
    "of the host compiler ('",
    "Host compiler targets unsupported OS",
    "' died due to signal",
    "signal terminated program",
    'unable to find a build program corresponding to "Ninja"',
    "unable to execute '",
    "Microsoft Visual C++ 14.0 is required",
    "Unable to find vcvarsall.bat",
    "was requested, but nvcc was not found",
    "Failed to build installable wheels for some",
    "Note: make sure nvcc has a supported version by running nvcc -V",
    "Specify the target compute capabilities in the TCNN_CUDA_ARCHITECTURES",
    "Failed to build `",
    "Build backend failed to build wheel through `build_wheel()`",
)

# said by any failed build, or by a tool that is missing for other reasons: likely alone;
# flash-attn's setup.py only warns that nvcc is missing (it may still download a prebuilt wheel): likely too
GENERIC = (
    "unable to execute '",
    "Failed to build installable wheels for some",
    # uv's: any source package whose build failed (a compiler missing, a pure-Python backend's error too)
    "Failed to build `",
    "Build backend failed to build wheel through `build_wheel()`",
    "was requested, but nvcc was not found",
)

FACTS = (
    R(r"unsupported clang version! clang version must be less than (?P<clang_limit>\d+)"),
    R(r"Value '(?P<gpu_arch>(?:sm|compute|lto)_\w{1,8})' is not defined for option 'gpu-architecture'"),
    R(
        r"The version \('(?P<host_version>[^'\n]{1,20})'\) of the host compiler \('(?P<host_compiler>[^'\n]{1,40})'\) "
        r"is not supported"
    ),
    R(r"(?P<host_compiler>Host compiler) targets unsupported OS"),
    R(r"'(?P<killed_tool>[\w.+-]{1,40})' died due to signal (?P<killed_signal>\d{1,2})"),
    R(
        r"fatal error: (?P<killed_signal>Killed|Segmentation fault) signal terminated program (?P<killed_tool>[\w.+-]{1,40})"
    ),
    R(r'(?P<cmake_no_ninja>unable to find a build program corresponding to "Ninja")'),
    R(
        r"unable to execute '(?:[^'\n]{0,200}[/\\])?(?P<missing_compiler>[\w.+-]{1,60})': No such file or directory"
    ),
    R(r"(?P<msvc>Microsoft Visual C\+\+ 14\.0 is required|Unable to find vcvarsall\.bat)"),
    R(r"(?P<no_nvcc>\S{1,60} was requested, but nvcc was not found)"),
    # flash-attn's CUDA floor, as the packages whose setup.py copied it print it (flash-attn's own: build.py)
    R(
        r"(?<![\w.\-])(?P<cuda_floor_package>(?!FlashAttention )[\w.\-]{1,40}) is only supported on CUDA (?P<cuda_floor>[\d.]{1,8}) "
        r"and above"
    ),
    # tiny-cuda-nn's bindings/torch/setup.py: no TCNN_CUDA_ARCHITECTURES and no GPU torch can see
    R(
        r"(?P<tcnn_no_arch>Unknown compute capability)\. Specify the target compute capabilities in the TCNN_CUDA"
    ),
    # uv: the package (and its version or URL) whose build failed; uv 0.4 names it on a "Caused by" line above
    R(r"(?P<pip_failed>Failed to build) `(?P<extension>[A-Za-z][\w.\-]{0,99}?)(?:(?:==|@)[^`\n]{0,200})?`"),
    R(r"(?P<pip_failed>Build backend failed to build wheel) through `build_wheel\(\)`"),
    # pip 24.1+: the packages whose build failed, in parentheses
    R(
        r"(?P<pip_failed>Failed to build installable wheels) for some \S+ based projects \((?P<extension>[\w.\-]{1,100})"
    ),
)

# nvcc's -arch values each toolkit release dropped (the CUDA release notes): older GPUs need an older toolkit
_DROPPED = (("sm_2", "9.0"), ("sm_30", "11.0"), ("sm_35", "12.0"), ("sm_37", "12.0"))


def explain(facts: dict) -> tuple[str, str] | None:
    """The summary and fix for what a build tool said (the facts `FACTS` read), or None when none of them is there."""
    if facts.get("clang_limit"):
        newest = int(facts["clang_limit"]) - 1
        releases = toolkits.releases_refusing_clang(facts["clang_limit"])
        taking = toolkits.first_taking_clang(int(facts["clang_limit"]))
        table = f" (the limit of CUDA {toolkits.span(releases)}" if releases else ""
        if table and taking:
            table += f"; clang {facts['clang_limit']} takes CUDA {taking} or later"
        return (
            f"nvcc refuses the host compiler: this CUDA accepts clang {newest} at most"
            + (table + ")" if table else ""),
            "CUDA's host_config.h stops any compile whose host compiler is newer than the toolkit release "
            f"supports. Build with a compiler it accepts: clang {newest} or older, or gcc (sudo apt install "
            "g++-11), and point the build at it: export CC=gcc-11 CXX=g++-11 CUDAHOSTCXX=g++-11 (nvcc -ccbin "
            "g++-11 for a plain nvcc command line). Or install a newer CUDA toolkit, which accepts newer "
            "compilers (its release notes list them); -allow-unsupported-compiler skips the check at your own "
            "risk.",
        )
    if facts.get("cuda_floor_package"):
        package = facts["cuda_floor_package"]
        return (
            f"{package} needs CUDA {facts['cuda_floor']} or newer to build, and the nvcc its setup.py found is older",
            "Its setup.py asks the nvcc of CUDA_HOME (nvcc -V) for its release. Put the toolkit matching "
            "torch.version.cuda first: export CUDA_HOME=/usr/local/cuda-<version> PATH=$CUDA_HOME/bin:$PATH (an old "
            "/usr/bin/nvcc from the distribution often comes first), or install the package's prebuilt wheel for "
            "your torch and CUDA.",
        )
    if facts.get("tcnn_no_arch"):
        return (
            "tiny-cuda-nn's setup.py cannot tell which GPU architecture to build for: TCNN_CUDA_ARCHITECTURES is "
            "not set and the torch of the build sees no GPU (a build in a container or on a node without one, or "
            "a CPU-only torch)",
            "Name the architectures: TCNN_CUDA_ARCHITECTURES=86 pip install --no-build-isolation "
            "git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch (86 for sm_86; '75;86;89' for "
            "several: nvidia-smi --query-gpu=compute_cap --format=csv on the GPU machine prints it without the "
            "dot), with the torch built for CUDA installed (python -c 'import torch; print(torch.version.cuda)' is "
            "not None).",
        )
    if facts.get("killed_tool"):
        return _killed(facts["killed_tool"], facts.get("killed_signal", ""))
    if facts.get("gpu_arch"):
        return _unknown_arch(facts["gpu_arch"])
    if facts.get("host_compiler"):
        compiler = facts["host_compiler"]
        version = f" {facts['host_version']}" if facts.get("host_version") else ""
        return (
            f"nvcc does not support the host compiler ({compiler}{version})",
            "Each CUDA release supports a fixed range of host compilers (its installation guide lists them; "
            "Apple clang and Visual Studio releases newer than the toolkit are refused). Install a compiler in "
            "that range and point nvcc at it (-ccbin <compiler>, CUDAHOSTCXX for CMake, CC/CXX for torch's "
            "extension builder; on Windows build from that Visual Studio's x64 Native Tools prompt), or a CUDA "
            "toolkit that supports the compiler you have.",
        )
    if facts.get("cmake_no_ninja"):
        return (
            "CMake was asked for the Ninja generator, and ninja is not installed",
            "pip install ninja (or sudo apt install ninja-build; conda install ninja), check that `ninja "
            "--version` runs in the same environment, then build again; or choose another generator "
            "(CMAKE_GENERATOR='Unix Makefiles').",
        )
    return None


def _killed(tool: str, signal: str) -> tuple[str, str]:
    if signal in ("9", "Killed"):
        return (
            f"the compiler ({tool}) was killed during the build: out of memory, most likely (signal 9, the "
            "kernel's out-of-memory killer)",
            "ninja runs one compile per CPU core and each nvcc/cicc of a CUDA extension can take several GB: "
            "limit the parallel jobs and build again:\n"
            "MAX_JOBS=4 pip install <package> --no-build-isolation   # torch's extension builder reads MAX_JOBS\n"
            "(MAX_JOBS=1 on a small machine or container; flash-attn's build also reads NVCC_THREADS), or build "
            "on a machine with more memory or swap. dmesg shows the out-of-memory kill.",
        )
    return (
        f"the compiler ({tool}) crashed during the build (signal {signal})",
        "A compiler that dies on a signal other than the out-of-memory kill hit a bug of its own, often one of "
        "that CUDA toolkit and host compiler pair: build with another CUDA toolkit release (the one matching "
        "torch.version.cuda) or another host compiler release, or install the package's prebuilt wheel.",
    )


def _unknown_arch(arch: str) -> tuple[str, str]:
    dropped = next(
        (cuda for prefix, cuda in _DROPPED if arch.replace("compute_", "sm_").startswith(prefix)), None
    )
    if dropped:
        return (
            f"nvcc does not know the GPU architecture {arch}: CUDA {dropped} and later dropped it",
            f"This toolkit no longer builds for {arch}. Leave it out of the architectures the build names "
            '(TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0" or the package\'s -gencode / CMAKE_CUDA_ARCHITECTURES), '
            f"or, for a GPU of that generation, build with a CUDA toolkit before {dropped} (and a torch built "
            "for it).",
        )
    first = toolkits.first_knowing(arch)
    oldest, newest = toolkits.oldest_with_archs(), toolkits.load()[-1].cuda
    if first is None:
        return (
            f"nvcc does not know the GPU architecture {arch}, and no CUDA toolkit from {oldest} to {newest} knows "
            "it either: the number is not a GPU's",
            "Check the architecture the build names (TORCH_CUDA_ARCH_LIST, -gencode, CMAKE_CUDA_ARCHITECTURES) "
            "against the GPU: nvidia-smi --query-gpu=compute_cap --format=csv prints it (8.6 is sm_86); nvcc "
            "--list-gpu-arch lists what this toolkit knows.",
        )
    # the table of architectures starts at `oldest` (ptxas of NVIDIA's wheels): a toolkit before it may know the
    # architecture too, so it is not named as the first one
    since = (
        f"CUDA {first} is the first toolkit that knows it"
        if first != oldest
        else f"CUDA {oldest} knows it; toolkits before {oldest} are not in the table read"
    )
    use = (
        f"CUDA {first} or later"
        if first != oldest
        else f"a toolkit that knows it (CUDA {oldest} or later does)"
    )
    return (
        f"nvcc does not know the GPU architecture {arch}: this CUDA toolkit is older than that GPU ({since})",
        f"Use {use} for this GPU (with the torch built for that CUDA, so that torch.version.cuda "
        "and the toolkit agree: export CUDA_HOME=/usr/local/cuda-<version>), or leave the architecture out of "
        'TORCH_CUDA_ARCH_LIST (e.g. "8.0;8.6") / -gencode; nvcc --list-gpu-arch lists what this one knows.',
    )
