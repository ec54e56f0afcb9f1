"""Compiled extensions (DeepSpeed's ops, a package's own CUDA kernels) that do not build or do not load.

Kinds of failure in building and loading compiled extensions: nvcc and the host compiler, CUDA versions,
missing headers, ninja, and modules built against another torch.

The message texts are ``torch/utils/cpp_extension.py``'s (``_check_cuda_version``, ``CUDA_MISMATCH_MESSAGE``,
``_join_cuda_home``), nvcc's (``crt/host_config.h``), DeepSpeed's op builder's (``op_builder/builder.py``: its ops
are CUDA extensions built just in time, and a build that fails there is this kind with DeepSpeed's fix), pip's and
the dynamic loader's.
"""

from __future__ import annotations

import re

from torchdoctor.explain.first_failure import installed_package
from torchdoctor.explain.kinds import (
    build_tools,
    cccl,
    compiled_ops,
    extension_packages,
    installers,
    missing_packages,
    prebuilt,
    toolkits,
    torch_cmake,
    wheel_tags,
)
from torchdoctor.explain.kinds import compiler as diagnostics
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


# -- building CUDA extensions -------------------------------------------------------------------------


def _missing_lib(lib: str) -> tuple[str, str]:
    summary = f"the linker found no lib{lib}.so to link the extension against (-l{lib})"
    fix = (
        f"The library (or only its unversioned lib{lib}.so link) is missing from the CUDA/library folders the "
        f"build searches. Find it: ls $CUDA_HOME/lib64/lib{lib}*; if only lib{lib}.so.N is there, link it:\n"
        f"ln -s $CUDA_HOME/lib64/lib{lib}.so.N $CUDA_HOME/lib64/lib{lib}.so   # or install the toolkit's "
        f"dev package (the full CUDA toolkit, not the runtime), and set LIBRARY_PATH=$CUDA_HOME/lib64"
    )
    return summary, fix


DEEPSPEED_BUILD_HINT = (
    "DeepSpeed builds its ops (fused_adam, cpu_adam, ...) just in time with torch's extension builder: it needs "
    "ninja, a CUDA toolkit whose nvcc matches torch.version.cuda (CUDA_HOME) and a host compiler nvcc accepts. "
    "`ds_report` lists which ops can build; after fixing, clear the half-built ones (rm -rf "
    "~/.cache/torch_extensions) or prebuild them: DS_BUILD_OPS=1 pip install deepspeed --no-cache-dir "
    "(DS_BUILD_FUSED_ADAM=1 / DS_BUILD_CPU_ADAM=1 for one op)."
)


def _deepspeed_build(facts: dict) -> tuple[str, str] | None:
    """DeepSpeed's op builder's own reasons (op_builder/builder.py), or None when none is in the facts."""
    op = facts.get("op") or facts.get("op2") or "an op"
    if facts.get("ds_arch"):
        return (
            f"DeepSpeed cannot choose the GPU architectures to build {op} for: {facts['ds_arch'].strip()}",
            "The op builder asks the visible GPUs for their compute capability; with none visible (a build "
            "node without GPUs, CUDA_VISIBLE_DEVICES empty) or CUDA already initialised in a forked process it "
            'cannot. Name them: export TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0" (your GPUs\' capabilities, '
            "nvidia-smi --query-gpu=compute_cap --format=csv), then build again.\n" + DEEPSPEED_BUILD_HINT,
        )
    if facts.get("cpu_adam_missing"):
        return (
            "DeepSpeed's CPU Adam (ZeRO-Offload's optimizer) has no compiled op: cpu_adam failed to build or load "
            "earlier in the log (this AttributeError is printed when the half-made optimizer is deleted)",
            "The cause is the first error above it (the cpu_adam build: CUDA_HOME, nvcc against torch's CUDA, "
            "the compiler, ninja). On CUDA the CPU ops (cpu_adam, cpu_adagrad, cpu_lion) also link CUDA's "
            "random-number library (op_builder's TorchCPUOpBuilder adds -lcurand): the toolkit in CUDA_HOME "
            "must have lib64/libcurand.so (a runtime-only container image or a pip/conda CUDA without curand "
            "lacks it: use a -devel image or install the toolkit's curand). " + DEEPSPEED_BUILD_HINT,
        )
    if facts.get("why"):
        why = facts["why"].strip()
        if "ninja" in why:
            return (
                f"DeepSpeed could not build the {op} op: ninja is not installed",
                "pip install ninja\n" + DEEPSPEED_BUILD_HINT,
            )
        return (f"DeepSpeed could not load the {op} op: {why[:200]}", DEEPSPEED_BUILD_HINT)
    return None


