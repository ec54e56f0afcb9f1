"""accelerate's training loop (huggingface/accelerate examples/nlp_example.py's prepare, backward and step) on a
tiny config-built GPT-2 of random weights, 2 CPU ranks under torchrun, rank 1 put under an address-space limit
(RLIMIT_AS, as `ulimit -v` sets it) just above what it uses (found for session 31): explain named host memory on
rank 1, but not the user's line (the model's forward is 25 frames deep, 3 lines each under Python 3.11, deeper than
the 40 lines read above an exception), and its fix was all about needing less memory for a 2 MiB request that only
a limit refuses. The job's console is recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it again)."""

from __future__ import annotations

from pathlib import Path

from explaining import explained
from helpers import torchrun_two_ranks
from recorded import recorded

SCRIPT = """
import resource
import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import GPT2Config, GPT2LMHeadModel
from accelerate import Accelerator

accelerator = Accelerator(cpu=True)
model = GPT2LMHeadModel(GPT2Config(vocab_size=64, n_embd=32, n_layer=1, n_head=2, n_positions=512))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
ids = torch.randint(0, 64, (16, 512))
model, optimizer, loader = accelerator.prepare(model, optimizer, DataLoader(TensorDataset(ids), batch_size=8))
if accelerator.process_index == 1:
    used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + 64 * 2**20, resource.getrlimit(resource.RLIMIT_AS)[1]))
for (x,) in loader:
    loss = model(input_ids=x, labels=x).loss
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
"""


def run(folder: Path) -> str:
    done = torchrun_two_ranks(folder, SCRIPT)
    return done.stdout + done.stderr


RECORDED_RUNS = {"u31_small_host_oom": run}


def test_a_rank_under_an_address_space_limit_is_named_with_its_line_and_the_limit():
    output = recorded("u31_small_host_oom")
    assert "DefaultCPUAllocator: can't allocate memory" in output, output[-3000:]
    found = explained(output)
    assert found.id == "log.cpu_oom" and "on rank 1" in found.summary, found.summary
    assert "a request this small refused means almost none was left" in found.summary, found.summary
    assert found.fix.startswith("A request this small is refused") and "ulimit -v" in found.fix
    assert found.details["frame"].endswith("train.py:17 in <module>"), found.details
