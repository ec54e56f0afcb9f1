"""DebugUnderflowOverflowCallback in a real Hugging Face Trainer: a tiny T5 from a config, a few CPU steps."""

import io
import logging
import os

import pytest
import torch
from helpers import hook_count
from rank_runner import run_ranks

transformers = pytest.importorskip("transformers")

import models  # noqa: E402  (needs transformers)

from torchdoctor.integrations.transformers import DebugUnderflowOverflowCallback  # noqa: E402
from torchdoctor.numerics.detector import InfNanDetected  # noqa: E402

BLOCK = "encoder.block.1.layer.1.DenseReluDense"


def tiny_t5(plant_overflow: bool):
    """A small random T5; with ``plant_overflow``, BLOCK's output no longer fits in fp32."""
    model = models.tiny_t5(**models.T5_WIDER)
    if plant_overflow:  # as if training had let both of the block's weights grow 1e20-fold
        block = model.get_submodule(BLOCK)
        with torch.no_grad():
            block.wi.weight.mul_(1e20)
            block.wo.weight.mul_(1e20)
    return model


class Pairs(torch.utils.data.Dataset):
    """8 random (input_ids, labels) pairs, the same in every process."""

    def __init__(self, n: int = 8):
        generator = torch.Generator().manual_seed(1)
        self.ids = torch.randint(1, 64, (n, 8), generator=generator)
        self.labels = torch.randint(1, 64, (n, 8), generator=generator)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


def make_trainer(tmp_path, model, callbacks, **overrides):
    settings = {
        "output_dir": str(tmp_path / "out"),
        "use_cpu": True,
        "report_to": [],
        "max_steps": 3,
        "per_device_train_batch_size": 2,
        "save_strategy": "no",
        "disable_tqdm": True,
        "logging_steps": 100,
    }
    args = transformers.TrainingArguments(**{**settings, **overrides})
    return transformers.Trainer(model=model, args=args, train_dataset=Pairs(), callbacks=callbacks)


class Watcher(transformers.TrainerCallback):
    """Records, at each step, which batch the detector of ``callback`` is on and how many hooks the model has."""

    def __init__(self, callback):
        self.callback = callback
        self.seen = []

    def on_step_end(self, args, state, control, model=None, **kwargs):
        detector = self.callback.detector
        self.seen.append((detector.batch_number if detector else None, hook_count(model)))


def test_planted_overflow_caught_report_names_the_module_and_the_hooks_come_off(tmp_path, capsys):
    model = tiny_t5(plant_overflow=True)
    callback = DebugUnderflowOverflowCallback(max_frames_to_save=5)
    trainer = make_trainer(tmp_path, model, [callback])
    with pytest.raises(InfNanDetected) as error:
        trainer.train()
    assert error.value.module_name == f"{BLOCK}.wo"
    assert error.value.batch_number == 0
    out = capsys.readouterr().out
    assert "Detected inf/nan during batch_number=0" in out
    assert "Last 5 forward frames:" in out
    assert f"{BLOCK}.wo Linear" in out
    # off on the way out of the forward that raised, though the Trainer never called on_train_end
    assert callback.detector is None and hook_count(model) == 0


def test_healthy_run_completes_options_apply_and_hooks_come_off(tmp_path, capsys):
    model = tiny_t5(plant_overflow=False)
    output = io.StringIO()
    callback = DebugUnderflowOverflowCallback(trace_batch_nums=[1], file=output)
    watcher = Watcher(callback)
    result = make_trainer(tmp_path, model, [callback, watcher]).train()
    assert result.global_step == 3 and torch.isfinite(torch.tensor(result.training_loss))
    modules = len(list(model.modules()))
    # attached during training, one batch per step, one hook per module plus the two that watch for exceptions
    assert watcher.seen == [(1, modules + 2), (2, modules + 2), (3, modules + 2)]
    assert callback.detector is None and hook_count(model) == 0
    # trace_batch_nums=[1] and file= reached the detector: batch 1's frames went to the file, not stdout
    traced = output.getvalue()
    assert "*** Starting batch number=1 ***" in traced and f"{BLOCK}.wo Linear" in traced
    assert "batch number=2" not in traced
    assert "Starting batch number" not in capsys.readouterr().out


def test_under_gradient_accumulation_a_batch_is_a_micro_batch(tmp_path):
    model = tiny_t5(plant_overflow=False)
    callback = DebugUnderflowOverflowCallback()
    watcher = Watcher(callback)
    make_trainer(tmp_path, model, [callback, watcher], max_steps=2, gradient_accumulation_steps=2).train()
    assert [batch for batch, _ in watcher.seen] == [2, 4]


