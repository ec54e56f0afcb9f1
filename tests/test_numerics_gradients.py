"""check_gradients=True: the backward pass is watched too, and the dump names the module where it started."""

from __future__ import annotations

import io
import re
import warnings

import pytest
import torch
from models import tiny_t5
from torch import nn
from torch.utils.checkpoint import checkpoint

from torchdoctor.numerics.detector import DebugUnderflowOverflow, InfNanDetected


class _Bomb(torch.autograd.Function):
    """Identity forward; its backward turns the gradient into inf."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * float("inf")


class GradBomb(nn.Module):
    def __init__(self):
        super().__init__()
        self.armed = False

    def forward(self, x):
        return _Bomb.apply(x) if self.armed else x * 1.0


def bomb_model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), GradBomb(), nn.Linear(4, 2))


@pytest.fixture(autouse=True)
def _quiet_full_backward_hook_warning():
    # PyTorch warns when a module's inputs need no gradient (the root's never do)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        warnings.filterwarnings("ignore", message="For backward hooks to be called")
        yield


def step(model, x):
    model(x).sum().backward()


def test_dump_ends_at_the_module_where_the_gradient_went_bad():
    model = bomb_model()
    out = io.StringIO()
    detector = DebugUnderflowOverflow(model, check_gradients=True, max_frames_to_save=3, file=out)
    x = torch.ones(2, 3)
    step(model, x)
    model[2].armed = True
    with pytest.raises(InfNanDetected) as caught:
        step(model, x)
    error = caught.value
    assert (error.direction, error.batch_number, error.module_name) == ("backward", 1, "2")
    text = out.getvalue()
    assert "\nDetected inf/nan in backward during batch_number=1\nLast 3 backward frames:\n" in text
    frames = error.report.frames
    # backward order: the root's output gradient, the last Linear, then the bomb; the first Linear never ran
    assert [f.module_name for f in frames] == ["", "3", "2"]
    assert [e.name for e in frames[1].entries] == [
        "grad_output[0]",
        "weight.grad",
        "bias.grad",
        "grad_input[0]",
    ]
    bomb = frames[-1]
    assert [(e.name, e.bad) for e in bomb.entries] == [("grad_output[0]", False), ("grad_input[0]", True)]
    assert text.startswith("grad_input[0] has infs\n")
    detector.remove()


def test_a_parameter_gradient_that_overflows_names_its_module():
    # the input needs no gradient, so PyTorch calls the Linear's hook before its weight's gradient exists
    model = nn.Sequential(nn.Linear(1, 1))
    with torch.no_grad():
        model[0].weight.fill_(0.5)
    out = io.StringIO()
    with (
        DebugUnderflowOverflow(model, check_gradients=True, file=out),
        pytest.raises(InfNanDetected) as caught,
    ):
        step(model, torch.full((4, 1), 1e38))  # forward 5e37 is fine; weight.grad = 4e38 is not
    error = caught.value
    assert error.direction == "backward" and error.module_name == "0"
    last = error.report.frames[-1]
    assert last.module_name == "0" and [e.name for e in last.entries if e.bad] == ["weight.grad"]
    assert "weight.grad has infs" in out.getvalue()


def test_gradient_accumulation_counts_each_micro_batch():
    model = bomb_model()
    out = io.StringIO()
    x = torch.ones(2, 3)
    with (
        DebugUnderflowOverflow(model, check_gradients=True, file=out),
        pytest.raises(InfNanDetected) as caught,
    ):
        for micro_batch in range(6):  # three optimizer steps of two micro-batches each
            model[2].armed = micro_batch == 4
            step(model, x)
            if micro_batch % 2 == 1:
                model.zero_grad()
    assert caught.value.batch_number == 4
    assert "Detected inf/nan in backward during batch_number=4" in out.getvalue()


class Checkpointed(nn.Module):
    def __init__(self, reentrant: bool):
        super().__init__()
        self.inp = nn.Linear(3, 4)
        self.block = nn.Sequential(nn.Linear(4, 4), GradBomb())
        self.out = nn.Linear(4, 1)
        self.reentrant = reentrant

    def forward(self, x):
        h = checkpoint(self.block, self.inp(x), use_reentrant=self.reentrant)
        return self.out(h)


@pytest.mark.parametrize("reentrant", [False, True])
def test_activation_checkpointing(reentrant):
    torch.manual_seed(0)
    model = Checkpointed(reentrant)
    out = io.StringIO()
    x = torch.ones(2, 3)
    with (
        DebugUnderflowOverflow(model, check_gradients=True, file=out),
        pytest.raises(InfNanDetected) as caught,
    ):
        step(model, x)
        model.block[1].armed = True
        step(model, x)
    assert caught.value.module_name == "block.1" and caught.value.batch_number == 1
    # the recomputed forward of the checkpointed block ran during the backward, and was watched
    assert model.inp.weight.grad is not None


@pytest.mark.parametrize("reentrant", [False, True])
def test_recomputed_forwards_belong_to_the_batch_being_differentiated(reentrant):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = nn.Sequential(nn.Linear(3, 3), nn.Tanh())  # Tanh saves its output: recomputed

        def forward(self, x):
            return checkpoint(self.block, x, use_reentrant=reentrant).sum()

    model = Net()
    out = io.StringIO()
    x = torch.ones(2, 3, requires_grad=True)
    with DebugUnderflowOverflow(model, check_gradients=True, trace_batch_nums=[0], file=out):
        model(x).backward()
        model(x).backward()
    text = out.getvalue()
    assert "Starting batch number=1" not in text  # batch 1 is not traced
    # batch 0's trace: the block's forward, and again when the backward recomputes it
    forward_frames = re.findall(r" {18}block\.0 Linear\n\S+ \S+ weight\n", text)
    assert len(forward_frames) == 2


def test_deferred_read_back_gives_the_same_backward_dump():
    dumps = []
    for sync in ("frame", "batch"):
        model = bomb_model()
        out = io.StringIO()
        with (
            DebugUnderflowOverflow(model, check_gradients=True, file=out, sync=sync),
            pytest.raises(InfNanDetected),
        ):
            step(model, torch.ones(2, 3))
            model[2].armed = True
            step(model, torch.ones(2, 3))
        dumps.append(out.getvalue())
    assert dumps[0] == dumps[1]


def test_deferred_backward_reads_back_once_at_the_end_of_the_pass():
    from test_numerics_detector import CountOps

    model = bomb_model()
    with DebugUnderflowOverflow(model, check_gradients=True, sync="batch", file=io.StringIO()) as detector:
        loss = model(torch.ones(2, 3)).sum()
        with CountOps() as backward:
            loss.backward()
    assert backward.counts.get("_local_scalar_dense", 0) == 0  # no .item() while the gradient flows
    assert backward.counts.get("cat", 0) == 1  # one read-back, at the end of the pass
    # the first Linear's input needs no gradient: PyTorch calls its hook early, its weight.grad comes after
    assert [r.module_name for r in detector._backward_buffer] == ["", "3", "2", "1", "0", "0"]
    assert [name for name, _ in detector._backward_buffer[-1].items] == ["weight.grad", "bias.grad"]


def test_traced_batches_print_backward_frames_too():
    model = bomb_model()
    out = io.StringIO()
    with DebugUnderflowOverflow(model, check_gradients=True, trace_batch_nums=[0], file=out):
        step(model, torch.ones(2, 3))
    text = out.getvalue()
    assert "                  3 Linear\n" in text and " grad_output[0]\n" in text and " weight.grad\n" in text


def test_real_t5_trains_clean_then_a_planted_gradient_overflow_is_traced_to_its_module():
    model = tiny_t5(num_layers=1)
    ids = torch.randint(1, 64, (2, 6), generator=torch.Generator().manual_seed(0))
    labels = torch.randint(1, 64, (2, 4), generator=torch.Generator().manual_seed(1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    out = io.StringIO()
    wo = model.decoder.block[0].layer[2].DenseReluDense.wo
    with DebugUnderflowOverflow(model, check_gradients=True, file=out):
        for _ in range(2):
            model(input_ids=ids, labels=labels).loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        # the gradient arriving at one Linear of the decoder overflows
        wo.register_full_backward_pre_hook(lambda module, grad_output: (grad_output[0] * 1e38 * 1e38,))
        with pytest.raises(InfNanDetected) as caught:
            model(input_ids=ids, labels=labels).loss.backward()
    assert caught.value.direction == "backward" and caught.value.batch_number == 2
    assert caught.value.module_name == "decoder.block.0.layer.2.DenseReluDense.wo"
    last = caught.value.report.frames[-1]
    assert [e.name for e in last.entries if e.bad] == ["grad_output[0]", "weight.grad", "grad_input[0]"]
    assert "Detected inf/nan in backward during batch_number=2" in out.getvalue()
    # frames before it, in backward order, are the modules after it in the forward: lm_head among them
    assert "lm_head" in [f.module_name for f in caught.value.report.frames]


def test_modules_returning_model_outputs_lose_their_useless_backward_hook():
    model = tiny_t5(num_layers=1)
    ids = torch.randint(1, 64, (2, 6), generator=torch.Generator().manual_seed(0))
    labels = ids[:, :4].contiguous()
    with DebugUnderflowOverflow(
        model, check_gradients=True, max_frames_to_save=1000, file=io.StringIO()
    ) as detector:
        model(input_ids=ids, labels=labels).loss.backward()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model(input_ids=ids, labels=labels).loss.backward()
        # the root and the stacks return ModelOutputs: no backward frame (PyTorch never calls a full backward
        # hook there either); lm_head returns a tensor and has one
        backward = {r.module_name for r in detector._backward_buffer}
        assert not backward & {"", "encoder", "decoder"}
        assert "lm_head" in backward
        assert not model._backward_hooks and not model.encoder._backward_hooks
    assert not [w for w in caught if "For backward hooks to be called" in str(w.message)]


def test_in_place_modules_are_warned_about():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(inplace=True))
    with pytest.warns(UserWarning, match=r"in-place modules \(1\)"):
        DebugUnderflowOverflow(model, check_gradients=True).remove()


class TwoBranches(nn.Module):
    """One input feeding two modules: each module's grad_input must be its own share of the gradient."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(3, 4)
        self.left = nn.Sequential(GradBomb(), nn.Linear(4, 2))
        self.right = nn.Linear(4, 2)

    def forward(self, x):
        h = self.inp(x)
        return self.left(h) + self.right(h)


