"""Lightning modules and a fit for tests/test_integrations_lightning.py (its `lm` fixture) and
tests/test_integrations_gradients.py, imported by the tests that use them, not at collection: `import lightning`
costs 4 s of CPU in every pytest-xdist worker that collects it."""

import lightning
import torch
from torch import nn

from torchdoctor.integrations.lightning import DebugUnderflowOverflowCallback

__all__ = [
    "DebugUnderflowOverflowCallback",
    "FailsAfterForward",
    "LightningNet",
    "Regression",
    "fit",
    "loader",
]


class Regression(lightning.LightningModule):
    """A two-layer regression; ``call_self`` picks ``self(x)`` or ``self.model(x)`` in ``training_step``."""

    def __init__(self, plant_overflow: bool = False, call_self: bool = True):
        super().__init__()
        torch.manual_seed(0)
        self.model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.call_self = call_self
        if plant_overflow:  # weights grown until the second layer's output no longer fits in fp32
            self.grow_weights(1e20)
        self.batches_seen = []

    def grow_weights(self, factor: float) -> None:
        with torch.no_grad():
            self.model[0].weight.mul_(factor)
            self.model[2].weight.mul_(factor)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_index):
        x, y = batch
        prediction = self(x) if self.call_self else self.model(x)
        return nn.functional.mse_loss(prediction, y)

    def on_train_batch_end(self, outputs, batch, batch_index):
        detector = self.trainer.callbacks[0].detector
        self.batches_seen.append(detector.batch_number if detector else None)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def loader():
    generator = torch.Generator().manual_seed(1)
    x = torch.rand(16, 4, generator=generator) + 0.5
    data = torch.utils.data.TensorDataset(x, x.sum(dim=1, keepdim=True))
    return torch.utils.data.DataLoader(data, batch_size=4)


def fit(module, callback, max_steps=3, precision="32-true"):
    trainer = lightning.Trainer(
        accelerator="cpu",
        precision=precision,
        max_steps=max_steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[callback],
    )
    trainer.fit(module, loader())
    return trainer


class FailsAfterForward(Regression):
    def training_step(self, batch, batch_index):
        super().training_step(batch, batch_index)
        raise RuntimeError("the loss function broke")


class LightningNet(lightning.LightningModule):
    """Lightning around a plain module ``net`` whose forward returns ``{"loss": ...}``."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, y):
        return self.net(x, y)

    def training_step(self, batch, batch_index):
        return self(*batch)["loss"]

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)
