"""keep_in_fp32 on a real T5 built from a config, with a planted fp16 overflow, and on small modules."""

import pytest
import torch
from torch import nn

import torchdoctor
from torchdoctor.numerics.fp32 import keep_in_fp32, suggestion

transformers = pytest.importorskip("transformers")

import models  # noqa: E402  (needs transformers)

BLOCK = "encoder.block.1.layer.1.DenseReluDense"
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def t5_with_planted_overflow(device: str = "cpu"):
    """A small random T5 whose BLOCK outputs ~1e6: fine in fp32, far past fp16's 65504."""
    model = models.tiny_t5(**models.T5_WIDER).to(device)
    batch = {
        "input_ids": torch.randint(1, 64, (2, 8), device=device),
        "labels": torch.randint(1, 64, (2, 8), device=device),
    }
    block = model.get_submodule(BLOCK)
    seen = []
    handle = block.register_forward_hook(lambda module, args, output: seen.append(output.abs().max().item()))
    with torch.no_grad():
        model(**batch)
        block.wo.weight.mul_(1e6 / seen[-1])  # as if training had let these weights grow
        model(**batch)
    handle.remove()
    assert 1e5 < seen[-1] < 1e7  # finite in fp32, would overflow fp16
    return model, batch


def train_steps(model, batch, device: str, steps: int = 3) -> list[float]:
    """Training steps under fp16 autocast; the losses."""
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(steps):
        with torch.autocast(device, dtype=torch.float16):
            loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("device", DEVICES)
def test_planted_overflow_nan_without_fix_finite_with_it_and_back_after_undo(device):
    model, batch = t5_with_planted_overflow(device)
    with torch.no_grad(), torch.autocast(device, dtype=torch.float16):
        assert not torch.isfinite(model(**batch).loss)

    fix = torchdoctor.keep_in_fp32(model, BLOCK)
    losses = train_steps(model, batch, device)
    assert all(torch.isfinite(torch.tensor(losses))), losses
    with torch.autocast(device, dtype=torch.float16):
        loss = model(**batch).loss
    loss.backward()  # outside autocast, as torch's AMP recipe says: inside, backward ops run autocast too
    grads_finite = [torch.isfinite(p.grad).all().item() for p in model.parameters() if p.grad is not None]
    assert grads_finite and all(grads_finite)

    fix.undo()
    with torch.no_grad(), torch.autocast(device, dtype=torch.float16):
        assert not torch.isfinite(model(**batch).loss)


def test_kept_block_computes_in_fp32_and_its_output_stays_fp32():
    model, batch = t5_with_planted_overflow()
    block = model.get_submodule(BLOCK)
    dtypes = {}
    block.wi.register_forward_hook(lambda m, a, out: dtypes.__setitem__("wi", out.dtype))
    block.register_forward_hook(lambda m, a, out: dtypes.__setitem__("block", out.dtype))

    with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
        model(**batch)
    assert dtypes == {"wi": torch.float16, "block": torch.float16}

    with keep_in_fp32(model, BLOCK) as fix:
        assert fix.active and fix.names == [BLOCK]
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
            model(**batch)
            # autocast is back on for the modules after the kept one
            assert torch.is_autocast_enabled("cpu")
        assert dtypes == {"wi": torch.float32, "block": torch.float32}
    assert not fix.active

    with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
        model(**batch)
    assert dtypes == {"wi": torch.float16, "block": torch.float16}