def test_an_input_feeding_several_modules_is_blamed_on_the_right_one():
    torch.manual_seed(0)
    model = TwoBranches()
    model.left[0].armed = True
    out = io.StringIO()
    with (
        DebugUnderflowOverflow(model, check_gradients=True, max_frames_to_save=50, file=out),
        pytest.raises(InfNanDetected) as caught,
    ):
        step(model, torch.ones(2, 3))
    assert caught.value.module_name == "left.0"
    frames = {f.module_name: f for f in caught.value.report.frames}
    # `right` finished its backward first: its grad_input is its own share of h's gradient, finite,
    # although h's total gradient (right's share plus the bomb's) is not
    assert [f.module_name for f in caught.value.report.frames] == ["", "right", "left.1", "left.0"]
    assert not frames["right"].bad
    assert [(e.name, e.bad) for e in frames["left.0"].entries] == [
        ("grad_output[0]", False),
        ("grad_input[0]", True),
    ]


def test_gradient_hooks_hold_no_activation_after_the_step():
    import gc
    import weakref

    model = bomb_model()
    with DebugUnderflowOverflow(model, check_gradients=True, file=io.StringIO()) as detector:
        x = torch.ones(2, 3)
        for _ in range(3):
            hidden = model[0](x)
            seen = weakref.ref(hidden)
            model[3](model[2](model[1](hidden))).sum().backward()
            del hidden
            gc.collect()
            assert seen() is None
        watch = detector._gradients  # the backward-pass bookkeeping
        assert not watch._open_calls and not watch._started_calls and not watch._hooked_outputs


def test_retained_graph_backward_twice_gives_frames_twice():
    model = bomb_model()
    with DebugUnderflowOverflow(
        model, check_gradients=True, max_frames_to_save=100, file=io.StringIO()
    ) as detector:
        loss = model(torch.ones(2, 3)).sum()
        loss.backward(retain_graph=True)
        first = [r.module_name for r in detector._backward_buffer]
        loss.backward()
        assert [r.module_name for r in detector._backward_buffer] == first + first


def test_a_forward_that_raised_leaves_the_next_batch_watched_correctly():
    model = bomb_model()
    out = io.StringIO()
    with DebugUnderflowOverflow(model, check_gradients=True, file=out, max_frames_to_save=50) as detector:
        with pytest.raises(RuntimeError):
            # wrong width: the first Linear raises, the root's forward never returns
            model(torch.ones(2, 5, requires_grad=True))
        step(model, torch.ones(2, 3))
        model[2].armed = True
        with pytest.raises(InfNanDetected) as caught:
            step(model, torch.ones(2, 3))
    assert caught.value.module_name == "2"
    assert [f.module_name for f in caught.value.report.frames][-3:] == ["", "3", "2"]
    assert not detector._gradients._open_calls
