"""The knowledge the seventeenth sample by symptom (corpus files 667-680, train half) asked for, each anchored on
the message its source prints: ATen's linear-algebra error checks (aten/src/ATen/native/BatchLinearAlgebra.cpp,
LinearAlgebraUtils.h before it), torch 1.x's c10d failing to resolve the store's host (torch/lib/c10d/Utils.cpp),
and where's backward node beside a NaN gradient (tools/autograd/derivatives.yaml). Beside each, a line that must
stay silent, or be another kind."""

from __future__ import annotations

from explaining import explained, lead, template


def test_a_cholesky_of_a_matrix_not_positive_definite_is_likely_ill_conditioned():
    # 668.txt (facebookresearch/theseus#645): a Levenberg-Marquardt step's Cholesky, fixed by more damping
    found = lead("668.txt")
    assert found.id == "log.linalg_ill_conditioned" and found.details["confidence"] == "likely"
    assert "log.nan_overflow" in found.details["alternatives"]  # a NaN in the matrix prints the same
    assert "damping" in found.fix and "float64" in found.fix and "linalg.cholesky" in found.summary
    # as ATen prints it for a batch, under torch's exception class
    line = "torch._C._LinAlgError: " + template(
        "torch_native:linalg-not-positive-definite", "linalg.cholesky: (Batch element 3)", "12"
    )
    found = explained(line + "\n")
    assert found.id == "log.linalg_ill_conditioned" and "batch element 3" in found.summary
    # torch 1.x's wording for an SVD that did not converge
    found = explained(
        "RuntimeError: " + template("torch_native:svd-sbdsdc-did-not-converge", "svd_cuda", "2") + "\n"
    )
    assert found.id == "log.linalg_ill_conditioned" and "svd_cuda" in found.summary


def test_an_svd_that_did_not_converge_names_the_nan_reading_beside_it():
    # 672.txt (jiaweizzhao/GaLore#26): the SVD's input held NaN gradients (fp16 rescaling); the message cannot
    # tell, so the ill-conditioned reading leads, only likely, and the NaN one is named
    found = lead("672.txt")
    assert found.id == "log.linalg_ill_conditioned" and found.details["confidence"] == "likely"
    assert "log.nan_overflow" in found.details["alternatives"] and "isfinite" in found.fix
    # newer LAPACK says so when the matrix holds NaN or inf: then it is the NaN, whose origin (an overflow, an op
    # at the edge of its domain, the data) the line does not say: likely, the other two named
    line = "RuntimeError: " + template("torch_native:linalg-svd-non-finite", "linalg.svd")
    found = explained(line + "\n")
    assert found.id == "log.nan_overflow" and found.details["confidence"] == "likely"
    assert "log.nan_at_zero" in found.details["alternatives"]


def test_a_singular_matrix_or_the_word_alone_is_not_ill_conditioned():
    # ATen's other info checks: an exactly singular matrix is another failure (and another fix)
    found = explained(
        "torch._C._LinAlgError: linalg.inv: The diagonal element 2 is zero, the inversion could not be "
        "completed because the input matrix is singular.\n"
    )
    assert found.id != "log.linalg_ill_conditioned"
    found = explained("ValueError: the kernel matrix must be positive-definite, got a negative eigenvalue\n")
    assert found.id != "log.linalg_ill_conditioned"


def test_a_nan_gradient_beside_where_is_likely_the_unselected_branch():
    # 674.txt (pytorch/pytorch#52248): torch.where(b, a/0, c) picks c, and a's gradient is 0/0 = NaN
    found = lead("674.txt")
    assert found.id == "log.where_unselected_nan" and found.details["confidence"] == "likely"
    assert "log.nan_overflow" in found.details["alternatives"]
    assert "torch.where(cond, x, torch.ones_like(x))" in found.fix and "SWhereBackward" in found.summary
    # torch 1.10+'s node name, and a gradient printed as a tensor holding nan
    forward = "tensor([0.5000, 1.0000], " + template("torch_native:where-backward-node") + ")"
    found = explained(forward + "\nx.grad = tensor([    nan, 0.5000])\n")
    assert found.id == "log.where_unselected_nan" and "WhereBackward0" in found.summary


def test_where_without_a_nan_gradient_is_not_the_unselected_branch():
    # where's output alone, or a NaN in the forward value itself (its own line shows the grad_fn)
    found = explained(
        "tensor([0.5000, 1.0000], grad_fn=<WhereBackward0>)\nx.grad = tensor([0.2500, 1.0000])\n"
    )
    assert found.id != "log.where_unselected_nan"
    found = explained("tensor([nan, 1.0000], grad_fn=<WhereBackward0>)\n")
    assert found.id != "log.where_unselected_nan"


def test_torch_1x_c10d_failing_to_resolve_the_store_host():
    # 679.txt (pytorch/elastic#31): the pod's own name advertised for the TCPStore did not resolve elsewhere
    found = lead("679.txt")
    assert found.id == "log.hostname_resolution" and found.details["confidence"] == "certain"
    assert "IP" in found.fix and "/etc/hosts" in found.fix and "Name or service not known" in found.summary
    # as c10d's tcputil::connect prints it with another of the resolver's answers
    line = "ValueError: " + template(
        "torch_native:c10d-host-not-found", "Temporary failure in name resolution"
    )
    found = explained(line + "\n")
    assert found.id == "log.hostname_resolution" and "Temporary failure in name resolution" in found.summary


def test_host_not_found_without_the_resolver_words_is_not_a_name_that_does_not_resolve():
    found = explained("KeyError: host not found: node-3 is not in the hostfile\n")
    assert found.id != "log.hostname_resolution"


def test_a_nan_in_half_precision_names_float32_in_its_fix():
    # 680.txt (sauradip/STALE#2): anomaly mode's NaN from a CLIP model trained in half precision
    found = lead("680.txt")
    assert found.id == "log.nan_overflow" and "float32" in found.fix