def test_alongside_debug_underflow_overflow_one_dump_ours(tmp_path, capsys, caplog):
    model = tiny_t5(plant_overflow=True)
    callback = DebugUnderflowOverflowCallback()
    trainer = make_trainer(tmp_path, model, [callback], debug="underflow_overflow")
    with caplog.at_level(logging.WARNING, logger="torchdoctor.integrations.transformers"):
        with pytest.raises(InfNanDetected):
            trainer.train()
    modules = len(list(model.modules()))
    assert f"took transformers' off {modules} modules" in caplog.text
    out = capsys.readouterr().out
    assert out.count("Detected inf/nan") == 1
    assert hook_count(model) == 0


def test_debug_underflow_overflow_alone_is_transformers_own(tmp_path, capsys):
    """The baseline the test above changes: without the callback, transformers' detector raises its ValueError."""
    model = tiny_t5(plant_overflow=True)
    trainer = make_trainer(tmp_path, model, [], debug="underflow_overflow")
    with pytest.raises(ValueError) as error:
        trainer.train()
    assert not isinstance(error.value, InfNanDetected)
    assert capsys.readouterr().out.count("Detected inf/nan") == 1


class FailsAtStepEnd(transformers.TrainerCallback):
    """Raises outside the model's forward, where no Trainer event tells callbacks about it."""

    def on_step_end(self, args, state, control, **kwargs):
        raise RuntimeError("the logger broke")


def test_hooks_left_by_an_exception_outside_the_forward_are_replaced_not_stacked(tmp_path):
    model = tiny_t5(plant_overflow=False)
    callback = DebugUnderflowOverflowCallback()
    with pytest.raises(RuntimeError, match="the logger broke"):
        make_trainer(tmp_path, model, [callback, FailsAtStepEnd()]).train()
    modules = len(list(model.modules()))
    assert hook_count(model) == modules + 2  # left on: the Trainer has no event for this
    callback.remove()
    assert hook_count(model) == 0
    with pytest.raises(RuntimeError, match="the logger broke"):
        make_trainer(tmp_path, model, [callback, FailsAtStepEnd()]).train()
    watcher = Watcher(callback)
    make_trainer(tmp_path, model, [callback, watcher], max_steps=1).train()
    assert watcher.seen == [(1, modules + 2)]  # the next train() took the old ones off first
    assert hook_count(model) == 0


RANK_SCRIPT = """
import sys, transformers
sys.path.insert(0, {tests!r})
from test_integrations_transformers import Pairs, tiny_t5
from torchdoctor.integrations.transformers import DebugUnderflowOverflowCallback
from torchdoctor.numerics.detector import InfNanDetected
args = transformers.TrainingArguments(output_dir=sys.argv[1], use_cpu=True, report_to=[], max_steps=2,
                                      per_device_train_batch_size=2, save_strategy="no", disable_tqdm=True,
                                      ddp_backend="gloo", ddp_timeout=60)
model = tiny_t5(plant_overflow=True)
trainer = transformers.Trainer(model=model, args=args, train_dataset=Pairs(),
                               callbacks=[DebugUnderflowOverflowCallback(max_frames_to_save=3)])
try:
    trainer.train()
except InfNanDetected as error:
    hooks = sum(len(m._forward_hooks) for m in model.modules())
    print(f"CAUGHT rank={{trainer.args.process_index}} module={{error.module_name}} hooks={{hooks}}", flush=True)
"""


@pytest.mark.timeout(240)  # two processes that each import torch and transformers, on a busy machine
def test_two_ranks_each_dump_says_its_rank_and_names_the_models_own_modules(tmp_path):
    results = run_ranks(
        RANK_SCRIPT.format(tests=os.path.dirname(__file__)),
        tmp_path,
        nprocs=2,
        timeout=200,
        args=lambda rank: [str(tmp_path / f"out{rank}")],
    )
    outputs = [result.output for result in results]
    for rank, out in enumerate(outputs):
        assert f"CAUGHT rank={rank} module={BLOCK}.wo hooks=0" in out, out
        assert f"on rank {rank} of 2 (host " in out, out
        # the unwrapped model's own names, not DistributedDataParallel's "module.…"
        assert f"\n{' ' * 17}{BLOCK}.wo Linear" in out or f"{BLOCK}.wo Linear" in out
        assert "module.encoder" not in out
