"""What the overflow dump tells the user to do, on real models (T5 and GPT-2 from configs, no hub).

The fix must fit the cause: a weight that is itself inf/nan cannot be saved by a precision change; weights that
are fp16/bf16 themselves cannot be kept in fp32; only fp32 weights under autocast get ``keep_in_fp32``.
"""

from __future__ import annotations

import io
import json

import pytest
import torch
from models import tiny_t5
from transformers import GPT2Config, GPT2LMHeadModel

import torchdoctor
from torchdoctor.numerics.advice import BROKEN_WEIGHTS_FIX, LOSS_FIX, MIXED_PRECISION_FIX
from torchdoctor.numerics.detector import DebugUnderflowOverflow, InfNanDetected
from torchdoctor.numerics.full_precision import ARRIVAL_FIX, FP32_MAX, GROWTH_FIX


def tiny_gpt2() -> GPT2LMHeadModel:
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=64,
        n_positions=16,
        n_embd=16,
        n_layer=2,
        n_head=2,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=0,
        eos_token_id=0,
    )
    return GPT2LMHeadModel(config).train()


def t5_batch():
    generator = torch.Generator().manual_seed(0)
    return {
        "input_ids": torch.randint(1, 64, (2, 6), generator=generator),
        "labels": torch.randint(1, 64, (2, 4), generator=generator),
    }


def gpt2_batch():
    ids = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(0))
    return {"input_ids": ids, "labels": ids}


def peak_output(model, module, batch, autocast: bool) -> float:
    seen = []
    handle = module.register_forward_hook(lambda m, args, output: seen.append(output.abs().max().item()))
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16, enabled=autocast):
        model(**batch)
    handle.remove()
    return seen[-1]


def dump_of(model, batch, autocast: bool = True) -> InfNanDetected:
    with DebugUnderflowOverflow(model, file=io.StringIO()), pytest.raises(InfNanDetected) as caught:
        with torch.autocast("cpu", dtype=torch.float16, enabled=autocast):
            model(**batch).loss.backward()
    return caught.value


def assert_advised(error, advice):
    """The advice ends the exception's message and is ``report.advice``; the dump ends at the last frame, as
    transformers' does."""
    assert str(error).endswith(f" batch {error.batch_number}.\n{advice}")
    assert error.report.advice == advice and json.loads(error.report.to_json())["advice"] == advice
    assert error.report.endswith("output\n\n\n") and advice.splitlines()[0] not in error.report


T5_WO = "encoder.block.1.layer.1.DenseReluDense.wo"
GPT2_C_PROJ = "transformer.h.0.mlp.c_proj"


@pytest.mark.parametrize(
    "build, batch, module_name, parameter, value",
    [
        (tiny_t5, t5_batch, T5_WO, "weight", float("inf")),
        (tiny_t5, t5_batch, T5_WO, "weight", float("nan")),
        (tiny_gpt2, gpt2_batch, GPT2_C_PROJ, "weight", float("-inf")),
        (tiny_gpt2, gpt2_batch, GPT2_C_PROJ, "bias", float("nan")),
    ],
)
def test_a_broken_weight_is_called_broken_not_given_keep_in_fp32(build, batch, module_name, parameter, value):
    model = build()
    with torch.no_grad():
        getattr(model.get_submodule(module_name), parameter).view(-1)[0] = value
    error = dump_of(model, batch())  # under autocast: the computation is fp16, the weights fp32
    assert error.module_name == module_name
    word = "nans" if value != value else "infs"
    advice = (
        f"the weights are already broken: {module_name}.{parameter} holds {word}; no change of "
        f"precision (keep_in_fp32 included) brings them back\n{BROKEN_WEIGHTS_FIX}"
    )
    assert_advised(error, advice)
    assert "torchdoctor.keep_in_fp32(" not in str(error)


def t5_half_whose_block_overflows():
    """A T5 in fp16 (``model.half()``) whose wo output passes 65504 while every weight stays finite."""
    model = tiny_t5(dropout_rate=0.0)
    block = model.get_submodule("encoder.block.1.layer.1.DenseReluDense")
    with torch.no_grad():
        block.wi.weight.mul_(30)
        block.wo.weight.mul_(2e5 / peak_output(model, block.wo, t5_batch(), autocast=False))
    model.half()
    assert all(torch.isfinite(p).all() for p in model.parameters())
    return model


def test_half_precision_weights_are_told_to_use_mixed_precision():
    model = t5_half_whose_block_overflows()
    error = dump_of(model, t5_batch(), autocast=False)
    assert error.module_name == T5_WO
    assert_advised(
        error,
        'the weights are float16 (model.half(), or Lightning precision="16-true"/"bf16-true"), '
        f"so no module can be kept in fp32\n{MIXED_PRECISION_FIX}",
    )
    assert "torchdoctor.keep_in_fp32(" not in str(error)
    # doing what it says: the same weights in fp32 under autocast, and the fix for that case is offered
    model.float()
    error = dump_of(model, t5_batch(), autocast=True)
    assert_advised(error, 'torchdoctor.keep_in_fp32(model, "encoder.block.1.layer.1.DenseReluDense")')