class Recorder(nn.Module):
    """Records the dtypes it is called with, and whether autocast was on inside it."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.calls = []

    def forward(self, x, extras=None, *, scale=None, ids=None, fail=False):
        self.calls.append(
            {
                "x": x.dtype,
                "extras": [t.dtype for t in extras["list"]] + [extras["pair"][1].dtype],
                "scale": scale.dtype,
                "ids": ids.dtype,
                "autocast": torch.is_autocast_enabled("cpu"),
            }
        )
        if fail:
            raise RuntimeError("boom")
        return self.linear(x) * scale


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Recorder()

    def forward(self, **kwargs):
        return self.inner(**kwargs)


def nested_inputs():
    half = torch.ones(2, 4, dtype=torch.float16)
    return {
        "x": half,
        "extras": {"list": [half, torch.ones(1, dtype=torch.bfloat16)], "pair": (1, half)},
        "scale": torch.tensor(2.0, dtype=torch.bfloat16),
        "ids": torch.tensor([1, 2]),
        "fail": False,
    }


def test_nested_args_and_kwargs_are_upcast_ints_left_alone():
    model = Outer()
    keep_in_fp32(model, "inner")
    with torch.autocast("cpu", dtype=torch.float16):
        out = model(**nested_inputs())
    assert model.inner.calls[-1] == {
        "x": torch.float32,
        "extras": [torch.float32, torch.float32, torch.float32],
        "scale": torch.float32,
        "ids": torch.int64,
        "autocast": False,
    }
    assert out.dtype == torch.float32


def test_autocast_comes_back_when_the_kept_module_raises():
    model = Outer()
    keep_in_fp32(model, "inner")
    with torch.autocast("cpu", dtype=torch.float16):
        with pytest.raises(RuntimeError, match="boom"):
            model(**{**nested_inputs(), "fail": True})
        assert torch.is_autocast_enabled("cpu")
        assert model.inner.calls[-1]["autocast"] is False
        # and the module still works after the failure
        model(**nested_inputs())
        assert torch.is_autocast_enabled("cpu")


def test_unknown_name_is_named_with_close_matches():
    model, _ = t5_with_planted_overflow()
    with pytest.raises(ValueError) as error:
        keep_in_fp32(model, "encoder.block.1.layer.1.DenseReluDens")
    message = str(error.value)
    assert "'encoder.block.1.layer.1.DenseReluDens'" in message
    assert f"'{BLOCK}'" in message
    with pytest.raises(ValueError, match="no module named 'nothing.like.it'"):
        keep_in_fp32(model, BLOCK, "nothing.like.it")
    # a failed call changes nothing
    assert not model.get_submodule(BLOCK)._forward_pre_hooks
    with pytest.raises(TypeError, match="at least one module name"):
        keep_in_fp32(model)
    with pytest.raises(TypeError, match="Linear"):
        keep_in_fp32(model, model.get_submodule(BLOCK).wo)


def test_half_weights_are_refused_with_the_fix():
    model = Outer().half()
    with pytest.raises(ValueError, match=r'torch.float16 weights.*model.get_submodule\("inner"\).float\(\)'):
        keep_in_fp32(model, "inner")


def test_undo_twice_and_repr():
    model = Outer()
    fix = keep_in_fp32(model, "inner", "inner")
    assert fix.names == ["inner"]
    assert repr(fix) == "KeptInFp32('inner'; active)"
    fix.undo()
    fix.undo()
    assert repr(fix) == "KeptInFp32('inner'; undone)"
    assert not model.inner._forward_pre_hooks and not model.inner._forward_hooks


def test_suggestion_is_the_line_to_paste():
    assert suggestion(BLOCK) == f'torchdoctor.keep_in_fp32(model, "{BLOCK}")'
    model, batch = t5_with_planted_overflow()
    # the suggested line works as written
    fix = eval(suggestion(BLOCK), {"torchdoctor": torchdoctor, "model": model})
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
        assert torch.isfinite(model(**batch).loss)
    fix.undo()


def test_the_overflow_error_ends_with_the_call_that_fixes_it(capsys):
    from torchdoctor.numerics.detector import InfNanDetected

    model, batch = t5_with_planted_overflow()
    with torchdoctor.DebugUnderflowOverflow(model, max_frames_to_save=3):
        with pytest.raises(InfNanDetected) as error:
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
                model(**batch)
    assert error.value.module_name == f"{BLOCK}.wo"
    last_line = str(error.value).strip().splitlines()[-1]
    assert last_line == suggestion(BLOCK)
    printed = capsys.readouterr().out
    assert printed.strip().endswith("output") and last_line not in printed  # the dump is transformers' text
    # pasted as printed, it fixes the run
    exec(last_line, {"torchdoctor": torchdoctor, "model": model})
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
        assert torch.isfinite(model(**batch).loss)


def test_a_model_that_is_not_a_module_is_named():
    with pytest.raises(TypeError, match=r"model=5 \(int\) is not a torch.nn.Module"):
        keep_in_fp32(5)
    with pytest.raises(TypeError, match=r"model='encoder.block.1' \(str\) is not a torch.nn.Module"):
        keep_in_fp32("encoder.block.1", "encoder")  # the model left out
    with pytest.raises(TypeError, match="needs at least one module name"):
        keep_in_fp32(nn.Linear(2, 2))
