"""A training run written as users write them, in a framework's own loop, for the straggler tests: a small
causal LM from a config in transformers' ``Trainer`` (LOOP=trainer) or a small classifier in Lightning's
``Trainer`` (LOOP=lightning), DDP over gloo on the CPU, or a plain loop over FSDP2's ``fully_shard`` on a
DeviceMesh (LOOP=fsdp2), synthetic data, nothing of torchdoctor's in it. Rank
SLOW_RANK's batches take SLOW_MS longer to build from batch SLOW_FROM on (a tokenizer or a decoder doing more
work on one rank: tests/ only, nothing in src/ knows it)."""

import os
import time

import torch

LOOP = os.environ.get("LOOP", "trainer")
STEPS = int(os.environ.get("STEPS", "140"))
SLOW_RANK = int(os.environ.get("SLOW_RANK", "-1"))
SLOW_MS = float(os.environ.get("SLOW_MS", "0"))
SLOW_FROM = int(os.environ.get("SLOW_FROM", "60"))
RANK = int(os.environ.get("RANK", "0"))
built = [0]


def collate(rows):
    """Stack the rows; slower on the planted rank once it is on."""
    built[0] += 1
    if RANK == SLOW_RANK and built[0] > SLOW_FROM:
        time.sleep(SLOW_MS / 1000)
    return {key: torch.stack([row[key] for row in rows]) for key in rows[0]}


class Rows(torch.utils.data.Dataset):
    def __init__(self, make):
        self.make = make

    def __len__(self):
        return 100_000

    def __getitem__(self, index):
        return self.make(torch.Generator().manual_seed(index))


def tokens(generator):
    ids = torch.randint(0, 500, (32,), generator=generator)
    return {"input_ids": ids, "labels": ids}


def features(generator):
    return {"x": torch.randn(256, generator=generator), "y": torch.randint(0, 10, (), generator=generator)}


def with_transformers() -> None:
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=500, n_positions=64))
    args = TrainingArguments(
        output_dir=os.environ.get("OUT", "out"), per_device_train_batch_size=8, max_steps=STEPS,
        save_strategy="no", report_to=[], use_cpu=True, ddp_backend="gloo", disable_tqdm=True, logging_steps=50,
    )  # fmt: skip
    Trainer(model=model, args=args, train_dataset=Rows(tokens), data_collator=collate).train()


def with_lightning() -> None:
    import lightning

    class Classifier(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(
                torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
                torch.nn.Linear(512, 10),
            )  # fmt: skip

        def training_step(self, batch, index):
            return torch.nn.functional.cross_entropy(self.net(batch["x"]), batch["y"])

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    trainer = lightning.Trainer(
        accelerator="cpu", devices=int(os.environ.get("WORLD_SIZE", "1")), strategy="ddp", max_steps=STEPS,
        enable_progress_bar=False, logger=False, enable_checkpointing=False, enable_model_summary=False,
    )  # fmt: skip
    data = torch.utils.data.DataLoader(Rows(features), batch_size=16, collate_fn=collate)
    trainer.fit(Classifier(), data)


def with_fsdp2() -> None:
    """fully_shard on a 1-D DeviceMesh: the parameters' all-gathers and the gradients' reduce-scatters are
    FSDP's, on the mesh's group (its own process group, not the default one)."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (dist.get_world_size(),), mesh_dim_names=("dp",))
    torch.manual_seed(0)
    layers = [torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(512, 10))
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.utils.data.DataLoader(Rows(features), batch_size=16, collate_fn=collate)
    for _, batch in zip(range(STEPS), data, strict=False):
        loss = torch.nn.functional.cross_entropy(model(batch["x"]), batch["y"])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    {"trainer": with_transformers, "lightning": with_lightning, "fsdp2": with_fsdp2}[LOOP]()