def test_fp32_weights_under_autocast_keep_the_keep_in_fp32_line():
    # weights that fit fp32 but not fp16: autocast's cast is what overflows, so keeping the block in fp32 helps
    model = tiny_gpt2()
    mlp = model.get_submodule("transformer.h.0.mlp")
    with torch.no_grad():
        mlp.c_proj.weight.mul_(1e5 / mlp.c_proj.weight.abs().max())
    error = dump_of(model, gpt2_batch())
    assert error.module_name == GPT2_C_PROJ
    assert_advised(error, 'torchdoctor.keep_in_fp32(model, "transformer.h.0.mlp")')


def test_headroom_is_warned_once_through_dropout_and_the_parent_module():
    """GPT-2's MLP: c_proj's output goes through its Dropout and out of the MLP as the same tensor."""
    model = tiny_gpt2()
    mlp = model.get_submodule("transformer.h.0.mlp")
    with torch.no_grad():
        mlp.c_fc.weight.mul_(300)
        mlp.c_proj.weight.mul_(4e4 / peak_output(model, mlp.c_proj, gpt2_batch(), autocast=True))
    out = io.StringIO()
    with DebugUnderflowOverflow(model, file=out) as detector:
        for _ in range(2):
            with torch.autocast("cpu", dtype=torch.float16):
                loss = model(**gpt2_batch()).loss
            loss.backward()
            model.zero_grad()
    assert detector.warnings == [f"{GPT2_C_PROJ} output reached 4.00e+04 = 61% of float16 max"]
    assert out.getvalue() == detector.warnings[0] + "\n"


def test_an_fp32_overflow_names_where_the_values_grew_and_the_largest_weight():
    """Weights scaled by 1e37 (fp32 all along): the LayerNorm after them overflows; keep_in_fp32 cannot help."""
    model = tiny_gpt2()
    with torch.no_grad():
        model.get_submodule("transformer.h.1.mlp.c_fc").weight.mul_(1e37)
    error = dump_of(model, gpt2_batch(), autocast=False)
    assert error.module_name == "transformer.ln_f"
    lines = error.report.advice.splitlines()
    assert (
        lines[0]
        == f"fp32 overflow in transformer.ln_f: a value passed fp32's largest, {FP32_MAX:.2e}, from finite inputs"
    )
    assert lines[1].startswith(
        "values first passed 1.84e+19 (its square overflows fp32) in transformer.h.1.mlp.c_fc weight: "
    )
    assert lines[2].startswith("the largest weight is transformer.h.1.mlp.c_fc.weight: ")
    assert lines[3] == GROWTH_FIX
    assert_advised(error, error.report.advice)
    assert "torchdoctor.keep_in_fp32(" not in str(error)


@pytest.mark.parametrize("autocast", [False, True])
def test_a_nan_in_the_batch_is_said_to_have_arrived_not_given_keep_in_fp32(autocast):
    model = tiny_gpt2()
    embeds = torch.randn(2, 8, 16, generator=torch.Generator().manual_seed(0))
    embeds[0, 3, 5] = float("nan")
    error = dump_of(model, {"inputs_embeds": embeds, "labels": gpt2_batch()["labels"]}, autocast=autocast)
    assert error.module_name == "transformer.drop"
    assert error.report.advice.startswith(
        "transformer.drop was handed inf/nan: input[0] (float32); no module before it produced it, so it came "
        "with the batch or from an operation in transformer (GPT2Model)'s forward between its modules"
    )
    assert error.report.advice.endswith(ARRIVAL_FIX.format(parent="transformer"))
    assert "torchdoctor.keep_in_fp32(" not in str(error)


def test_a_broken_fp32_weight_is_called_broken_too():
    model = tiny_gpt2()
    with torch.no_grad():
        model.get_submodule(GPT2_C_PROJ).weight.view(-1)[0] = float("inf")
    error = dump_of(model, gpt2_batch(), autocast=False)
    assert error.module_name == GPT2_C_PROJ
    assert error.report.advice.endswith(BROKEN_WEIGHTS_FIX)