def _build(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    arch = merged(hits).get("gpu_arch", "")
    if arch.startswith("sm_") and ("triton_ptx" in merged(hits) or "triton_ptx" in ctx.facts):
        summary, fix = _triton_ptx(arch)
        return summary + on_ranks(hits), fix
    if any("missing_lib" in h.facts for h in hits):
        return _missing_lib(next(h.facts["missing_lib"] for h in hits if "missing_lib" in h.facts))
    facts = merged(hits)
    cmake = torch_cmake.explain(facts)
    if cmake:
        return cmake[0] + on_ranks(hits), cmake[1]
    deepspeed = "saw_deepspeed" in ctx.facts or "ds_builder" in facts
    if facts.get("compiler_version") and facts.get("min_version"):
        compiler = facts["compiler"]
        return (
            f"{compiler} {facts['compiler_version']} is older than CUDA {facts['cuda_version']} needs "
            f"(at least {facts['min_version']})",
            "Build with a newer host compiler: sudo apt install gcc-11 g++-11 (or conda install -c conda-forge "
            "gxx=11) and export CC=gcc-11 CXX=g++-11 CUDAHOSTCXX=g++-11; `torchdoctor env` checks the pair.",
        )
    ds_reason = _deepspeed_build(facts)
    if ds_reason and not any(
        k in facts
        for k in (
            "compiler_version",
            "max_gcc",
            "torch_cuda",
            "no_cuda_home",
            "no_nvcc",
            "any_header",
            "source_error",
            *_TOOL_REASONS,
        )
    ):
        return ds_reason
    if facts.get("max_excluded") and not facts.get("max_version"):
        facts["max_version"] = str(int(facts["max_excluded"]) - 1)
    if facts.get("compiler_version") and facts.get("max_version"):
        compiler = facts["compiler"]
        summary = (
            f"{compiler} {facts['compiler_version']} is newer than CUDA {facts['cuda_version']} accepts "
            f"(at most {facts['max_version']})"
        )
        major = facts["max_version"].split(".")[0]
        fix = _older_compiler(major)
        used = facts["compiler_version"].split(".")[0]
        taking = toolkits.first_taking_gcc(int(used)) if "clang" not in compiler else None
        if taking:
            summary += f"; gcc {used} takes CUDA {taking} or later"
            fix = (
                f"Either build with gcc {major} for this CUDA, or use CUDA {taking} or later (with the torch built "
                f"for it) and keep gcc {used}.\n" + fix
            )
        return summary, fix
    if facts.get("max_gcc"):
        summary = (
            f"nvcc refuses the host compiler: gcc versions later than {facts['max_gcc']} are not supported"
        )
        fix = _older_compiler(facts["max_gcc"])
        table = toolkits.explain_gcc_limit(facts["max_gcc"], ctx.facts.get("user_gcc", ""))
        if table:
            summary += f" ({table[0]})"
            fix = (table[1] + "\n" + fix) if table[1] else fix
        return summary, fix
    tools = build_tools.explain(facts)
    if tools:
        return tools
    if facts.get("cuda_version") and facts.get("torch_cuda"):
        summary = (
            f"the CUDA toolkit used for the build (CUDA {facts['cuda_version']}) is not the one PyTorch was "
            f"compiled with (CUDA {facts['torch_cuda']})"
        )
        if deepspeed:
            summary = "DeepSpeed cannot build its ops: " + summary
        fix = (
            f"Make them agree: install the PyTorch built for CUDA {facts['cuda_version'].split('.')[0]}.x (pip "
            f"install torch --index-url https://download.pytorch.org/whl/cu<XY>{_torch_for(facts['cuda_version'])}), "
            f"or build with a CUDA {facts['torch_cuda']} toolkit:\n"
            f"export CUDA_HOME=/usr/local/cuda-{facts['torch_cuda']} PATH=/usr/local/cuda-{facts['torch_cuda']}/bin:$PATH\n"
            "torchdoctor env   # lists the toolkits found and which one a build uses"
        )
        if deepspeed:
            fix += "\n" + DEEPSPEED_BUILD_HINT
        return summary, fix
    if facts.get("torch_cuda"):
        torch_cuda = facts["torch_cuda"]
        return (
            f"the nvcc the build runs is not the CUDA PyTorch was compiled with (CUDA {torch_cuda}): the "
            "package's setup.py refuses the mismatch",
            f"Build with the CUDA {torch_cuda} toolkit: export CUDA_HOME=/usr/local/cuda-{torch_cuda} "
            f"PATH=/usr/local/cuda-{torch_cuda}/bin:$PATH (nvcc -V must say release {torch_cuda}), or install "
            "the PyTorch built for the toolkit you have (pip install torch --index-url "
            "https://download.pytorch.org/whl/cu<XY>).\ntorchdoctor env   # lists the toolkits found and which one "
            "a build uses",
        )
    if facts.get("flash_attn_cuda"):
        return (
            f"flash-attn needs CUDA {facts['min_cuda']} or newer to build, and the nvcc it found is older",
            "Put a newer toolkit first (the one matching torch.version.cuda): export CUDA_HOME=/usr/local/cuda-"
            "<version> PATH=$CUDA_HOME/bin:$PATH and check nvcc -V; or install a prebuilt flash-attn wheel for "
            "your torch and CUDA (pip install flash-attn --no-build-isolation picks one when it exists).",
        )
    if facts.get("torch_arch"):
        arch = facts["torch_arch"]
        first = toolkits.first_torch_knowing(arch)
        releases = toolkits.torch_archs()
        if first:
            known = f": torch {first} is the first release whose extension builder knows it"
        elif releases:
            known = f": no torch release from {releases[0][0]} to {releases[-1][0]} knows it (not a compute capability)"
        else:
            known = ""
        return (
            f"torch's extension builder does not know the architecture {arch} "
            f"(TORCH_CUDA_ARCH_LIST, or the GPU it detected){known}",
            "TORCH_CUDA_ARCH_LIST lists compute capabilities as this torch names them, separated by ; or spaces "
            '(e.g. TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0+PTX"): correct or unset it; a GPU newer than this torch '
            "release needs a newer torch (and CUDA toolkit) to build for it.",
        )
    if facts.get("no_cuda_home") or facts.get("no_nvcc"):
        where = facts.get("no_nvcc")
        summary = (
            f"the build found no nvcc ({where.strip()[:120]})"
            if where
            else "CUDA_HOME is not set and no CUDA toolkit was found for the build"
        )
        fix = (
            "Install the CUDA toolkit (nvcc, not only the runtime the torch wheel brings) matching "
            "torch.version.cuda and export CUDA_HOME=/usr/local/cuda-<version> (with $CUDA_HOME/bin/nvcc in it); "
            "`torchdoctor env` lists the toolkits."
        )
        if deepspeed:
            summary = "DeepSpeed cannot build its ops: " + summary
            fix += "\n" + DEEPSPEED_BUILD_HINT
        return summary, fix
    if facts.get("missing_header"):
        summary, fix, _ = diagnostics.explain_header(facts["missing_header"])
        return summary, fix
    if facts.get("any_header") and not facts.get("python_headers"):
        # the compiler's own error: which header it could not find says which package is missing
        summary, fix, _ = diagnostics.explain_header(facts["any_header"])
        return summary, fix + ("\n" + DEEPSPEED_BUILD_HINT if deepspeed else "")
    if facts.get("nvcc_std"):
        return (
            f"this nvcc does not know C++17 ({facts['nvcc_std'].strip()}): the CUDA toolkit is older than torch needs",
            "torch 2.x builds its extensions as C++17, which nvcc accepts from CUDA 11 on: use the toolkit that "
            "matches torch.version.cuda (export CUDA_HOME=/usr/local/cuda-<that version>, PATH=$CUDA_HOME/bin:"
            "$PATH), not an old one first on PATH; `torchdoctor env` lists the toolkits and which one builds.",
        )
    if facts.get("nvcc_old"):
        return (
            f"this nvcc is older than the CUDA torch was built with ({facts['nvcc_old'].strip()}): torch's "
            "extension builder gives it an option CUDA 10.2 introduced",
            "torch's cpp_extension chooses nvcc's options from torch.version.cuda, so the nvcc it runs must be "
            "that toolkit (or newer within its major version): export CUDA_HOME=/usr/local/cuda-<torch.version.cuda> "
            "PATH=$CUDA_HOME/bin:$PATH, not an old toolkit first on PATH; `torchdoctor env` lists the toolkits.",
        )
    if facts.get("packs"):
        return (
            "nvcc of CUDA 11.0-11.5 fails on GCC 11's <functional> ('parameter packs not expanded'): a known "
            "incompatibility of that pair",
            "Build with GCC 10 or older for this toolkit (export CC=gcc-10 CXX=g++-10 CUDAHOSTCXX=g++-10), or use "
            "CUDA 11.6 or newer with GCC 11 (the toolkit matching torch.version.cuda).",
        )
    if facts.get("missing_compiler"):
        compiler = facts["missing_compiler"]
        return (
            f"the build runs {compiler}, which is not installed (or not on PATH)",
            "Install the compiler the build names: sudo apt install build-essential (gcc, g++), or conda install "
            f"-c conda-forge gxx; for nvcc, the CUDA toolkit (and CUDA_HOME pointing at it). Or point the build at "
            f"one that is there: export CC=<gcc> CXX=<g++> (a {compiler} named by a conda env's sysconfig is the "
            "conda compiler package: conda install -c conda-forge gxx_linux-64).",
        )
    if facts.get("no_cxx"):
        return (
            "no C++ compiler on PATH: torch's extension builder found no c++",
            "Install one: sudo apt install build-essential (g++), conda install -c conda-forge gxx, or point "
            "the build at one: export CXX=/path/to/g++.",
        )
    if facts.get("no_cc1plus"):
        driver = facts.get("gcc_driver", "gcc")
        return (
            f"{driver} cannot compile C++: its C++ compiler (cc1plus) is not installed",
            "The C compiler is installed without the g++ of the same release: install it (sudo apt install g++; "
            "for gcc-N, g++-N; conda: conda install -c conda-forge gxx_linux-64), or point the build at a "
            "complete one: export CC=gcc-11 CXX=g++-11.",
        )
    if facts.get("msvc"):
        msvc = facts["msvc"]
        if "unsupported Microsoft Visual Studio" in msvc:
            return (
                "nvcc refuses this Visual Studio: it is newer (or older) than the CUDA toolkit supports",
                "Install the Visual Studio (Build Tools) release this CUDA lists as supported and build from its "
                "x64 Native Tools prompt, or a CUDA toolkit that supports your Visual Studio; nvcc's "
                "-allow-unsupported-compiler skips the check at your own risk.",
            )
        return (
            "no Microsoft C++ compiler (cl.exe) for the build on Windows",
            "Install the Microsoft C++ Build Tools (Visual Studio Build Tools, workload 'Desktop development "
            "with C++') and build from the 'x64 Native Tools Command Prompt' (so cl.exe is on PATH), with the "
            "CUDA toolkit matching torch.version.cuda; or install a prebuilt wheel of the package.",
        )
    if facts.get("msbuild") and not facts.get("msvc"):
        return (
            "a CUDA build step failed inside a Visual Studio (MSBuild) build"
            + (f": {facts['msbuild_project']}" if facts.get("msbuild_project") else ""),
            "MSBuild only reports that the step (nvcc, or a CMake custom command running it) exited with an "
            "error; the compiler's own error lines earlier in the build log say why. On Windows the usual cause is "
            "a CUDA toolkit and a Visual Studio that do not support each other (nvcc's 'unsupported Microsoft "
            "Visual Studio version', 'Host compiler targets unsupported OS'): install the CUDA release that "
            "supports your Visual Studio (its release notes list them), or the Visual Studio toolset your CUDA "
            "supports, then delete the build folder and build again from the x64 Native Tools prompt.",
        )
    if facts.get("python_headers"):
        return (
            "the build cannot find Python.h: Python's development headers are not installed",
            "Install the headers of the Python the build runs with: sudo apt install python3-dev (python3.X-dev "
            "for the exact version), or build in a conda environment (its Python ships them).",
        )
    if facts.get("no_ninja"):
        return ("torch's extension builder needs ninja", "pip install ninja   # then build again")
    if facts.get("vc_without_sdk"):
        return (
            "the Visual C++ environment is activated but DISTUTILS_USE_SDK is not set: torch's extension "
            "builder stops rather than activate it a second time",
            "In the x64 Native Tools prompt (or after vcvarsall.bat) tell setuptools to use the environment "
            "as it is: set DISTUTILS_USE_SDK=1 (PowerShell: $env:DISTUTILS_USE_SDK=1), then build again.",
        )
    if facts.get("old_compiler"):
        return (
            "the host compiler is too old for torch's headers (they need C++17)",
            "Build with gcc/g++ 9 or newer: export CC=gcc-11 CXX=g++-11 (sudo apt install g++-11).",
        )
    if cccl.removed_name(facts):
        return cccl.explain(cccl.removed_name(facts), bool(ctx.facts.get("cuda_13")))
    if facts.get("cuda_intrinsic"):
        summary, fix = diagnostics.explain_old_architecture(facts["cuda_intrinsic"])
        return summary, fix + ("\n" + DEEPSPEED_BUILD_HINT if deepspeed else "")
    if facts.get("torch_symbol"):
        return diagnostics.explain_torch_symbol(facts["torch_symbol"])
    if facts.get("library_symbol"):
        return diagnostics.explain_library_symbol(facts["library_symbol"])
    if facts.get("source_error"):
        # a name the headers do not declare: the source and the headers come from releases that disagree
        summary, fix = diagnostics.explain_source_error(facts["source_error"], facts.get("torch_api"))
        if facts.get("extension"):
            summary = f"{facts['extension']}: {summary}"
        return summary, fix + ("\n" + DEEPSPEED_BUILD_HINT if deepspeed else "")
    if ds_reason:
        return ds_reason
    extension = facts.get("extension")
    summary = "a CUDA/C++ extension failed to build" + (f": {extension}" if extension else "")
    if facts.get("compile_error") and not extension:
        summary += f" ({facts['compile_error'].strip()[:160]})"
    fix = (
        "The compiler's own first `error:` line above says why. `torchdoctor env` checks the usual causes: "
        "the CUDA toolkit against torch's CUDA, the host compiler against nvcc, TORCH_CUDA_ARCH_LIST. The build "
        "uses the nvcc of CUDA_HOME (else the one on PATH): when none is found or it is another CUDA than "
        "torch.version.cuda, export CUDA_HOME=/usr/local/cuda-<torch's CUDA> and build again."
    )
    if facts.get("pip_setup") or facts.get("pip_failed"):
        fix += (
            "\npip compiled the package because it found no wheel built for this Python, torch and CUDA: a "
            "prebuilt wheel skips the compiler altogether (the package's README lists its wheel index per torch "
            "and CUDA release, e.g. pip install <package> -f https://data.pyg.org/whl/torch-<X>+<cuda>.html for "
            "the PyG extensions), or install the torch release the package publishes wheels for."
        )
    if deepspeed or extension in DEEPSPEED_OPS:
        fix += "\n" + DEEPSPEED_BUILD_HINT
    return summary, fix


# the ops DeepSpeed builds just in time (op_builder/*.py NAME): an extension of that name failing is its build
DEEPSPEED_OPS = frozenset(
    "fused_adam cpu_adam cpu_adagrad cpu_lion fused_lamb fused_lion transformer_inference transformer utils "
    "async_io quantizer sparse_attn stochastic_transformer spatial_inference ragged_device_ops ragged_ops "
    "inference_core_ops cutlass_ops evoformer_attn fp_quantizer gds random_ltd".split()
)


# facts of build_tools.FACTS that name the reason a build failed (before DeepSpeed's own words for it)
_TOOL_REASONS = (
    "clang_limit",
    "killed_tool",
    "gpu_arch",
    "host_compiler",
    "cmake_no_ninja",
    "cuda_floor_package",
)


def _torch_for(cuda: str) -> str:
    """The torch releases whose PyPI wheel is built with ``cuda``'s major, from the table of released wheels."""
    minor = ".".join(cuda.split(".")[:2])
    releases = wheel_tags.torch_with_cuda(minor) or wheel_tags.torch_with_cuda(cuda.split(".")[0])
    if not releases:
        return ""
    builds = sorted({r.cuda for r in releases}, key=lambda v: tuple(int(p) for p in v.split(".")))
    return (
        f"; on PyPI itself torch {releases[0].version} to {releases[-1].version} are built with CUDA "
        f"{', '.join(builds)}"
    )


def _older_compiler(major: str) -> str:
    return (
        f"Build with a host compiler CUDA supports (g++ {major} or older) and point the build at it:\n"
        f"sudo apt install gcc-{major} g++-{major}   # or: conda install -c conda-forge gxx={major}\n"
        f"export CC=gcc-{major} CXX=g++-{major} CUDAHOSTCXX=g++-{major}\n"
        "Or use a newer CUDA toolkit that accepts your g++ (`torchdoctor env` checks the pair)."
    )


# Triton compiling a kernel for torch.compile (Inductor) runs its bundled ptxas on the target it derives from
# torch.cuda.get_device_capability() as sm_<major><minor> (triton/compiler/compiler.py, later
# backends/nvidia/compiler.py: "Internal Triton PTX codegen error" when ptxas exits 255). A GPU newer than that
# ptxas prints "Value 'sm_103a' is not defined for option 'gpu-name'", and so does a CUDA build of Triton under a
# ROCm torch, whose capability for an AMD GPU is its gfx number (gfx1100: 11.0, sm_110): two causes, likely.
TRITON_PTX = R(r"(?P<triton_ptx>Internal Triton PTX codegen error|PTXAS error: )")
# a ROCm torch where the log shows one: its wheel's local tag (2.5.1+rocm6.2), the ROCm install's path, an AMD GPU's
# gfx target, an Instinct accelerator (not "AMD Radeon": a laptop's integrated GPU beside an NVIDIA one). There the
# sm_ target ptxas refused is the gfx number read as a capability (gfx1100: sm_110), and ptxas is a CUDA Triton's
ROCM = R(r"(?P<saw_rocm>\+rocm\d[\d.]{0,10}|/opt/rocm\b|\bgfx\d{3,4}[a-z]?\b|\bAMD Instinct [\w -]{1,30})")
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (
    ("Triton PTX", TRITON_PTX),
    ("PTXAS error", TRITON_PTX),
    *((literal, ROCM) for literal in ("+rocm", "/opt/rocm", "gfx", "AMD Instinct")),
    *cccl.CONTEXT,  # the CUDA 13 toolkit: a CCCL 2 name missing is then certain
)


def _not_triton_ptx(hits: list[Hit], ctx: Context) -> bool:
    """Certain as before (a specific anchor hit) unless the line is Triton's ptxas refusing the GPU's target, or
    a CCCL name missing: certain where CCCL 3.0 removed it and the log shows the CUDA 13 toolkit (kinds/cccl.py)."""
    facts = merged(hits)
    if cccl.removed_name(facts):
        return bool(ctx.facts.get("cuda_13")) and cccl.removed_in_3(cccl.removed_name(facts))
    return any(h.specific for h in hits) and not ("triton_ptx" in facts or "triton_ptx" in ctx.facts)


def _triton_ptx(arch: str) -> tuple[str, str]:
    return (
        f"Triton's ptxas (torch.compile / Inductor compiling a kernel) does not know the target {arch}, the GPU's "
        "compute capability as torch reports it: a GPU newer than the ptxas Triton bundles, or a CUDA build of "
        "Triton running under a ROCm torch on an AMD GPU (gfx1100 reads as 11.0, sm_110)",
        "On an NVIDIA GPU newer than Triton's ptxas: upgrade torch with the triton it pins (pip install -U torch "
        "--index-url https://download.pytorch.org/whl/cu128 or newer), or point Triton at a newer CUDA's ptxas: "
        "export TRITON_PTXAS_PATH=/usr/local/cuda-12.9/bin/ptxas.\nOn an AMD GPU with a ROCm torch: the triton "
        "installed is the CUDA one; reinstall torch and its ROCm Triton together (pip uninstall triton "
        "pytorch-triton-rocm; pip install torch --index-url https://download.pytorch.org/whl/rocm6.2, which brings "
        "pytorch-triton-rocm), and keep other packages from pulling the CUDA triton back in.",
    )


CUDA_BUILD = Recogniser(
    # torch/utils/cpp_extension.py (_check_cuda_version, CUDA_MISMATCH_MESSAGE), nvcc crt/host_config.h,
    # DeepSpeed op_builder/builder.py (its JIT-built ops)
    kind="cuda_build",
    templates=(
        "torch:the-current-installed-version-of-is-2",
        "torch:the-current-installed-version-of-is",  # the compiler older than CUDA's minimum
        "torch:cuda-home-environment-variable-is-not",
        # cpp_extension.py's module constants, raised by _check_cuda_version
        "torch:cuda-was-not-found-on-the",
        "torch:the-detected-cuda-version-mismatches-the",
        "torch:nvcc-not-found-at-ensure-cuda",  # _join_cuda_home: CUDA_HOME without bin/nvcc
        "system:nvcc-unsupported-arch",
        "torch:ninja-is-required-to-load-extensions",
        "system:ld-cannot-find",
        "system:ninja-build-stopped",
        "system:gcc-missing-header",  # a CUDA library's header, or Python.h
        "system:which-cxx-failed",
        "system:gcc-cannot-execute-cc1plus",  # gcc's driver without its C++ front end (no g++ installed)
        "system:msvc-required",
        "torch:msvc-is-required-to-load-extensions",  # torch/utils/cpp_extension.py on Windows without cl.exe
        "system:nvcc-unsupported-msvc",
        "system:nvcc-cannot-find-cl",
        "system:nvcc-unknown-std",
        "system:nvcc-unknown-option-dependencies",
        "third_party:apex-cuda-version-mismatch",
        "third_party:flash-attn-cuda-too-old",
        "system:ptxas-unknown-gpu-name",
        "third_party:triton-internal-ptx-codegen-error",
        "system:gcc11-parameter-packs",
        "system:clang-header-not-found",
        "system:distutils-command-failed",
        # MSBuild on Windows: a custom build step (CMake's nvcc commands) or CUDA's CudaCompile task failed
        "system:msbuild-custom-build-exited",
        "system:msbuild-cuda-command-exited",
        # the compiler's and linker's own error lines (gcc, GNU ld, nvcc's front end): a build failed, for
        # whatever reason
        "system:collect2-ld-returned",
        "system:ld-undefined-reference",
        "system:nvcc-identifier-undefined",
        "system:gcc-no-matching-function",
        # setuptools: the compiler it runs is not installed; pip's summary of any failed source build
        "system:distutils-command-not-found",
        "system:pip-could-not-build-wheels",
        "system:pip-command-errored-out",  # pip before 21.2 running setup.py itself
        # DeepSpeed's op builder: toolkit against torch's CUDA, no CUDA_HOME / nvcc, ninja, architectures
        "deepspeed:deepspeed-op-builder-installed-cuda-version",
        "deepspeed:installed-cuda-version-does-not-match",  # op_builder/builder.py, 0.3-0.8.0
        "deepspeed:unable-to-jit-load-the-op",
        "deepspeed:unable-to-jit-load-the-op-2",
        "deepspeed:cuda-home-does-not-exist-unable",
        "deepspeed:unable-to-run-unable-to-compile",
        "deepspeed:unable-to-load-op-due-to",
        "deepspeed:deepspeed-jit-builder-for-found-no",
        "deepspeed:deepspeed-jit-builder-for-cannot-probe",
        # deepspeed/ops/adam/cpu_adam.py __del__ after CPUAdamBuilder().load() failed
        "third_party:deepspeed-cpuadam-no-ds-opt-adam",
        # torch/utils/cpp_extension.py _get_cuda_arch_flags: TORCH_CUDA_ARCH_LIST (or the GPU) it cannot name
        "torch:unknown-cuda-arch-or-gpu-not",
        # torch/utils/cpp_extension.py BuildExtension: an extension linked with nvcc's device link step (dlink=True)
        # when ninja is missing; on Windows a VC environment already activated without DISTUTILS_USE_SDK
        "torch:with-dlink-true-ninja-is-required",
        "torch:it-seems-that-the-vc-environment",
        # the compiler's first error line, whatever the package: a header not found, a name not declared
        *diagnostics.TEMPLATES,
        # nvcc, host_config.h, gcc's driver, ninja/CMake, setuptools, pip, apex's and flash-attn's setup.py
        *build_tools.TEMPLATES,
        # torch's own CMake files: a source build of torch, or an extension configured against it
        *torch_cmake.TEMPLATES,
    ),
    title="CUDA extension build failed",
    # lines that say only that a build failed (any compile or link error prints them): likely alone; the
    # reason lines (a compiler or CUDA version, a missing CUDA_HOME, an architecture) make it certain
    generic=(
        "Error building extension",
        "Command errored out with exit status",
        "nvcc' failed with exit",
        "' failed with exit",
        "Error compiling objects for extension",
        "Command '['ninja', '-v'",
        "Failed building wheel for",
        "cannot find -l",
        "ninja: build stopped",
        # the optimizer's op is missing: its build failed earlier (that error, when in the log, says why)
        "object has no attribute 'ds_opt_adam'",
        # MSBuild: any failed build step of a Visual Studio project prints these
        "error MSB6006:",
        "error MSB3721:",
        # DeepSpeed's "not compatible due to hardware/software issue": a build that failed, or a machine the op
        # cannot run on (no CUDA GPU, a CPU-only torch, a GPU too old); the reason it appends decides
        "Unable to JIT load the",
        # gcc / ld / nvcc errors: the build failed; why (a toolkit, an API of another torch release) is elsewhere
        "ld returned 1 exit status",
        ": undefined reference to `",
        'error: identifier "',
        "error: no matching function for call to",
        "Could not build wheels for",
        # any header not found, any name the headers do not declare: the class is read from the line
        # (kinds/compiler.py); a CUDA toolkit's or Python's header has its own anchor above
        *diagnostics.HEADER_ANCHORS,
        *diagnostics.SOURCE_ANCHORS,
        *build_tools.GENERIC,
        *torch_cmake.GENERIC,
    ),
    anchors=(
        "is greater than the maximum required version by CUDA",
        "mismatches the version that was used to compile",
        "unsupported GNU version",
        "CUDA_HOME environment variable is not set",
        # torch/utils/cpp_extension.py's CUDA_NOT_FOUND_MESSAGE (_check_cuda_version: no CUDA_HOME found)
        "CUDA was not found on the system, please set the CUDA_HOME",
        "Error building extension",
        # nvcc's "nvcc fatal   : Unsupported gpu architecture 'compute_86'", also as users quote it in prose
        # ("nvcc fatal unsupported gpu architecture"): the capital is left out so that both are read
        "nsupported gpu architecture",
        "nvcc' failed with exit",
        "Error compiling objects for extension",
        "Ninja is required to load C++ extensions",
        "ninja is required to build cuda extension",
        "the VC environment is activated but DISTUTILS_USE_SDK is not set",
        "Command '['ninja', '-v'",
        "fatal error: cuda",
        "fatal error: cublas",
        "fatal error: cusparse",
        "fatal error: curand",
        "fatal error: cusolver",
        "fatal error: cufft",
        "fatal error: nvToolsExt",
        "fatal error: Python.h",
        "Command '['which', 'c++']' returned non-zero exit status",
        "cannot execute 'cc1plus'",
        "Microsoft Visual C++ 14.0 or greater is required",
        "MSVC is required to load C++ extensions",
        "unsupported Microsoft Visual Studio version",
        "Cannot find compiler 'cl.exe' in PATH",
        "Value 'c++17' is not defined for option 'std'",
        "Unknown option '-generate-dependencies-with-compile'",
        "does not match the version used to compile Pytorch binaries",
        "FlashAttention is only supported on CUDA",
        "Unknown option '--generate-dependencies-with-compile'",
        "is not defined for option 'gpu-name'",
        "parameter packs not expanded with '...'",
        "fatal error: 'cu",
        "' failed with exit",
        "C++17 or later compatible compiler is required",
        "Failed building wheel for",
        "Command errored out with exit status",
        "cannot find -l",
        "ninja: build stopped",
        "is less than the minimum required version by CUDA",
        "nvcc not found at '",
        "DeepSpeed Op Builder: Installed CUDA version",
        # DeepSpeed 0.3-0.8's op_builder/builder.py assert_no_cuda_mismatch: the same refusal as a bare Exception,
        # without the "DeepSpeed Op Builder" prefix 0.8.1 added
        "unable to compile cuda/cpp extensions without a matching cuda version",
        "Unable to JIT load the",
        "op due to ninja not being installed",
        "CUDA_HOME does not exist, unable to compile CUDA op",
        "unable to compile CUDA op(s)",
        "op due to no compute capabilities remaining",
        "found no CUDA devices. Set TORCH_CUDA_ARCH_LIST",
        "cannot probe CUDA device capabilities in a forked subprocess",
        "object has no attribute 'ds_opt_adam'",
        "Unknown CUDA arch (",
        "error MSB6006:",
        "error MSB3721:",
        "ld returned 1 exit status",
        ": undefined reference to `",
        'error: identifier "',
        "error: no matching function for call to",
        "Could not build wheels for",
        "' failed: No such file or directory",
        *diagnostics.HEADER_ANCHORS,
        *diagnostics.SOURCE_ANCHORS,
        *build_tools.ANCHORS,
        *torch_cmake.ANCHORS,
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "DeepSpeed JIT builder for",
        "Unknown compute capability",
    ),
    confirm=_not_triton_ptx,
    # an extension's source written for another torch / CUDA release fails the same way as a broken toolkit
    also=(
        Alternative(
            "broken_install",
            "a CUDA build of Triton under a ROCm torch on an AMD GPU (its gfx number read as the sm_ target)",
            "Reinstall torch and its ROCm Triton together (pip uninstall triton pytorch-triton-rocm, then the ROCm "
            "torch wheel, which pins pytorch-triton-rocm), so that no CUDA triton is left in the environment.",
            when=("triton_ptx",),
            first_when=("triton_ptx", "saw_rocm"),
            because="the log shows a ROCm torch or an AMD GPU: {saw_rocm}",
            told_by='python -c "import torch; print(torch.__version__, torch.version.hip, '
            'torch.cuda.get_device_name())": a +rocm build and an AMD GPU mean a CUDA Triton under ROCm.',
        ),
        Alternative(
            "library_version_bug",
            "a bug of the release of the package being built, which a later one (or a newer commit) fixes",
            "Install the release of the package written for the torch installed (or the torch it was written "
            "for); the project's issues or a newer commit usually carry the port.",
            when=("source_error", "torch_api", "torch_symbol"),
            unless=("cccl_member",),  # a CCCL name CUDA 13 removed: the cause and its fix say both (cccl.py)
        ),
        Alternative(
            "dependency_version",
            "an extension whose source does not fit the installed torch or CUDA release",
            "Install the extension's release built for this torch (its prebuilt wheel for torch X / CUDA Y, or "
            "pip install '<package>==<version>' that its README lists for your torch), or the torch release it "
            "supports; an `error: identifier ... is undefined` or `no matching function` names the API that "
            "changed.",
            when=("compile_error", "extension", "source_error", "torch_api", "torch_symbol"),
            unless=("cccl_member",),
            # torch's old C++ API in the compiler's error: the source and the torch installed are of different
            # releases (how versions.py reads AT_CHECK undeclared and THC/THC.h missing), not a broken toolkit
            first_when=("legacy_torch_api",),
            because="the compiler's error names {legacy_torch_api}, torch C++ API only older releases have",
            told_by="python -c 'import torch; print(torch.__version__)' against the torch the extension's README or "
            "setup.py names, and the first compiler error: a name of torch's (at::, c10::, TH) or of CUDA's.",
        ),
        Alternative(
            "cuda_unavailable",
            "a machine or torch build the op cannot run on (no CUDA GPU visible, a CPU-only torch, a GPU the op "
            "does not support)",
            "Check that this torch sees the GPU: python -c 'import torch; print(torch.version.cuda, "
            "torch.cuda.is_available())' (None or False: install the CUDA build of torch, pip install torch "
            "--index-url https://download.pytorch.org/whl/cu121); `ds_report` lists which ops are compatible "
            "here and why not.",
            when=("jit_incompatible",),
        ),
    ),
    # DeepSpeed prints the mismatch as a warning too, when the pair is known to work or DS_SKIP_CUDA_CHECK=1;
    # setuptools' "command '...' failed with exit" counts only for a compiler
    reject=R(
        # pip's legacy "Command errored out" counts for setup.py's build commands only (egg_info, reading the
        # package's metadata, fails for other reasons: a dependency missing in pip's isolated build)
        r"\A[^\n]*Command errored out with exit status \d+:(?![^\n]*'? (?:install|bdist_wheel|develop)\b)|"
        r"accepting this combination|Allowing this combination|"
        r"^(?![^\n]*(?:gcc|g\+\+|c\+\+|nvcc|cl\.exe|clang|hipcc|ninja)['\s])[^\n]*command '[^'\n]*' failed with exit|"
        + diagnostics.NOT_A_DIAGNOSTIC
    ),
    span=2,
    facts=(
        R(
            r"version of (?P<compiler>g\+\+|gcc|c\+\+|clang\+\+|clang) \((?P<compiler_version>[\d.]+)\) is greater "
            r"than the maximum required version by CUDA (?P<cuda_version>[\d.]+) \((?P<max_version>[\d.]+)\)"
        ),
        # torch 2.x: the bound is exclusive and comes at the end ("... adequate version of g++ (>=6.0.0, <12.0).")
        R(
            r"version of (?P<compiler>g\+\+|gcc|c\+\+|clang\+\+|clang) \((?P<compiler_version>[\d.]+)\) is greater "
            r"than the maximum required version by CUDA (?P<cuda_version>[\d.]+)\. Please make sure to use an "
            r"adequate version of [\w+]{1,10} \(>=[\d.]+, <(?P<max_excluded>\d+)\.0\)"
        ),
        R(r"gcc versions later than (?P<max_gcc>\d+) are not supported"),
        R(
            r"detected CUDA version \((?P<cuda_version>[\d.]+)\) mismatches the version that was used to "
            r"compile\s*PyTorch \((?P<torch_cuda>[\d.]+)\)"
        ),
        # torch 2.x's cpp_extension.py raises RuntimeError(CUDA_MISMATCH_MESSAGE, found, torch's): the message with
        # its %s unfilled, the versions after it ("compilePyTorch": the constant's pieces join without a space)
        R(
            r"mismatches the version that was used to compile\s*PyTorch \(%s\)[^'\n]{0,80}', "
            r"'(?P<cuda_version>[\d.]+)', '(?P<torch_cuda>[\d.]+)'"
        ),
        # NVIDIA apex's setup.py (check_cuda_torch_binary_vs_bare_metal): the nvcc on PATH against torch's CUDA
        R(r"Pytorch binaries were compiled with Cuda (?P<torch_cuda>\d+(?:\.\d+)?)"),
        # flash-attn's setup.py: the nvcc it found is older than it builds with
        R(r"(?P<flash_attn_cuda>FlashAttention is only supported on CUDA (?P<min_cuda>[\d.]+) and above)"),
        # an architecture nvcc (or ptxas) does not know: too new for the toolkit, or one it dropped (build_tools)
        R(r"[Uu]nsupported gpu architecture '(?P<gpu_arch>compute_\w+)'"),
        R(r"Unknown CUDA arch \((?P<torch_arch>[^)\n]{1,60})\) or GPU not supported"),
        R(r"(?P<no_cuda_home>CUDA_HOME environment variable is not set|CUDA was not found on the system)"),
        R(r"Error building extension '(?P<extension>[\w.\-]{1,100})'"),
        R(r"Failed building wheel for (?P<extension>[\w.\-]{1,100})"),
        R(r"Could not build wheels for (?P<extension>[\w.\-]{1,100})"),
        R(r"(?P<pip_failed>Failed building wheel for|Could not build wheels for)"),
        # pip before 21.2 ran a source package's setup.py itself (install, bdist_wheel, develop) and said only
        # that it failed; the package is the folder pip unpacked it into (pip-install-*/<name>[_<hash>]/)
        R(
            r"Command errored out with exit status \d+: [^\n]{0,400}?pip-(?:install|req-build)-\w+[\\/]+"
            r"(?P<extension>[A-Za-z][\w.\-]{0,99}?)(?:_[0-9a-f]{32})?[\\/]+setup\.py[^\n]{0,2000}?'?"
            r" (?P<pip_setup>install|bdist_wheel|develop)\b"
        ),
        R(
            r"error: command '(?:[^'\n]{0,200}/)?(?P<missing_compiler>[\w.+-]{1,60})' failed: No such file or directory"
        ),
        R(
            r"fatal error: '?(?P<missing_header>(?!cutlass)(?:cu|nv)[\w/.]{0,60}\.h)'?(?:: No such file| file not found)"
        ),
        R(r"(?P<nvcc_std>nvcc fatal\s*: Value 'c\+\+17' is not defined for option 'std')"),
        # cpp_extension passes --generate-dependencies-with-compile to nvcc from CUDA 10.2 on (it reads
        # torch.version.cuda, not the nvcc that runs): an older nvcc first on PATH refuses it
        R(r"(?P<nvcc_old>nvcc fatal\s*: Unknown option '-?-generate-dependencies-with-compile')"),
        R(r"Value '(?P<gpu_arch>(?:sm|compute)_\d+\w?)' is not defined for option 'gpu-name'"),
        R(r"(?P<packs>parameter packs not expanded with '\.\.\.')"),
        R(r"fatal error: (?P<python_headers>Python\.h): No such file"),
        R(r"(?P<no_cxx>Command '\['which', 'c\+\+'\]' returned non-zero exit status)"),
        R(r"(?P<no_cc1plus>(?:(?P<gcc_driver>[\w.+-]{1,60}): )?fatal error: cannot execute 'cc1plus')"),
        R(
            r"(?P<msvc>Microsoft Visual C\+\+ 14\.0 or greater is required|MSVC is required to load C\+\+ extensions|"
            r"unsupported Microsoft Visual Studio "
            r"version|Cannot find compiler 'cl\.exe' in PATH)"
        ),
        R(r"(?P<no_ninja>Ninja is required|ninja is required to build cuda extension)"),
        R(r"(?P<vc_without_sdk>the VC environment is activated but DISTUTILS_USE_SDK is not set)"),
        R(r"(?P<old_compiler>C\+\+17 or later compatible compiler is required)"),
        R(r"cannot find -l(?P<missing_lib>[\w+-]{1,60})"),
        R(
            r"version of (?P<compiler>g\+\+|gcc|c\+\+|clang\+\+|clang) \((?P<compiler_version>[\d.]+)\) is less "
            r"than the minimum required version by CUDA (?P<cuda_version>[\d.]+) \((?P<min_version>[\d.]+)\)"
        ),
        R(
            r"(?P<no_nvcc>nvcc not found at '[^'\n]{1,200}'|Unable to run [^\n,]{1,200}, unable to compile CUDA op)"
        ),
        R(
            r"(?P<ds_builder>DeepSpeed Op Builder): Installed CUDA version (?P<cuda_version>[\d.]+) does not match"
        ),
        R(
            r"Installed CUDA version (?P<cuda_version>[\d.]+) does not match the version torch was compiled with "
            r"[\d.]+, (?P<ds_builder>unable to compile cuda/cpp extensions)"
        ),
        R(r"does not match the version torch was compiled with (?P<torch_cuda>\d+\.\d+)"),
        R(r"(?P<no_cuda_home>CUDA_HOME does not exist), unable to compile CUDA op"),
        R(r"(?P<ds_builder>unable to compile CUDA op)"),  # DeepSpeed's words: its op builder
        R(r"Unable to JIT load the (?P<op>\w+) op due to (?P<why>[^\n]{1,200})"),
        R(r"(?P<jit_incompatible>op due to it not being compatible due to hardware/software issue)"),
        R(
            r"(?P<ds_arch>Unable to load (?P<op>\w+) op due to no compute capabilities remaining after filtering|"
            r"DeepSpeed JIT builder for '(?P<op2>\w+)' (?:found no CUDA devices|cannot probe CUDA device "
            r"capabilities in a forked subprocess))"
        ),
        R(r"'DeepSpeedCPUAdam' object has no attribute '(?P<cpu_adam_missing>ds_opt_adam)'"),
        R(r"(?P<msbuild>error MSB(?:6006|3721)):"),
        R(
            r"(?P<compile_error>collect2: error: ld returned 1 exit status|undefined reference to `[^'\n]{1,120}'|"
            r"error: identifier \"[^\"\n]{1,80}\" is undefined|error: no matching function for call to [^\n]{1,120})"
        ),
        R(r"error MSB(?:6006|3721):[^\n]*\[(?P<msbuild_project>[^\]\n]{1,200}\.vcxproj)\]"),
        diagnostics.HEADER,
        diagnostics.SOURCE_ERROR,
        diagnostics.TORCH_API,
        diagnostics.LEGACY_TORCH_API,
        diagnostics.CUDA_INTRINSIC,
        diagnostics.TORCH_SYMBOL,
        diagnostics.LIBRARY_SYMBOL,
        *build_tools.FACTS,
        *torch_cmake.FACTS,
        *cccl.FACTS,
    ),
    describe=_build,
)


# the NVIDIA driver's own libraries: one that cannot be opened means no driver (kinds/cuda.py)
DRIVER_LIBRARY = R(r"(?:libcuda|libnvidia-ml)\.so[.\d]*: cannot open shared object file")


def _installed_package(library: str) -> str | None:
    """The package a compiled module's path is in (``.../site-packages/torch_scatter/_version_cuda.so`` ->
    ``torch_scatter``; pip takes it: ``_`` and ``-`` are one), None outside a package folder there."""
    package = installed_package(library)
    return package if package != "torch" else None


# the compiled packages users install beside torch, as a sentence or a pip line spells them ("flash attn",
# "flash-attn", "flash_attn"): the loader's line without a path names its package no other way
_COMPILED_NAMES = (
    r"flash[-_ ]?attn|xformers|mamba[-_ ]ssm|causal[-_ ]conv1d|torch[-_ ]scatter|torch[-_ ]sparse|"
    r"torch[-_ ]cluster|torch[-_ ]spline[-_ ]conv|pyg[-_ ]lib|torchvision|torchaudio|mmcv|detectron2|pytorch3d|"
    r"transformer[-_ ]engine|bitsandbytes|torchao|apex"
)
NAMED_PACKAGE = R(rf"(?i)(?<![\w.\-/])(?P<named_package>{_COMPILED_NAMES})(?![\w\-/])")
OTHER_NAMED_PACKAGE = R(
    rf"(?i)(?<![\w.\-/])(?:{_COMPILED_NAMES})(?![\w\-/]).*(?<![\w.\-/])(?P<other_named_package>"
    rf"{_COMPILED_NAMES})(?![\w\-/])"
)


# a Python extension module's file (``_C.cpython-310-x86_64-linux-gnu.so``, ``_ext.abi3.so``) in a package folder
# outside site-packages: a source tree built in place (python setup.py build develop, pip install -e .)
_SOURCE_TREE_MODULE = re.compile(
    r"(?:^|[/\\])(?P<tree_package>[A-Za-z_]\w*)[/\\]\w+\.(?:cpython-[\w-]+|abi3)\.so$"
)


def _source_tree_package(library: str) -> str | None:
    """The package folder of an extension module built in a source tree (``../maskrcnn_benchmark/_C.cpython-35m-
    x86_64-linux-gnu.so`` -> ``maskrcnn_benchmark``), None for an installed one or a shared library (libfoo.so)."""
    if not library or installed_package(library):
        return None
    found = _SOURCE_TREE_MODULE.search(library)
    return found["tree_package"] if found else None


def _pip_name(name: str) -> str:
    """``flash attn`` / ``flash_attn`` -> ``flash-attn``: the name pip installs."""
    return re.sub(r"[-_ ]", "-", name.lower())


def _extension_package(facts: dict) -> str | None:
    """The package whose compiled module did not load: the site-packages folder of its path, else the installed
    package whose frame raised the ImportError, else the one compiled package the error's line names (two
    different ones named: which failed is not said, so none)."""
    library = facts.get("library", "")
    package = _installed_package(library) if library else None
    if package:
        return package
    raised = facts.get("raised_in_package")
    if raised and raised != "torch":
        return raised
    named = facts.get("named_package")
    other = facts.get("other_named_package")
    if named and (not other or _pip_name(other) == _pip_name(named)):
        return _pip_name(named)
    return None


def _import(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    said = (
        compiled_ops.explain(facts, ctx.facts)
        or prebuilt.explain(facts, ctx.facts)
        or extension_packages.explain(facts, ctx.facts)
    )
    if said:
        return said[0] + on_ranks(hits), said[1]
    library = facts.get("library", "a compiled module")
    if facts.get("ds_prebuilt"):
        what = facts["ds_prebuilt"]
        built = (
            f" ({facts['ds_built']} at install, {facts['ds_runtime']} now)" if facts.get("ds_built") else ""
        )
        summary = f"DeepSpeed's prebuilt ops were compiled against another {what}{built}"
        fix = (
            "DeepSpeed was installed with its ops compiled (DS_BUILD_OPS=1, or a wheel) for the torch/CUDA of that "
            "moment, and torch changed since. Reinstall it against the torch installed now:\n"
            "pip uninstall -y deepspeed && DS_BUILD_OPS=1 pip install deepspeed --no-cache-dir --no-build-isolation\n"
            "(or without DS_BUILD_OPS, to build each op just in time), or go back to the torch it was built with."
        )
        return summary, fix
    if facts.get("xformers_no_cuda"):
        return (
            "xformers has no memory-efficient attention operator to run: the xformers installed was not built "
            "with CUDA support (a wheel for another torch / CUDA, or a CPU-only build)",
            "xformers ships wheels built for one torch release and its CUDA; pip installing it beside another torch "
            "(or from source without nvcc) leaves its CUDA kernels out. Install the xformers build that matches the "
            "torch installed (python -m xformers.info lists what was built):\n"
            "pip install -U xformers --index-url https://download.pytorch.org/whl/cu121   # your torch's CUDA\n"
            "(pip install -U xformers --no-deps keeps torch as it is), or turn xformers off "
            "(--enable_xformers_memory_efficient_attention off, or torch's scaled_dot_product_attention).",
        )
    if facts.get("jit_cache") and not facts.get("symbol"):
        summary = (
            f"the just-in-time build of {facts['jit_cache']} is missing: its build failed or was interrupted"
        )
        fix = (
            "torch's extension builder (DeepSpeed's ops, StyleGAN's plugins, other JIT extensions) left a "
            "half-built folder in ~/.cache/torch_extensions (TORCH_EXTENSIONS_DIR): the first build error in the "
            "log says why it failed (ninja, nvcc, the compiler), or two ranks built it at once. Running ninja -v "
            "in that folder shows the compiler's error (and finishes the build once it is fixed); or delete it and "
            "build again on one rank first:\nrm -rf ~/.cache/torch_extensions   # then rerun; `ds_report` checks "
            "DeepSpeed's ops"
        )
        return summary, fix
    if facts.get("no_kernel_op"):
        namespace, backend = facts["no_kernel_op"].split("::")[0], facts["no_kernel_backend"]
        summary = (
            f"{facts['no_kernel_op']} has no {backend} kernel in the build loaded: the compiled {namespace} "
            f"extension was built without {backend} (or an older build of it is loaded instead)"
        )
        fix = (
            f"Ops of {namespace}:: come from its compiled extension, and this one was loaded without {backend} "
            "kernels: a CPU-only build (no nvcc/CUDA_HOME when it was built), a stale build that shadows the "
            "right one (two _C*.so files, an old build/ folder first on the path), or a wheel for another torch "
            f"or CUDA. See which file is loaded (python -c 'import {namespace}; print({namespace}.__file__)'), "
            "remove stale builds (pip uninstall until it is gone; rm -rf build/ and stray .so files), and "
            f"rebuild or reinstall it with {backend} for the torch installed (nvcc on PATH, CUDA_HOME set, "
            "FORCE_CUDA=1 where the package reads it; torchvision/torchaudio: the wheel from the same index "
            "as torch)."
        )
        return summary, fix
    if facts.get("apex"):
        summary = "the fused optimizers need NVIDIA apex built with its C++/CUDA extensions, which this process lacks"
        fix = (
            "Install apex with its extensions (a plain `pip install apex` is an unrelated package, and apex "
            "built without --cuda_ext has no fused kernels), with the nvcc of torch's CUDA on PATH / CUDA_HOME:\n"
            "git clone https://github.com/NVIDIA/apex && cd apex && pip install -v --no-build-isolation "
            "--config-settings '--build-option=--cpp_ext' --config-settings '--build-option=--cuda_ext' .\n"
            "or choose a non-fused optimizer (timm: --opt momentum / adamw instead of fusedmomentum / fusedadam)."
        )
        return summary, fix
    if facts.get("glibcxx"):
        summary = f"the libstdc++ loaded is older than a compiled module needs ({facts['glibcxx']} not found)"
        fix = (
            "A module was built with a newer compiler than the libstdc++ the process loads (often the system's, "
            "or an old one in a conda env). Put a newer libstdc++ first: conda install -c conda-forge "
            "libstdcxx-ng (in that env), or LD_LIBRARY_PATH=$CONDA_PREFIX/lib; check with "
            "strings $(find / -name 'libstdc++.so.6' 2>/dev/null | head -1) | grep GLIBCXX."
        )
        return summary, fix
    if facts.get("symbol", "").startswith("nccl"):
        summary = f"{library} needs {facts['symbol'][:60]}, which the NCCL library loaded does not have"
        fix = (
            "torch loaded a libnccl older than the one it was built with, usually a system NCCL found first "
            "through LD_LIBRARY_PATH or LD_PRELOAD: remove it from there, or install the nvidia-nccl-cu* wheel "
            "version this torch asks for (pip show torch lists it)."
        )
        return summary, fix
    if facts.get("symbol") and not _torch_abi(facts["symbol"]):
        summary = f"{library} does not load: undefined symbol {facts['symbol'][:120]}"
        package = _extension_package(facts) or "<that package>"
        fix = (
            "The module needs a symbol the libraries loaded before it do not provide. Most often it was built "
            "against another torch (or CUDA): rebuild or reinstall it against the torch installed now:\n"
            f"pip install --force-reinstall --no-build-isolation --no-cache-dir {package}\n"
            "If the symbol is torch's own and the extension is freshly built, the torch build may not export "
            "it: reinstall or upgrade torch."
        )
    elif facts.get("symbol") and _apex_module(library):
        summary = (
            f"{_apex_module(library)}, a compiled extension of NVIDIA apex, was built against another torch: "
            f"undefined symbol {facts['symbol'][:120]}"
        )
        fix = (
            "apex installs its CUDA extensions as top-level modules (fused_layer_norm_cuda, amp_C, apex_C, ...), "
            "compiled for the torch of the day it was built; this torch is another one. Either rebuild apex "
            "against the torch installed now (pip uninstall -y apex, then from a clone of NVIDIA/apex: pip install "
            "-v --no-build-isolation --config-settings '--build-option=--cpp_ext' --config-settings "
            "'--build-option=--cuda_ext' .), or uninstall apex if nothing needs it: PyTorch has its own mixed "
            "precision (torch.amp), fused AdamW and layer norm, and libraries that use apex only when it imports "
            "(transformers, timm, diffusers) fall back to them without it."
        )
        return summary, fix
    elif facts.get("symbol"):
        summary = f"{library} was built against another torch: undefined symbol {facts['symbol'][:120]}"
        if facts.get("old_singleton"):
            summary = (
                f"{library} was built against a torch before 1.1: it needs "
                "at::UndefinedTensorImpl::_singleton, which torch 1.1 moved to c10::"
            )
        package = _extension_package(facts) or "<that package>"
        if library == "a compiled module" and package != "<that package>":
            summary = f"a compiled module of {package} was built against another torch: undefined symbol {facts['symbol'][:120]}"
        fix = (
            "A compiled extension must be built against the torch (and CUDA) it runs with. Rebuild or "
            "reinstall it now that torch is installed:\n"
            f"pip install --force-reinstall --no-build-isolation --no-cache-dir {package}\n"
            f"or install the {package} wheel published for your torch and CUDA version."
        )
        paired = extension_packages.pairing(library) or extension_packages.PAIRING.get(
            package.replace("-", "_")
        )
        if paired:  # the package's own way to the build for this torch
            fix += "\n" + paired + "."
        tree = _source_tree_package(library) if package == "<that package>" else None
        if tree:
            fix = (
                f"{tree} is loaded from a source tree, where its compiled module was built against another torch "
                f"(or CUDA) than the one installed now. Rebuild it in that tree: remove the old build (rm -rf "
                f"build/ and the .so files under {tree}/), then python setup.py build develop (or pip install -e . "
                "--no-build-isolation), with the torch it will run with installed; or install the torch the "
                "project's README names for it."
            )
    else:
        summary = f"cannot load {library}: the shared library is not installed or not on the search path"
        fix = (
            f"{library} belongs to a CUDA (or other) runtime this package was built for: install the package "
            "build that matches torch.version.cuda, or that runtime; `ldd` on the module shows what is missing."
        )
    return summary, fix


# the top-level extension modules NVIDIA apex's setup.py builds (CppExtension/CUDAExtension names: --cpp_ext,
# --cuda_ext and the contrib flags), which sit directly in site-packages, outside the apex package folder
APEX_MODULES = (
    "apex_C",
    "amp_C",
    "syncbn",
    "fused_layer_norm_cuda",
    "mlp_cuda",
    "fused_dense_cuda",
    "fused_weight_gradient_mlp_cuda",
    "distributed_adam_cuda",
    "distributed_lamb_cuda",
    "xentropy_cuda",
    "focal_loss_cuda",
    "fused_adam_cuda",
    "fused_lamb_cuda",
)


def _apex_module(library: str) -> str | None:
    """The apex extension module a compiled file is (``.../fused_layer_norm_cuda.cpython-310-...so`` ->
    ``fused_layer_norm_cuda``), None for any other file."""
    name = re.split(r"[/\\]", library)[-1].split(".")[0]
    return name if name in APEX_MODULES else None


def _torch_abi(symbol: str) -> bool:
    """Whether an undefined symbol is a C++ name of torch's own libraries (c10::, at::, torch::, caffe2::):
    an extension that misses one was built against another torch, whatever else is going on (except the
    undefined tensor's singleton, which every torch exports: IMPORT_TORCH_FIRST reads that one)."""
    return bool(re.match(r"_ZN?K?(?:2at|3c10|5torch|6caffe2)|nccl", symbol))


EXTENSION_IMPORT = Recogniser(
    # the dynamic loader's messages as Python's ImportError prints them
    kind="extension_import",
    templates=(
        "system:ld-undefined-symbol",
        "system:ld-cannot-open-shared-object",
        "system:glibcxx-not-found",
        "third_party:timm-apex-and-cuda-required-for-fused",  # timm's optimizer factory: apex's fused optimizers
        # DeepSpeed op_builder/builder.py: ops prebuilt at install against another torch / CUDA
        "deepspeed:pytorch-version-mismatch-deepspeed-ops-were",
        "deepspeed:cuda-version-mismatch-deepspeed-ops-were",
        # aten/src/ATen/core/dispatch/OperatorEntry.cpp: an op of an extension's namespace without a kernel
        # for the GPU backend
        "torch_native:could-not-run-with-arguments-from-backend",
        "third_party:xformers-not-built-with-cuda",
        # glibc's loader on an older Linux; bitsandbytes' and xformers' own load checks
        *prebuilt.TEMPLATES,
        *compiled_ops.TEMPLATES,
        *extension_packages.TEMPLATES,  # the packages beside torch: their own load checks
    ),
    title="compiled extension does not load",
    anchors=(
        "undefined symbol",
        "cannot open shared object file",
        "version `GLIBCXX_",
        "APEX and CUDA required for fused optimizers",
        "DeepSpeed ops were compiled and installed with a different version",
        "' with arguments from the '",
        # xformers/ops/fmha: every memory-efficient attention operator refused because the package was built
        # without CUDA (a wheel for another torch / CUDA, or a CPU build)
        "wasn't build with CUDA support",
        *prebuilt.ANCHORS,
        *compiled_ops.ANCHORS,
        *extension_packages.ANCHORS,
        *extension_packages.MODULE_ANCHORS,
    ),
    match=R(
        # (MKL's iJIT_* missing under libtorch_cpu.so is the conda environment's MKL: broken_install)
        r"(?:Import|OS)Error: [^\n]{0,300}(?:undefined symbol(?!: iJIT_)|cannot open shared object file|"
        r"version `GLIBCXX_)|"
        # torch's just-in-time build folder (cpp_extension.load: ~/.cache/torch_extensions/<name>/<name>.so, the
        # one StyleGAN's custom_ops and DeepSpeed's op builders load) named by the loader's own words, pasted
        # without the ImportError around them
        r"torch_extensions[/\\][^\s:]{0,200}\.so: cannot open shared object file|"
        # the loader's words for one of torch's own C++ names, pasted without the ImportError around them
        r"undefined symbol: _ZN(?:3c10|2at|5torch|6caffe2)\w|"
        # torch's own ops (aten::, prim::) and the quantized ones, CPU-only by design, are not an extension's
        r"Could not run '(?P<no_kernel_op>(?!aten::|prim::|_?quantized::)\w{1,60}::\w{1,100})' with arguments "
        r"from the '(?P<no_kernel_backend>CUDA|HIP)' backend|"
        r"(?P<apex>APEX and CUDA required for fused optimizers)|"
        r"(?P<ds_prebuilt>PyTorch|CUDA|HIP) version mismatch! DeepSpeed ops were compiled|"
        r"(?P<xformers_no_cuda>xFormers wasn't build with CUDA support)|"
        + prebuilt.MATCH.pattern
        + "|"
        + compiled_ops.MATCH.pattern
        + "|"
        + extension_packages.MATCH.pattern
    ),
    facts=(
        R(
            r"(?P<library>[\w.\-/+]{0,200}libstdc\+\+\.so[\w.]*): version `(?P<glibcxx>GLIBCXX_[\d.]+)' not found"
        ),
        R(r"(?P<library>[\w.\-/]{1,200}\.so[\w.]*): undefined symbol: (?P<symbol>\S{1,400})"),
        R(r"undefined symbol: (?P<plain_symbol>(?!_Z|nccl)[A-Za-z]\w{0,200})"),
        R(r"undefined symbol: (?P<symbol>_ZN\w{1,400})"),
        # at::UndefinedTensorImpl::_singleton: torch 1.1 moved it to c10::, so an extension built for an older
        # torch misses it -- and so does one whose torch is not loaded yet
        R(r"undefined symbol: (?P<old_singleton>_ZN2at19UndefinedTensorImpl10_singletonE)"),
        NAMED_PACKAGE,
        OTHER_NAMED_PACKAGE,
        R(r"(?P<library>[\w.\-]{1,200}\.so[\w.]*): cannot open shared object file"),
        R(r"(?P<jit_cache>torch_extensions[/\\][^\s:]{0,200}\.so)"),
        R(
            r"Install \w+ version=(?P<ds_built>[\w.+]{1,40}), Runtime \w+ version=(?P<ds_runtime>[\w.+]{1,40})"
        ),
        *prebuilt.FACTS,
        *compiled_ops.FACTS,
        *extension_packages.FACTS,
    ),
    # "cannot open shared object file" is a missing runtime or a broken install: certain only for a compiled
    # module that does not match (torch's own C++ symbol missing, a libstdc++ too old); a plain C symbol
    # missing has other causes too (a torch build that does not export it, the load order)
    # an op without a GPU kernel may also be one its package never wrote for the GPU: only likely
    confirm=lambda hits, ctx: any(
        "glibcxx" in h.facts
        or "ds_prebuilt" in h.facts
        or "xformers_no_cuda" in h.facts
        or (_torch_abi(h.facts.get("symbol", "")) and "old_singleton" not in h.facts)
        or prebuilt.decided(h.facts, ctx.facts)
        or compiled_ops.decided(h.facts, ctx.facts)
        or extension_packages.decided(h.facts, ctx.facts)
        for h in hits
    ),
    # the driver's own library missing: no driver (kinds/cuda.py, cuda_unavailable); torchvision/io/image.py's
    # warning that its image.so did not load ("you can ignore this warning" unless torchvision.io decodes images:
    # the run goes on, and a torchvision of another torch fails later in its ops, extension_packages.py)
    # PyG's torch_geometric/typing.py warns the same way when an optional extension does not import, and goes on
    # without it ("Disabling its usage"): what then fails names it (extension_packages.py reads that)
    reject=R(
        DRIVER_LIBRARY.pattern
        + r"|UserWarning: Failed to load image Python extension|An issue occurred while importing '[\w-]{1,40}'\. "
        r"Disabling its usage"
    ),
    also=(
        Alternative(
            "import_torch_first",
            "the extension loaded before torch, whose libraries hold the symbol",
            "Import torch before the extension (import torch, then the extension; also in its package's "
            "__init__.py).",
            when=("old_singleton",),
        ),
        Alternative(
            "broken_install",
            "an installation that lacks one of its own pieces",
            "Reinstall the package that owns the library in the environment the job runs in (pip install "
            "--force-reinstall <package>; for torch, the wheel of the CUDA your driver supports), and check "
            "that no LD_LIBRARY_PATH points at another CUDA.",
        ),
        Alternative(
            "library_version_bug",
            "a torch build that does not export a symbol its extensions link against",
            "Reinstall or upgrade torch (pip install -U --force-reinstall torch, the wheel for your CUDA): a "
            "build that drops a symbol extensions need is fixed by the next one; then rebuild the extension.",
            when=("plain_symbol",),
        ),
        Alternative(
            "cuda_unavailable",
            "CUDA not available to torch in this process",
            "Check python -c 'import torch; print(torch.cuda.is_available())': False means a CPU-only torch or "
            "no usable GPU/driver (`torchdoctor env`).",
            when=("apex", "bnb_no_gpu"),
        ),
        Alternative(
            "cuda_library_path",
            "a CUDA runtime library the loader does not find on the library path",
            "Find libcudart.so (ls $CUDA_HOME/lib64 / the nvidia-cuda-runtime wheel's lib folder) and put its "
            "folder on LD_LIBRARY_PATH, or install the package release that uses torch's own CUDA libraries.",
            when=("bnb_setup",),
        ),
    ),
    describe=_import,
)


def _torch_first(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("always_exported"):
        what = "c10::UndefinedTensorImpl::_singleton, which every torch since 1.1 exports, is not loaded yet"
    else:
        what = f"{facts.get('torch_library', 'libc10.so')} (torch's own library) is not loaded yet"
    return (
        f"a compiled extension was loaded before torch: {what}",
        "torch's extensions link against its libraries (libc10.so, libtorch*.so) without a path to them; "
        "`import torch` loads them first. Import torch before the extension (import torch, then import "
        "<extension>; also in a package's __init__.py), and run with the Python whose site-packages has the "
        "torch the extension was built for (`python -c 'import torch; print(torch.__file__)'`).",
    )


# the undefined tensor's singleton (c10/core/UndefinedTensorImpl.h), a data symbol every torch since 1.1 exports
# and every extension that touches a Tensor links against: undefined, torch's libraries were not loaded at all (an
# extension built against another torch >= 1.1 finds this one and stops at a symbol that changed). Its at:: name,
# before torch 1.1, is an old build as often (EXTENSION_IMPORT reads that one, naming this reading too).
UNDEFINED_TENSOR_SINGLETON = "_ZN3c1019UndefinedTensorImpl10_singletonE"

IMPORT_TORCH_FIRST = Recogniser(
    # the dynamic loader's message for one of torch's own libraries (torch/lib): an extension links against
    # them without an rpath and relies on `import torch` having loaded them (torch/__init__.py _load_global_deps);
    # glibc's "undefined symbol" (ld.so, dlopen) for a symbol every torch exports says the same
    kind="import_torch_first",
    title="extension imported before torch",
    anchors=(
        *(
            f"{library}.so: cannot open shared object file: No such file or directory"
            for library in (
                "libc10",
                "libc10_cuda",
                "libtorch",
                "libtorch_cpu",
                "libtorch_cuda",
                "libtorch_python",
                "libshm",
            )
        ),
        f"undefined symbol: {UNDEFINED_TENSOR_SINGLETON}",
    ),
    templates=("system:ld-cannot-open-shared-object", "system:ld-undefined-symbol"),
    match=R(
        r"lib(?:c10|c10_cuda|torch|torch_cpu|torch_cuda|torch_python|shm)\.so: cannot open shared object file|"
        rf"undefined symbol: {UNDEFINED_TENSOR_SINGLETON}"
    ),
    facts=(
        R(r"(?P<torch_library>lib(?:c10|c10_cuda|torch|torch_cpu|torch_cuda|torch_python|shm)\.so)"),
        R(rf"undefined symbol: (?P<always_exported>{UNDEFINED_TENSOR_SINGLETON})"),
    ),
    # torch missing from the environment (or another env's extension) says the same
    confirm=lambda hits, ctx: False,
    absorbs=("extension_import",),
    also=(
        Alternative(
            "broken_install",
            "no torch (or another torch) in the environment the extension runs in",
            "Check `python -c 'import torch'` with the same Python; install the torch the extension was built "
            "for, or rebuild the extension against the torch installed.",
        ),
    ),
    describe=_torch_first,
)


def _build_isolation(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    other = installers.explain_undeclared(merged(hits))
    if other:
        return other[0] + on_ranks(hits), other[1]
    return (
        "pip (or uv) built the package in an isolated environment without torch: its setup imports torch and "
        "finds none" + on_ranks(hits),
        "pip builds a source package in a fresh environment holding only the build requirements it declares; a "
        "package whose setup.py imports torch (flash-attn, apex, DeepSpeed's ops, torch-scatter, mmcv, ...) needs "
        "the torch already installed: install torch (and ninja, packaging, wheel) first, then\n"
        "pip install <package> --no-build-isolation\n"
        "or install the package's prebuilt wheel for your torch and CUDA.",
    )


BUILD_ISOLATION = Recogniser(
    # pip/_internal/build_env.py: a PEP 517 build runs in an isolated environment; the package's setup.py then
    # raises CPython's "No module named 'torch'" there, and pip reports "Getting requirements to build wheel did
    # not run successfully" (pip/_internal/exceptions.py InstallationSubprocessError)
    kind="build_isolation",
    title="pip building without the installed torch (build isolation)",
    anchors=("No module named 'torch'", installers.UNDECLARED_ANCHOR),
    # uv names the package the build imported without declaring it (crates/uv-build-frontend)
    templates=("system:pip-build-no-module-torch", "build_tools:this-error-likely-indicates-that-depends"),
    facts=(installers.UNDECLARED,),
    # only inside a pip build of a package: elsewhere the same error is a run without torch installed
    requires=("pip_build",),
    # torch may be missing from the environment altogether, which the same build prints: only likely; uv's
    # hint says the build ran isolated and names what it lacked
    confirm=lambda hits, ctx: any("undeclared" in h.facts for h in hits),
    # the build's own failure lines (pip's "Failed building wheel for", uv's "Failed to build `...`") are what
    # the missing torch led to
    absorbs=("cuda_build",),
    also=(
        Alternative(
            "broken_install",
            "torch not installed in this environment at all",
            "Install torch into the environment pip installs into first (python -m pip install torch; check "
            "with python -c 'import torch'), then build the package again.",
        ),
    ),
    describe=_build_isolation,
)


def _shadowed(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    module = (
        "torch._C" if merged(hits).get("torch_c") else "a compiled _C module (torch._C when importing torch)"
    )
    return (
        f"{module} cannot be imported: Python is likely running inside a source tree whose package folder, "
        "never built there, shadows the installed package" + on_ranks(hits),
        "Python puts the current directory first on sys.path, so started inside a PyTorch checkout (or a "
        "package's source tree) `import torch` loads that tree's torch/ folder, which has no compiled _C until "
        "it is built in place. Run from another directory (cd ~, or the folder of your script), or build the "
        "checkout where it is (python setup.py develop). See which one is imported, from another directory: "
        "python -c 'import torch; print(torch.__file__)'.",
    )


TORCH_SHADOWED = Recogniser(
    # torch/__init__.py `from torch._C import *`, failing with CPython's ModuleNotFoundError (Python 3) or
    # ImportError "No module named _C" (Python 2, which names the last part only)
    kind="torch_shadowed",
    title="source tree shadowing the installed torch",
    anchors=("No module named 'torch._C'", "No module named torch._C", "No module named _C"),
    templates=("system:torch-c-not-importable", "system:python2-no-module-named-c"),
    match=R(r"No module named '?(?P<torch_c>torch\.)?_C'?(?![\w.])"),
    # a torch install that lost or never had its compiled part (an interrupted pip, a wheel for another
    # Python or platform) prints the same: only likely
    confirm=lambda hits, ctx: False,
    also=(
        Alternative(
            "broken_install",
            "a torch installation without its compiled part (interrupted, or built for another Python)",
            "Reinstall torch in the environment the job runs in: pip uninstall -y torch (until none is left), "
            "then pip install torch with the --index-url of your CUDA.",
        ),
    ),
    describe=_shadowed,
)


def _previous_python(version: str) -> str:
    """``3.12`` for ``3.13``: the release before the one a wheel is missing for (empty when not X.Y)."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return f"{m.group(1)}.{int(m.group(2)) - 1}" if m and int(m.group(2)) > 0 else ""


def _pinned(facts: dict, ctx: Context) -> tuple[str, str, bool] | None:
    """What the table of released wheels says about pip's requirement ``X==V`` (None: not pinned, not in it)."""
    if not facts.get("pip_version"):
        return None
    python = facts.get("python") or ctx.facts.get("python_version", "")
    return wheel_tags.explain_pin(
        facts["pip_package"],
        facts["pip_version"],
        facts.get("from_versions"),
        python,
        # pip prints its note on the releases it skipped before the refusal: read from the whole log
        ctx.facts.get("ignored_python", ""),
    )


def _no_wheel_decided(hits: list[Hit], ctx: Context) -> bool:
    """pip's, uv's and conda's own refusals decide for torch; for another package only the table does. A torch
    that another package's metadata asks for ("(from X)") is only likely: pip looks for one because the
    environment's torch (an older one, or conda's, which pip may not see) does not satisfy X."""
    if not installers.no_build_decided(hits, ctx):
        return False
    facts = merged(hits)
    if facts.get("required_by") or (facts.get("absent") and not facts.get("requirement")):
        # a package other than torch's with no release at all: a name the index lacks, or no index reached
        return False
    if not facts.get("pip_package") or facts["pip_package"].lower().startswith("torch"):
        return True
    said = _pinned(facts, ctx)
    return said is not None and said[2]


_no_wheel_decided.lowers_only = True  # type: ignore[attr-defined]  # docs/catalog.md: the anchors decide


def _no_wheel(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    said = installers.explain_no_build(facts)
    if said:
        return said[0] + on_ranks(hits), said[1]
    if facts.get("absent") and not facts.get("requirement"):
        # a package other than torch's that pip finds no release of at all (kinds/missing_packages.py)
        summary, fix = missing_packages.explain_no_release(facts)
        return summary + on_ranks(hits), fix
    table = _pinned(facts, ctx)
    if table is not None and (table[2] or not facts.get("local_tag")):
        return table[0] + on_ranks(hits), table[1]
    wanted = (facts.get("requirement") or facts.get("uv_package") or "torch").strip()
    python = facts.get("python") or ctx.facts.get("python_version", "")
    summary = f"the installer found no build of {wanted} for this Python, platform or index" + (
        f" (Python {python})" if python else ""
    )
    local = facts.get("local_tag", "")
    lines = [
        "pip / uv found no wheel (and no source) for the requested version on the indexes it was given. torch's "
        "CUDA builds (+cu118, +cu121, ...) live on PyTorch's own index, one per CUDA version, which must be "
        "given as an index URL, not a page of links:"
    ]
    if local.startswith("cu") or local == "cpu":
        lines.append(
            f"pip install {wanted.split('+')[0]} --index-url https://download.pytorch.org/whl/{local}"
        )
    else:
        lines.append(
            "pip install torch --index-url https://download.pytorch.org/whl/cu121   # your CUDA: cu118, cu124, ..."
        )
    older = _previous_python(python)
    lines.append(
        "A release has wheels only for the Python versions and platforms of its time: a Python newer than the "
        "release (or a platform it has none for) finds none"
        + (f": use Python {older} (or older) in this environment" if older else "; use an older Python")
        + ", or a torch release that supports it (pip download torch==<version> --no-deps lists the files; "
        "uv: --python 3.x)."
    )
    return summary + on_ranks(hits), "\n".join(lines)


NO_MATCHING_WHEEL = Recogniser(
    # pip's resolver (pip/_internal/resolution: "Could not find a version that satisfies the requirement",
    # "No matching distribution found for") and uv's ("... can't be installed because it doesn't have a source
    # distribution or wheel for the current platform"), for torch and its sibling packages: the index given has no
    # build of that version for this Python / platform
    kind="no_matching_wheel",
    title="no torch build for this Python, platform or index",
    anchors=(
        "Could not find a version that satisfies the requirement",
        "Could not find a final version that satisfies the requirement",
        "No matching distribution found for",
        "doesn't have a source distribution or wheel for the current platform",
        *installers.NO_BUILD_ANCHORS,
    ),
    templates=(
        "third_party:pip-could-not-find-version",
        "third_party:pip-no-matching-distribution",
        "third_party:pip-could-not-find-final-version",
        "third_party:uv-no-wheel-for-platform",
        # pip's Requires-Python and wheel-tag refusals, uv's tag and Python lines, conda's missing packages
        *installers.NO_BUILD_TEMPLATES,
    ),
    match=R(
        r"(?:Could not find a (?:final )?version that satisfies the requirement|No matching distribution found for) "
        rf"(?P<requirement>torch\w{{0,20}}(?:[=<>!~]=?[\w.*+]{{1,40}})?|{wheel_tags.released_pins()})(?![\w.\-])|"
        r"can't be installed because it doesn't have a source distribution or wheel for the current platform|"
        + installers.NO_BUILD.pattern
        + "|"
        + missing_packages.NO_RELEASE.pattern
    ),
    facts=(
        *installers.NO_BUILD_FACTS,
        wheel_tags.PIP_NOT_FOUND,
        missing_packages.NO_RELEASE,
        R(r"torch\w{0,20}==[\w.]{1,20}\+(?P<local_tag>cu\d{2,4}|cpu|rocm[\d.]{1,10})"),
        # uv names the package it could not place before the index it looked in
        R(r"(?P<uv_package>[\w.-]{1,60}==[\w.+]{1,40}) @ registry\+"),
        R(r"\b(?i:python) ?(?P<python>3\.\d{1,2})\b"),
        # pip names the package whose requirement it is resolving (pip/_internal/req/constructors.py: a
        # dependency's InstallRequirement is shown "(from X)")
        R(
            r"satisfies the requirement torch\w{0,20}[=<>!~]=?[\w.*+]{1,40} \(from (?!versions:)(?P<required_by>[A-Za-z][\w.\-]{0,60})"
        ),
    ),
    # pip's "no version" for another package is certain only where the table of its wheels decides; a Rust
    # build is only likely
    confirm=_no_wheel_decided,
    also=(
        Alternative(
            "dependency_version",
            "the environment's torch older than the package asking for it requires",
            "Another package requires a newer torch than the environment has, and pip cannot fetch one from the "
            "index it uses: install the torch it needs first, from PyTorch's index for your CUDA (pip install "
            "'torch>=<version>' --index-url https://download.pytorch.org/whl/<cuda>, or conda's pytorch channel), "
            "then the package (pip install <package> --no-deps if it should leave torch alone).",
            when=("required_by",),
        ),
    ),
    describe=_no_wheel,
)


RECOGNISERS = (
    BUILD_ISOLATION,
    NO_MATCHING_WHEEL,
    TORCH_SHADOWED,
    IMPORT_TORCH_FIRST,
    CUDA_BUILD,
    EXTENSION_IMPORT,
)
