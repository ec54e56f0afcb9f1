"""The whole training loop decorated, ranks with different memory: an error naming both ranks, never a hang.

The script is shaped like accelerate's ``examples/by_feature/memory.py`` (accelerate 1.15): a BERT classifier
(built from a config) under DDP, AdamW, a warm-up schedule, epochs of training and a gathered evaluation, all
inside the decorated ``inner_training_loop``. Each rank's memory limit is planted by a forward pre-hook that
raises a real ``torch.OutOfMemoryError`` when a batch holds more samples than that rank's limit.

Rank 1 holds 8 samples, rank 0 holds everything: at batch size 16 rank 1 runs out of memory in its forward pass
while rank 0 goes on into DDP's gradient all-reduce and waits there for rank 1, which never comes. Rank 1 sees
rank 0 blocked there (a thread of rank 0 says so in the store) and ends the deadlock at once, not at the
group's timeout.
"""

import json
import re

import pytest
from rank_runner import run_ranks

SCRIPT = r"""
import datetime, json, logging, os, sys
import torch
import torch.distributed as dist
from torch.optim import AdamW
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from transformers import BertConfig, BertForSequenceClassification, get_linear_schedule_with_warmup, set_seed

from torchdoctor import find_executable_batch_size
from torchdoctor.distributed import gather

logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=float(os.environ["GROUP_TIMEOUT"])))
rank = dist.get_rank()
limit = json.loads(os.environ["LIMITS"])[rank]  # the most samples this rank's "GPU" holds at once
finder_timeout = json.loads(os.environ.get("FINDER_TIMEOUT", "null"))


def plant_memory_limit(model):
    def check(module, args):
        rows = args[0].shape[0]
        if rows > limit:
            raise torch.OutOfMemoryError(
                f"CUDA out of memory. Tried to allocate {rows * 2} MiB. GPU {rank} has a total capacity of "
                f"{limit * 2} MiB"
            )
    model.bert.encoder.register_forward_pre_hook(check)


def dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 100, (n, 12), generator=g)
    return TensorDataset(ids, torch.ones_like(ids), torch.randint(0, 2, (n,), generator=g))


def training_function(config):
    lr, num_epochs, seed, batch_size = config["lr"], config["num_epochs"], config["seed"], config["batch_size"]

    @find_executable_batch_size(starting_batch_size=batch_size, timeout=finder_timeout)
    def inner_training_loop(batch_size):
        set_seed(seed)
        model = BertForSequenceClassification(
            BertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                       intermediate_size=32, max_position_embeddings=16)
        )
        plant_memory_limit(model)
        model = torch.nn.parallel.DistributedDataParallel(model)
        optimizer = AdamW(params=model.parameters(), lr=lr)
        train, evaluation = dataset(96, 0), dataset(32, 1)
        train_dataloader = DataLoader(train, sampler=DistributedSampler(train), batch_size=batch_size)
        eval_dataloader = DataLoader(evaluation, sampler=DistributedSampler(evaluation, shuffle=False), batch_size=8)
        lr_scheduler = get_linear_schedule_with_warmup(
            optimizer=optimizer, num_warmup_steps=2, num_training_steps=len(train_dataloader) * num_epochs
        )
        for epoch in range(num_epochs):
            model.train()
            for input_ids, attention_mask, labels in train_dataloader:
                outputs = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
                outputs.loss.backward()
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            model.eval()
            correct = total = 0
            for input_ids, attention_mask, labels in eval_dataloader:
                with torch.no_grad():
                    predictions = model(input_ids=input_ids, attention_mask=attention_mask).logits.argmax(-1)
                predictions, references = gather((predictions, labels))
                correct += int((predictions == references).sum())
                total += len(references)
            if rank == 0:
                print(f"epoch {epoch}: accuracy {correct / total:.2f} at batch size {batch_size}", flush=True)
        return batch_size

    return inner_training_loop()


found = training_function({"lr": 2e-5, "num_epochs": 2, "seed": 42, "batch_size": 16})
print(json.dumps({"rank": rank, "batch_size": found}), flush=True)
dist.destroy_process_group()
"""


def run_example(tmp_path, group_timeout, finder_timeout=None):
    env = {
        "LIMITS": json.dumps([1000, 8]),
        "GROUP_TIMEOUT": str(group_timeout),
        "FINDER_TIMEOUT": json.dumps(finder_timeout),
    }
    # bounded: run_ranks fails the test if a rank is still running at its timeout
    results = run_ranks(SCRIPT, tmp_path, nprocs=2, env=env, timeout=240)
    for result in results:
        assert result.returncode not in (None, 0), result.output[-3000:]
    return [result.stderr for result in results]


def last_error(stderr):
    """The error a rank ended with, without the ``[rankN]: `` torch puts before each line of it.

    A rank whose gloo collective failed may abort at exit after printing it, while torch tears the group down
    ("terminate called without an active exception", seen once on a loaded machine): that line is
    torch's, after the error, and is not the error."""
    lines = [line for line in stderr.strip().splitlines() if not line.startswith("terminate called ")]
    return re.sub(r"^\[rank\d\]: ", "", lines[-1])


RANK_1_OUT_OF_MEMORY = (
    "find_executable_batch_size: batch size 16: out of memory on rank 1 (CUDA out of memory. Tried to "
    "allocate 32 MiB. GPU 1 has a total capacity of 16 MiB)"
)
FIX = "decorate a short probe (one training step that returns the batch size) instead of the whole training loop"


@pytest.mark.timeout(400)  # two ranks importing transformers on a shared 2-core machine
def test_a_certain_deadlock_ends_at_once_naming_both_ranks_not_at_the_timeout(tmp_path):
    # the group would wait 10 minutes and the finder longer: rank 0, still inside the function, is seen
    # blocked in DDP's all-reduce for rank 1, which has left it; both end (run_ranks bounds it at 240 s)
    rank0, rank1 = run_example(tmp_path, group_timeout=600)
    assert RANK_1_OUT_OF_MEMORY in rank1  # logged by the rank that ran out, with its rank
    error = last_error(rank1)
    assert error.startswith(
        "RuntimeError: find_executable_batch_size: deadlock at batch size 16 (try 1): rank 0 waits in "
        "backward() (under DDP, the gradients' all-reduce) inside `inner_training_loop`, for rank 1, which has "
        "left it on its out-of-memory error (CUDA out of memory."
    ), error
    assert FIX in error
    error = last_error(rank0)
    assert error.startswith("RuntimeError: `inner_training_loop` failed on rank(s) 0 at batch size 16"), error
    assert "while rank(s) 1 ran out of memory at that size (rank 1: CUDA out of memory." in error
