"""A CUDA source written for CCCL 2 (CUB, Thrust of CUDA 12) built with CUDA 13's headers, CCCL 3.0.

CUDA 13.0 ships CCCL 3.0, which removed what CCCL 2.8 had deprecated (NVIDIA/cccl's
``docs/cccl/3.0_migration_guide.rst``, "Removed functions and classes" and "Removed macros"): CUB's function
objects (``cub::Sum``, ``cub::Max``, ``cub::Min``, ...) gave way to libcu++'s (``cuda::std::plus<>``,
``cuda::maximum<>``, ``cuda::minimum<>``), Thrust's ``thrust::identity``, ``thrust::unary_function``,
``thrust::optional`` to ``cuda::std``'s, CUB's ``CUB_MAX``/``CUB_MIN`` macros to ``cuda::std::max``/``min``.
A project that still names them stops in its first ``.cu`` file: nvcc's front end says ``error: namespace
"cub" has no member "Sum"`` (gcc on host code: ``'Sum' is not a member of 'cub'``; clang: ``no member named
'Sum' in namespace 'cub'``), ``identifier "CUB_MAX" is undefined`` for a macro.

Any "has no member" of a CCCL namespace reads so (`kinds/build.py`, ``cuda_build``); it is certain only where
the log shows the CUDA 13 toolkit (nvcc's version line, a ``cuda-13`` path, CMake's compiler identification):
CCCL can also be installed on its own, and a name a CCCL release never had is the source's own mistake.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Pattern

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the names CCCL 3.0 removed that sources still use, and what the migration guide puts in their place
# (None: no replacement, the guide's own advice instead)
REMOVED = {
    "cub::Sum": "cuda::std::plus<>",
    "cub::Max": "cuda::maximum<>",
    "cub::Min": "cuda::minimum<>",
    "cub::Difference": "cuda::std::minus<>",
    "cub::Division": "cuda::std::divides<>",
    "cub::Equality": "cuda::std::equal_to<>",
    "cub::Inequality": "cuda::std::not_equal_to<>",
    "cub::max": "cuda::std::max",
    "cub::min": "cuda::std::min",
    "cub::Swap": "cuda::std::swap",
    "cub::ArrayWrapper": "cuda::std::array",
    "cub::Int2Type": "cuda::std::integral_constant",
    "cub::FpLimits": "cuda::std::numeric_limits",
    "cub::CountingInputIterator": "thrust::counting_iterator",
    "cub::ConstantInputIterator": "thrust::constant_iterator",
    "cub::TransformInputIterator": "thrust::transform_iterator",
    "cub::CTA_SYNC": "__syncthreads()",
    "cub::WARP_SYNC": "__syncwarp()",
    "cub::WARP_ANY": "__any_sync()",
    "cub::WARP_ALL": "__all_sync()",
    "cub::WARP_BALLOT": "__ballot_sync()",
    "cub::SHFL_IDX_SYNC": "__shfl_sync()",
    "cub::LaneId": "cuda::ptx::get_sreg_laneid()",
    "cub::WarpId": "cuda::ptx::get_sreg_warpid()",
    "cub::ThreadTrap": "cuda::std::terminate()",
    "cub::BFI": "cuda::bitfield_insert",
    "cub::PRMT": "cuda::ptx::prmt()",
    "cub::Mutex": "std::mutex",
    "cub::DeviceSpmv": "cuSPARSE",
    "cub::GridBarrier": "cooperative groups' grid sync",
    "thrust::identity": "cuda::std::identity",
    "thrust::optional": "cuda::std::optional",
    "thrust::void_t": "cuda::std::void_t",
    "thrust::remove_cvref": "cuda::std::remove_cvref",
    "thrust::remove_cvref_t": "cuda::std::remove_cvref_t",
    "thrust::numeric_limits": "cuda::std::numeric_limits",
    "thrust::not1": "cuda::std::not_fn",
    "thrust::not2": "cuda::std::not_fn",
    "thrust::unary_function": None,
    "thrust::binary_function": None,
    "thrust::unary_traits": None,
    "thrust::binary_traits": None,
    "thrust::null_type": None,
    "thrust::async": "thrust::cuda::par_nosync",
    "thrust::cuda_cub::identity": "cuda::std::identity",
    "thrust::cuda_cub::terminate": "cuda::std::terminate()",
    "thrust::cuda_cub::counting_iterator_t": "thrust::counting_iterator",
    "thrust::cuda_cub::transform_input_iterator_t": "thrust::transform_iterator",
    "CUB_MAX": "cuda::std::max",
    "CUB_MIN": "cuda::std::min",
    "CUB_QUOTIENT_CEILING": "cuda::ceil_div",
    "CUB_QUOTIENT_FLOOR": "plain integer division",
    "CUB_ROUND_UP_NEAREST": "cuda::round_up",
    "CUB_ROUND_DOWN_NEAREST": "cuda::round_down",
}
_NO_REPLACEMENT = {
    "thrust::unary_function": "thrust::unary_function has no replacement: drop it as a base class",
    "thrust::binary_function": "thrust::binary_function has no replacement: drop it as a base class",
}

_NAMESPACE = r"(?:cub|thrust)(?:::\w{1,40}){0,2}"
# nvcc's EDG front end (system:nvcc-has-no-member), gcc (system:gcc-is-not-a-member-of), clang
# (system:clang-no-member-named), and a removed macro (system:nvcc-identifier-undefined)
FACTS = (
    R(rf'error: namespace "(?P<cccl_namespace>{_NAMESPACE})" has no member "(?P<cccl_member>\w{{1,80}})"'),
    R(
        rf"error: ['\u2018](?P<cccl_member>\w{{1,80}})['\u2019] is not a member of ['\u2018](?P<cccl_namespace>{_NAMESPACE})['\u2019]"
    ),
    R(
        rf"error: no member named '(?P<cccl_member>\w{{1,80}})' in namespace '(?P<cccl_namespace>{_NAMESPACE})'"
    ),
    R(
        r'error: identifier "(?P<cccl_member>CUB_(?:MAX|MIN|QUOTIENT_CEILING|QUOTIENT_FLOOR|ROUND_(?:UP|DOWN)_NEAREST))" is undefined'
    ),
)

# the CUDA 13 toolkit, wherever the log shows it: nvcc --version, a toolkit's path, CMake's compiler check
CUDA_13 = re.compile(
    r"(?P<cuda_13>Cuda compilation tools, release 13\.\d|[/\\]cuda-13(?:\.\d{1,2})?(?![\d.])|"
    r"The CUDA compiler identification is NVIDIA 13\.\d)"
)
CONTEXT = (
    ("release 13.", CUDA_13),
    ("cuda-13", CUDA_13),
    ("identification is NVIDIA 13.", CUDA_13),
)


def removed_name(facts: dict) -> str | None:
    """The CCCL name a compiler's error says the headers lack (``cub::Sum``), where one does."""
    member = facts.get("cccl_member")
    if not member:
        return None
    namespace = facts.get("cccl_namespace")
    return f"{namespace}::{member}" if namespace else member


