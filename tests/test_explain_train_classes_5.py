"""Classes of the train half's numerics, fifth round (helper T49, issue 19).

- anomaly mode's "Function 'XBackward0' returned nan values in its 0th output." naming an op whose derivative is
  infinite at an edge of its domain (sqrt, pow, the logs, a norm, acos/asin): the domain leads, likely, the
  overflow named beside it; a node without such an edge (train 680.txt's DivBackward0: an fp16 CLIP) stays the
  overflow's, and a model trained in float16 as a whole keeps the overflow certain;
- fairseq's dynamic loss scaler giving up ("Minimum loss scale reached", and --amp's "AMP: " wording): every step
  overflowed, likely, with fairseq's own flags in the fix;
- Lightning's finite checks: the loss (check_finite_loss, 0.7-1.3's "is nan or inf." and the tensor's repr after)
  and a parameter (detect_nan_parameters): NaN, likely.
"""

from __future__ import annotations

import io

from explaining import explained, leads_with, likely_with, read

from torchdoctor.explain.diagnose import explain


def anomaly(node: str) -> str:
    return f"RuntimeError: Function '{node}' returned nan values in its 0th output."


def test_a_sqrt_in_anomaly_mode_is_the_edge_of_its_domain():
    found = likely_with(anomaly("SqrtBackward0") + "\n", "nan_at_zero", "log.bad_training_data")
    assert "sqrt of 0" in found.summary and "clamp(min=eps)" in found.fix, found.summary
    # the overflow is the other reading, its own finding after this one
    findings = explain(["-"], stdin=io.BytesIO((anomaly("SqrtBackward0") + "\n").encode()))
    assert [f.id for f in findings][:2] == ["log.nan_at_zero", "log.nan_overflow"]


def test_torch_1_9s_node_names_without_a_number_and_the_other_domain_edges():
    # before torch 1.10 the node had no number ("PowBackward"); a norm of a zero vector, a log of 0, acos of 1
    for node, words in (
        ("PowBackward", "fractional power"),
        ("NormBackward1", "norm of a zero vector"),
        ("LinalgVectorNormBackward0", "norm of a zero vector"),
        ("LogBackward0", "log of 0"),
        ("AcosBackward0", "acos of +-1"),
    ):
        leads_with(anomaly(node), "nan_at_zero", "likely", [node, words])


def test_a_division_in_anomaly_mode_stays_the_overflow():
    # train 680.txt: "Function 'DivBackward0' returned nan values in its 0th output." from a CLIP model created in
    # half precision; a division has no edge a clamp fixes in general (0/0 or an inf over an inf)
    read("680.txt", "nan_overflow", "likely")
    found = explained(anomaly("MulBackward0") + "\n")
    assert found.id == "log.nan_overflow", found.summary


def test_a_model_trained_in_half_keeps_the_overflow_certain_beside_a_sqrt():
    found = explained("python train.py --precision half\n" + anomaly("SqrtBackward0") + "\n")
    assert (found.id, found.details["confidence"]) == ("log.nan_overflow", "certain"), found.summary


def test_fairseqs_minimum_loss_scale_both_wordings():
    leads_with(
        "FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering "
        "the learning rate, using gradient clipping or increasing the batch size.",
        "nan_overflow",
        "likely",
        ["fairseq's minimum (0.0001)", "--clip-norm", "--fp16"],
    )
    leads_with(
        "FloatingPointError: AMP: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try "
        "restarting training or use fp32. 6.103515625e-05",
        "nan_overflow",
        "likely",
        ["fairseq's minimum (0.0001)"],
    )


def test_lightnings_finite_loss_check_in_two_releases():
    for line in (
        "ValueError: The loss returned in `training_step` is nan or inf.",
        "ValueError: The loss returned in `training_step` is tensor(nan, device='cuda:0', "
        "grad_fn=<DivBackward0>).",
    ):
        found = leads_with(line, "nan_overflow", "likely", ["The loss returned in `training_step` is"])
        assert ".;" not in found.summary, found.summary


def test_lightnings_nan_parameter_check_is_nan_not_an_old_release():
    # the message only Lightning <= 2.0 raises: its release is not the cause, the NaN is
    leads_with(
        "ValueError: Detected nan and/or inf values in `c_d1.bias`. Check your forward pass for numerically "
        "unstable operations.",
        "nan_overflow",
        "likely",
        ["`c_d1.bias`"],
    )
