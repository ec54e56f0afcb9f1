# ranks: 3
# culprit: 0
# ends: hang
"""The shape of pytorch/examples' distributed/ddp-tutorial-series/multigpu_torchrun.py (our own code): a
Trainer whose `_save_snapshot` holds a barrier, called only on rank 0 two frames up, under
`if self.gpu_id == 0 and epoch % self.save_every == 0:`. Ranks 1 and 2 go on into DDP's gradient all_reduce."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, data, save_every):
        self.gpu_id = dist.get_rank()
        self.model = DDP(model)
        self.data = data
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.save_every = save_every

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.model(source), targets)
        loss.backward()
        self.optimizer.step()

    def _run_epoch(self, epoch):
        for source, targets in self.data:
            self._run_batch(source, targets)

    def _save_snapshot(self, epoch):
        snapshot = {"MODEL_STATE": self.model.module.state_dict(), "EPOCHS_RUN": epoch}
        dist.barrier()  # wait until the snapshot is complete before anyone reads it
        return snapshot

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)
            if self.gpu_id == 0 and epoch % self.save_every == 0:  # <- culprit
                self._save_snapshot(epoch)


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    data = [(torch.randn(4, 20), torch.randn(4, 1)) for _ in range(4)]
    Trainer(torch.nn.Linear(20, 1), data, save_every=2).train(max_epochs=6)
    dist.destroy_process_group()


main()
