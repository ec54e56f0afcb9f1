"""A linear-algebra op in the model or the loss meeting a matrix it cannot factorise.

ATen checks LAPACK's / cuSOLVER's / MAGMA's ``info`` after every factorisation and names the failure by op
(``aten/src/ATen/native/BatchLinearAlgebra.cpp``, ``_linalg_check_errors``, torch 1.9+): Cholesky "The
factorization could not be completed because the input is not positive-definite (the leading minor of order N is
not positive-definite)", SVD and eigh "The algorithm failed to converge because the input matrix is
ill-conditioned or has too many repeated singular values / eigenvalues (error code: N)", after the op's name and
"(Batch element N)". Before that rewrite ``LinearAlgebraUtils.h``'s ``batchCheckErrors`` printed "the updating
process of SBDSDC did not converge (error: N)" for SVD and "the algorithm failed to converge; N off-diagonal
elements of an intermediate tridiagonal form did not converge to zero" for symeig.

The same ``info`` comes back for a matrix holding NaN or inf: the comment above that check says Reference LAPACK
before 3.10 (and the MKL and OpenBLAS built on it) reports non-finite input as a failure to converge, which newer
LAPACK reports apart ("... because the input matrix contained non-finite values", read as NaN in
``train.NAN_OVERFLOW``). So an ill-conditioned matrix is only ever likely, with NaN in the input named beside it.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "numerics and precision"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# the op's name (linalg.cholesky, torch.linalg_cholesky, svd_cuda) and the batch element, when printed
_FAILED = R(
    r"(?:(?P<op>[A-Za-z_][\w.]{0,40}):\s(?:\(Batch element (?P<batch>\d{1,9})\):\s|For batch \d{1,9}:\s)?)?"
    r"(?P<what>The factorization could not be completed because the input is not positive-definite|"
    r"The algorithm failed to converge because the input matrix is ill-conditioned|"
    r"the updating process of SBDSDC did not converge|"
    r"the algorithm failed to converge; \S{1,12} off-diagonal elements)"
)

NAN_INPUT = Alternative(
    "nan_overflow",
    "NaN or inf already in the matrix (an overflow or a NaN loss upstream)",
    "Check the matrix before the op: torch.isfinite(A).all(); if it is not, find where the NaN starts (a NaN "
    "loss or gradient the step before, fp16 overflow, a division by zero) with torch.autograd.detect_anomaly() "
    "and fix that instead of the solver.",
)


def _ill_conditioned(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    op = first(hits, "op", "a linear-algebra op")
    what = first(hits, "what", "")
    positive = "positive-definite" in what
    batch = first(hits, "batch", "")
    where = f" (batch element {batch})" if batch else ""
    problem = "is not positive-definite" if positive else "is too ill-conditioned for it to converge"
    summary = f"{op}: the matrix it factorises{where} {problem}" + on_ranks(hits)
    fix = (
        "Regularise the matrix before the op: add damping, a small multiple of the identity on its diagonal "
        "(A + eps * torch.eye(n), eps 1e-6 to 1e-3 of the matrix's scale; for a Levenberg-Marquardt or Gauss-"
        "Newton step, a larger damping), or symmetrise it first ((A + A.mT) / 2) when it should be symmetric. "
        "Compute the op in float64 (A.double(), then cast back), and prefer a solver that degrades gracefully: "
        "torch.linalg.cholesky_ex (check info, retry with more damping), torch.linalg.lstsq or an LU solve "
        "instead of Cholesky, driver='gesvd' for torch.linalg.svd on CUDA. The same message comes for a matrix "
        "holding NaN or inf, so check torch.isfinite(A).all() first."
    )
    return summary, fix


LINALG_ILL_CONDITIONED = Recogniser(
    kind="linalg_ill_conditioned",
    templates=(
        "torch_native:linalg-not-positive-definite",
        "torch_native:linalg-svd-ill-conditioned",
        "torch_native:linalg-eigh-ill-conditioned",
        "torch_native:svd-sbdsdc-did-not-converge",
        "torch_native:symeig-tridiagonal-did-not-converge",
    ),
    title="a matrix a linear-algebra op cannot factorise",
    anchors=(
        "because the input is not positive-definite",
        "because the input matrix is ill-conditioned",
        "the updating process of SBDSDC did not converge",
        "off-diagonal elements of an intermediate tridiagonal form",
    ),
    match=_FAILED,
    # never certain: a NaN or inf in the matrix is reported with the same info (older LAPACK)
    confirm=lambda hits, ctx: False,
    also=(NAN_INPUT,),
    describe=_ill_conditioned,
)

RECOGNISERS = (LINALG_ILL_CONDITIONED,)