def removed_in_3(name: str) -> bool:
    """Whether CCCL 3.0 removed ``name`` (or the namespace it is in: ``thrust::async::reduce``).

    >>> removed_in_3("cub::Sum"), removed_in_3("thrust::async::reduce"), removed_in_3("cub::DeviceReduce")
    (True, True, False)
    """
    return name in REMOVED or name.rsplit("::", 1)[0] in REMOVED


def explain(name: str, cuda_13: bool) -> tuple[str, str]:
    """(summary, fix) for a CCCL name the headers in use do not have.

    >>> explain("cub::Sum", True)[0].split(":")[0]
    'the source uses cub'
    """
    known = removed_in_3(name)
    seen = "the log shows CUDA 13" if cuda_13 else "the log does not show the CUDA release: nvcc --version"
    if known:
        summary = (
            f"the source uses {name}, which CCCL 3.0 removed (the CUB/Thrust/libcu++ that CUDA 13 ships): it was "
            f"written for CCCL 2 (CUDA 12) and is built with CCCL 3's headers ({seen})"
        )
    else:
        summary = (
            f"the CUB/Thrust headers in use do not declare {name}: CCCL 3.0 (CUDA 13) removed many of CCCL 2's "
            f"names, or the source needs another CCCL release than the one it is built with, or misspells it ({seen})"
        )
    replacement = REMOVED.get(name, REMOVED.get(name.rsplit("::", 1)[0]))
    instead = _NO_REPLACEMENT.get(name) or (
        f"{replacement} replaces {name}" if replacement else f"{name} has no replacement"
    )
    fix = (
        (
            f"Build with CUDA 12.x, whose CCCL 2 still has {name}"
            if known
            else "Check which CCCL release declares "
            f"{name} (a misspelt name is the source's own mistake); a source written for CCCL 2 builds with CUDA 12.x"
        )
        + ": CUDA_HOME=/usr/local/cuda-12.x with a torch "
        "built for CUDA 12 (torch's extension builder refuses a toolkit of another major release than "
        "torch.version.cuda), e.g. pip install torch --index-url https://download.pytorch.org/whl/cu128. "
        "Or install the project's release (or commit) ported to CCCL 3"
        + (f" ({instead})" if known else "")
        + ": NVIDIA/cccl's CCCL 2.x to 3.0 migration guide lists every removed name and what replaces it."
    )
    return summary, fix
