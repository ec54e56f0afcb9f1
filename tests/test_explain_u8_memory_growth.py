"""Out of memory after many steps, read from the steps the console printed. Found for session 41 with nanoGPT's
train.py (karpathy/nanoGPT) on the CPU under `ulimit -v`, one fault planted at a time: a forward hook that kept
every block's output ran out at iter 70, and explain's fix led with the limit and a list of ways to need less
memory, a smaller batch among them, though the batch had fitted 70 times. The jobs here are our own loop in that
script's shape (a config-built GPT-2 of random weights, `iter N: loss X` each step), with the address-space limit
set by the script just above what it uses, as `ulimit -v` sets it. Their consoles are recorded
(fixtures/recorded_runs/; benchmarks/recorded_runs.py runs them again)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from explaining import explained
from recorded import recorded

from torchdoctor.explain.steps_before import is_progress, steps_before

SCRIPT = """
import resource, sys
import torch
from transformers import GPT2Config, GPT2LMHeadModel

fault = sys.argv[1]
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(vocab_size=256, n_embd=256, n_layer=2, n_head=4, n_positions=128))
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
batch_size = 256 if fault == "batch_too_big" else 8
kept = []
if fault == "hook_keeps_outputs":
    for block in model.transformer.h:
        block.register_forward_hook(lambda module, inputs, output: kept.append(output))


def limit_memory():
    # the address space's peak so far: from the second step on (the optimizer's state made) every step needs as
    # much again, no more
    peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmPeak:")) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (peak + 96 * 2**20, resource.getrlimit(resource.RLIMIT_AS)[1]))


if fault == "batch_too_big":
    limit_memory()  # before any step: what the model needs to start with, and no room for this batch
for iter_num in range(60):
    x = torch.randint(0, 256, (batch_size, 128))
    loss = model(input_ids=x, labels=x).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"iter {iter_num}: loss {loss.item():.4f}", flush=True)
    if iter_num == 1 and fault != "batch_too_big":
        limit_memory()
"""


def run(folder: Path, fault: str) -> str:
    (folder / "train.py").write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, "train.py", fault],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )
    return done.stdout + done.stderr


RECORDED_RUNS = {
    f"u8_{fault}": (lambda folder, fault=fault: run(folder, fault))
    for fault in ("hook_keeps_outputs", "batch_too_big", "healthy")
}


def test_memory_that_grew_for_many_steps_is_said_first_with_the_steps_that_fitted():
    output = recorded("u8_hook_keeps_outputs")
    assert "DefaultCPUAllocator: can't allocate memory" in output and "iter 3: loss" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.cpu_oom", found.summary
    assert "the steps above it fitted: memory grew from step to step" in found.summary, found.summary
    lead = found.fix.splitlines()[0]
    assert lead.startswith("The steps printed above it ran (iter "), lead
    assert "a smaller batch only postpones it" in lead and "kept by a forward hook" in lead, lead
    assert "total += loss.item()" in lead and "@torch.no_grad()" in lead, lead


def test_a_batch_that_never_fitted_is_not_read_as_memory_that_grew():
    output = recorded("u8_batch_too_big")
    assert "DefaultCPUAllocator: can't allocate memory" in output and "iter 0:" not in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.cpu_oom", found.summary
    assert "memory grew" not in found.summary and "steps printed above" not in found.fix, found.fix
    assert "a smaller batch size" in found.fix, found.fix


def test_the_same_training_without_a_fault_is_left_alone():
    output = recorded("u8_healthy")
    assert "iter 59: loss" in output and "Error" not in output, output[-3000:]
    assert explained(output).id == "log.unrecognised"


def test_steps_are_read_from_the_progress_lines_users_print():
    bar = " 23%|██▎       | {0}/100 [00:05<00:17,  4.40it/s]"
    lightning = "Epoch 0:  45%|████▌     | {0}/100 [00:10<00:12,  4.47it/s, v_num=0, train_loss=5.60]"
    assert steps_before([bar.format(n) for n in (21, 22, 23)])["steps_last"] == "step 23"
    assert steps_before([lightning.format(n) for n in (43, 44, 45)])["steps_first"] == "step 43"
    assert steps_before([f"[rank1]: step {n}/1000 | loss 2.3" for n in (7, 8, 9)])["steps_last"] == "step 9"
    # a bar counts the steps done, so one line of it is enough: Lightning's RichProgressBar as a file records it
    rich = "Epoch 0/0  ╸                  7/200 0:00:04 • 0:02:07 1.52it/s train_loss: 5.591"
    assert steps_before([rich]) == {"steps_first": "step 1", "steps_last": "step 7", "steps_line": rich}
    assert steps_before([bar.format(2)]) == {}
    # a bar of something else than steps: datasets' map over the examples, a download
    assert steps_before(["Map:  20%|██        | 1000/5000 [00:01<00:04, 912.31 examples/s]"]) == {}
    assert steps_before(["model.safetensors:  40%|████      | 200M/500M [00:05<00:07, 40.1MB/s]"]) == {}
    # a bar in iterations that counts no training step: the shards of a model loaded before it ran out, an
    # evaluation, Lightning's validation
    for other in (
        "Loading checkpoint shards: 100%|██████████| 3/3 [00:05<00:00,  1.70s/it]",
        "Evaluating: 100%|██████████| 50/50 [00:05<00:00,  9.70it/s]",
        "Validation DataLoader 0:  40%|████      | 20/50 [00:02<00:03,  9.70it/s]",
    ):
        assert steps_before([other]) == {}, other
        assert not is_progress(other), other  # nor the step a cuda_oom fix quotes as seen (progress_read)
    assert (
        steps_before(["[rank0]: " + bar.format(23)])["steps_last"] == "step 23"
    )  # a rank's prefix is no words
    # too few, or not rising (a new run started in the same log): no evidence of steps that fitted
    assert steps_before(["iter 0: loss 5.6", "iter 1: loss 5.5"]) == {}
    assert steps_before(["iter 5: loss 5.6", "iter 6: loss 5.5", "iter 0: loss 5.6"]) == {}
    assert steps_before(['  File "train.py", line 3, in <module>', "    step(1, 2, 3)"]) == {}


def test_gpu_0_shared_by_the_ranks_names_a_checkpoint_loaded_without_map_location():
    # what every rank's torch.load(path) of a checkpoint saved from cuda:0 leaves: the other ranks' processes
    # listed on GPU 0 by the allocator's message (its words as torch 2.x prints them)
    listed = " ".join(f"Process {pid} has 3.50 GiB memory in use." for pid in (3112, 3113, 3114))
    line = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        f"15.77 GiB of which 1.06 GiB is free. {listed} Of the allocated memory 3.12 GiB is allocated by PyTorch, "
        "and 0.31 GiB is reserved by PyTorch but unallocated.\n"
    )
    found = explained(line)
    assert found.id == "log.cuda_oom", found.summary
    assert "torch.load(path, map_location='cpu')" in found.fix and "set_device" in found.fix, found.fix
