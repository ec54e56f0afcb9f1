"""A process that loaded the wrong CUDA, cuDNN or MKL library.

Which libraries a process loaded: another CUDA toolkit's, found first, another cuDNN than torch's, or an Intel
MKL release without the symbols torch links against.

A torch wheel brings its CUDA libraries as pip packages (``site-packages/nvidia/<name>/lib``) and cuDNN with
them; a conda torch brings them into the environment. A CUDA toolkit or cuDNN installed on the machine, whose
folder ``LD_LIBRARY_PATH`` names, is found before them by the dynamic loader, and a library of another release
than the one torch was built with is what the process then runs with.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# glibc elf/dl-lookup.c prints "undefined symbol: %s%s%s", the symbol's version after ", version ": a CUDA
# library asking for a symbol of a companion library (CUDA 12's cuSPARSE links against libnvJitLink, cuBLAS
# against libcublasLt: torch/__init__.py preloads both for this reason) that the copy loaded is too old to have
_COMPANION = r"(?:nvJitLink|cublasLt)"
_COMPANION_SYMBOL = R(
    r"(?P<library>[\w.\-/+]{0,200}?lib\w+\.so[\w.]*): undefined symbol: (?P<symbol>(?:__)?"
    + _COMPANION
    + r"\w{1,80})(?:, version (?P<companion>lib"
    + _COMPANION
    + r"\.so\.\d+))?"
)
# nvJitLink's symbols carry the release that added them: __nvJitLinkComplete_12_4 needs libnvJitLink 12.4+
_SINCE = R(r"undefined symbol: __nvJitLink\w*?_(?P<major>1\d)_(?P<minor>\d{1,2})\b")


# glibc's "undefined symbol: %s" for Intel's JIT-profiling API (iJIT_NotifyEvent, iJIT_IsProfilingActive,
# iJIT_GetNewMethodID): libtorch_cpu.so of a conda PyTorch links Intel MKL's shared libraries, and MKL 2024.1 as
# conda installs it no longer exports these (pytorch#123097); pip wheels link MKL statically and do not need them.
# Read by dependency_version (kinds/versions.py): an MKL release the installed torch does not work with.
MKL_SYMBOL_ANCHOR = "undefined symbol: iJIT_"
MKL_SYMBOL = R(
    r"(?P<mkl_library>[\w.\-/+]{0,200}?lib\w+\.so[\w.]*): undefined symbol: "
    r"(?P<mkl_symbol>iJIT_(?:NotifyEvent|IsProfilingActive|GetNewMethodID))\b"
)


def explain_mkl_symbol(facts: dict) -> tuple[str, str]:
    """The summary and fix of a torch library that needs MKL's JIT-profiling symbols, which the MKL loaded lacks."""
    library = facts.get("mkl_library", "libtorch_cpu.so").rsplit("/", 1)[-1]
    return (
        f"{library} needs {facts.get('mkl_symbol', 'iJIT_NotifyEvent')} from Intel MKL, which the MKL it loaded "
        "no longer exports: mkl 2024.1 or newer beside a PyTorch installed with conda",
        "A PyTorch from conda links MKL's shared libraries, and mkl 2024.1 dropped Intel's JIT-profiling symbols "
        "(iJIT_*) it needs. Pin MKL below 2024.1 in that environment:\n"
        "conda install mkl==2024.0   # or mkl<2024.1 in environment.yml, beside pytorch\n"
        "or install torch with pip into that environment (its wheels carry MKL linked in): conda remove pytorch; "
        "pip install torch (with the --index-url of your CUDA). Check which MKL is installed: conda list mkl; "
        "outside conda, an oneAPI MKL 2024.1+ named in LD_LIBRARY_PATH is loaded the same way: take it out.",
    )