def test_keep_in_fp32_is_not_offered_where_fp32_would_overflow_too():
    """Under autocast a c_fc weight of 8e20 overflows fp16 first; kept in fp32, the run overflows at ln_f anyway,
    so the advice is the growth one, and a weight of 5e4 still gets keep_in_fp32 (which then runs clean)."""
    model = tiny_gpt2()
    c_fc = model.get_submodule("transformer.h.1.mlp.c_fc")
    with torch.no_grad():
        c_fc.weight.mul_(1e22)
    error = dump_of(model, gpt2_batch())
    assert error.module_name == "transformer.h.1.mlp.c_fc"
    lines = error.report.advice.splitlines()
    assert lines[0].startswith("transformer.h.1.mlp.c_fc overflowed float16, but its weight is ")
    assert lines[0].endswith(
        ", past 1.84e+19 (its square overflows fp32): keep_in_fp32 would only move the overflow further on"
    )
    assert lines[-1] == GROWTH_FIX and "torchdoctor.keep_in_fp32(" not in str(error)
    with torchdoctor.keep_in_fp32(model, "transformer.h.1.mlp"):  # what the old advice said: it does not help
        assert dump_of(model, gpt2_batch()).module_name == "transformer.ln_f"
    with torch.no_grad():
        c_fc.weight.mul_(5e4 / c_fc.weight.abs().max())
    error = dump_of(model, gpt2_batch())
    assert error.report.advice == 'torchdoctor.keep_in_fp32(model, "transformer.h.1.mlp")'
    with (
        torchdoctor.keep_in_fp32(model, "transformer.h.1.mlp"),
        DebugUnderflowOverflow(model, file=io.StringIO()),
    ):
        with torch.autocast("cpu", dtype=torch.float16):
            loss = model(**gpt2_batch()).loss
        loss.backward()


def test_a_leaf_kept_in_fp32_whose_parent_overflowed_fp16_gets_the_parent_not_not_a_precision_problem():
    """GPT-2's eager attention under fp16 autocast: q·k overflows inside GPT2Attention's own forward, between
    c_attn and c_proj. With c_proj alone kept in fp32 (the name the error gives, as a user would try it) its
    input arrives nan in fp32; that is still a precision problem of the parent, whose fix is named."""
    model = tiny_gpt2()
    model.set_attn_implementation("eager")
    with torch.no_grad():
        model.get_submodule("transformer.h.1.attn.c_attn").weight.mul_(3000.0)
    first = dump_of(model, gpt2_batch())
    assert first.module_name == "transformer.h.1.attn.c_proj"
    with torchdoctor.keep_in_fp32(model, first.module_name):
        error = dump_of(model, gpt2_batch())
    assert error.module_name == "transformer.h.1.attn.c_proj"
    lines = error.report.advice.splitlines()
    assert lines[0].startswith("transformer.h.1.attn.c_proj was handed inf/nan: input[0] (float32)")
    assert "likely overflowed float16" in lines[0] and "not a precision problem" not in error.report.advice
    assert lines[1] == 'torchdoctor.keep_in_fp32(model, "transformer.h.1.attn")'
    assert_advised(error, error.report.advice)
    with torchdoctor.keep_in_fp32(model, "transformer.h.1.attn"), torch.no_grad():
        with torch.autocast("cpu", dtype=torch.float16):
            assert torch.isfinite(model(**gpt2_batch()).loss)


def train_with_a_log_of_zero(check_gradients: bool) -> InfNanDetected:
    """GPT-2 from a config, plain SGD loop, a custom loss: batch 0's own NLL of a probability that is 0 (log 0)."""
    model = tiny_gpt2()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batch = gpt2_batch()
    detector = DebugUnderflowOverflow(model, file=io.StringIO(), check_gradients=check_gradients)
    with detector, pytest.raises(InfNanDetected) as caught:
        for _ in range(3):
            probabilities = model(input_ids=batch["input_ids"]).logits.softmax(-1) * 0  # planted
            loss = -probabilities.gather(-1, batch["labels"][..., None]).log().mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    return caught.value


def test_weights_broken_by_a_log_of_zero_in_the_loss_say_which_update_and_how_to_see_it():
    error = train_with_a_log_of_zero(check_gradients=False)
    assert error.batch_number == 1 and error.direction == "forward"
    lines = error.report.advice.splitlines()
    assert lines[0].startswith("the weights are already broken: transformer.wte.weight holds nans")
    assert lines[1].startswith(
        "batch 0's forward ran without inf/nan, so its loss, backward or optimizer step made them: rerun with "
        "check_gradients=True"
    )
    assert lines[2] == BROKEN_WEIGHTS_FIX
    assert_advised(error, error.report.advice)


def test_a_log_of_zero_in_the_loss_is_named_as_the_loss_with_check_gradients():
    error = train_with_a_log_of_zero(check_gradients=True)
    assert (error.batch_number, error.direction, error.module_name) == (0, "backward", "lm_head")
    assert error.report.advice.startswith(
        "the gradient reaching lm_head's output, the first of the backward pass, is already inf/nan: it was made "
        "after the model's modules, by the loss"
    )
    assert error.report.advice.endswith(LOSS_FIX)
    assert str(error).endswith(f" batch 0.\n{error.report.advice}")