def _other_toolkit(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    library = first(hits, "library", "a CUDA library")
    symbol = first(hits, "symbol", "")
    companion = first(hits, "companion") or ("libnvJitLink" if "nvJitLink" in symbol else "libcublasLt")
    since = first(hits, "major")
    needs = f" (libnvJitLink {since}.{first(hits, 'minor')} or newer)" if since else ""
    wheel = "/nvidia/" in library.replace("\\", "/")
    summary = (
        f"{library.rsplit('/', 1)[-1]} needs {symbol}{needs}, which the {companion.split('.so')[0]} loaded "
        "does not have: an older CUDA toolkit's copy, found first through LD_LIBRARY_PATH, is loaded in place of "
        "the one "
        + ("the torch wheel installed beside it" if wheel else "it was built with")
        + on_ranks(hits)
    )
    name = companion.split(".so")[0]
    folder = "nvjitlink" if "nvJitLink" in name else "cublas"
    fix = (
        f"The dynamic loader took {name} from the first folder that has one: a CUDA toolkit on the machine "
        "(/usr/local/cuda*/lib64, a module, a conda env) named in LD_LIBRARY_PATH comes before the copy pip "
        "installed under site-packages/nvidia. See which one is loaded:\n"
        f"echo $LD_LIBRARY_PATH; ldd {library if '/' in library else '<the library named above>'} | grep -i {name}\n"
        "Remove the other toolkit's folder from LD_LIBRARY_PATH for this job (or unset it), or put the wheel's "
        "folder first:\n"
        f"export LD_LIBRARY_PATH=$(python -c 'import site; print(site.getsitepackages()[0])')/nvidia/{folder}/lib"
        ":$LD_LIBRARY_PATH\n"
        "Newer torch releases preload the wheel's libnvJitLink and libcublasLt themselves, before the libraries "
        "that need them (torch/__init__.py, _load_global_deps; pytorch#138460)."
    )
    return summary, fix


CUDA_LIBRARY_PATH = Recogniser(
    kind="cuda_library_path",
    title="another CUDA toolkit's library loaded first (LD_LIBRARY_PATH)",
    anchors=("undefined symbol: __nvJitLink", "undefined symbol: nvJitLink", "undefined symbol: cublasLt"),
    templates=("system:ld-undefined-symbol", "system:ld-undefined-versioned-symbol"),
    match=_COMPANION_SYMBOL,
    facts=(_SINCE,),
    # the nvidia-*-cu12 wheels out of step with each other (a libnvJitLink older than the cuSPARSE beside it)
    # print the same: only likely
    confirm=lambda hits, ctx: False,
    absorbs=("extension_import",),
    also=(
        Alternative(
            "broken_install",
            "the pip CUDA libraries out of step with each other (an nvidia-nvjitlink older than the cuSPARSE wheel)",
            "Reinstall torch with the nvidia-* wheel versions it pins: pip install --force-reinstall torch "
            "(the --index-url of your CUDA); pip list | grep nvidia shows them.",
        ),
    ),
    describe=_other_toolkit,
)


def cudnn_version(printed: str) -> str:
    """cuDNN's version as torch prints it, dotted: ``(8, 7, 0)`` or ``8700`` -> ``8.7.0`` (cuDNN 9 counts
    ``90100`` for 9.1.0, earlier releases ``7401`` for 7.4.1).

    >>> cudnn_version("(8, 7, 0)"), cudnn_version("7401"), cudnn_version("90100")
    ('8.7.0', '7.4.1', '9.1.0')
    """
    numbers = re.findall(r"\d+", printed)
    if len(numbers) == 3:
        return ".".join(numbers)
    if len(numbers) == 1:
        n = int(numbers[0])
        major, rest = divmod(n, 10000 if n >= 10000 else 1000)
        return f"{major}.{rest // 100}.{rest % 100}"
    return printed


def _cudnn(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    built = cudnn_version(first(hits, "cudnn_built", "?"))
    found = cudnn_version(first(hits, "cudnn_found", "?"))
    summary = (
        f"the cuDNN loaded ({found}) is another version than the one torch was built with ({built}): another "
        "cuDNN is loaded in place of torch's own, usually one found first through LD_LIBRARY_PATH"
        + on_ranks(hits)
    )
    fix = (
        "torch brings its own cuDNN (the nvidia-cudnn wheel beside a pip torch, the cudnn package of a conda "
        "torch), and the dynamic loader found another one first: a CUDA toolkit's or a system cuDNN in a folder "
        "LD_LIBRARY_PATH names. See where: echo $LD_LIBRARY_PATH; ls <each folder>/libcudnn*. Remove that folder "
        "from LD_LIBRARY_PATH for this job (or unset it) so torch loads its own cuDNN, or install there the cuDNN "
        f"torch was built with ({built}), or install the torch build for the cuDNN you have (pip install torch "
        "with the --index-url of your CUDA)."
    )
    return summary, fix


_CUDNN_VERSION = r"\(?\d+(?:, \d+, \d+\))?"
CUDNN_VERSION_MISMATCH = Recogniser(
    # torch/backends/cudnn/__init__.py _init(), on the first use of cuDNN: the runtime's major version differs
    # from the one torch was compiled with, or its minor one is lower ("compiled  against": two spaces since
    # pytorch#80877; before it, "linked against", and in torch 0.x "cuDNN version mismatch")
    kind="cudnn_version_mismatch",
    title="another cuDNN than torch was built with",
    anchors=(
        "cuDNN version incompatibility: PyTorch was compiled",
        "cuDNN version mismatch: PyTorch was compiled",
        # the same message's ending, by whether LD_LIBRARY_PATH names a cuda or cudnn folder
        "Looks like your LD_LIBRARY_PATH contains incompatible version of cudnn",
        "one possibility is that there is a conflicting cuDNN in LD_LIBRARY_PATH",
    ),
    templates=(
        "torch:cudnn-version-incompatibility-pytorch-was-compiled",
        "torch_native:cudnn-version-incompatibility-linked-against",
        "torch_native:cudnn-version-mismatch-linked-against",
        "torch:looks-like-your-ld-library-path",
        "torch:one-possibility-is-that-there-is",
    ),
    facts=(
        R(
            rf"compiled\s+against (?P<cudnn_built>{_CUDNN_VERSION}) but (?:found runtime version|linked against) "
            rf"(?P<cudnn_found>{_CUDNN_VERSION})"
        ),
    ),
    describe=_cudnn,
)

RECOGNISERS = (CUDA_LIBRARY_PATH, CUDNN_VERSION_MISMATCH)
