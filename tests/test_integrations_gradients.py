"""check_gradients=True through both trainer callbacks: a gradient that goes nan while the forward stays finite."""

import pytest
import torch
from torch import nn

transformers = pytest.importorskip("transformers")

from torchdoctor.integrations.transformers import (  # noqa: E402
    DebugUnderflowOverflowCallback as TrainerCallback,
)
from torchdoctor.numerics.detector import InfNanDetected  # noqa: E402


class Length(nn.Module):
    """sqrt(sum(x²)): finite forward everywhere, an infinite derivative at 0 (the classic nan in backward)."""

    def forward(self, x):
        return x.pow(2).sum(dim=-1, keepdim=True).sqrt()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.encode = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.length = Length()
        self.head = nn.Linear(1, 1)

    def forward(self, x, y=None):
        prediction = self.head(self.length(self.encode(x)))
        return {"loss": nn.functional.mse_loss(prediction, y)}


def dead_inputs(n: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs the ReLU turns into all-zero rows, so Length's gradient is inf * 0 = nan, its output 0."""
    net = Net()
    with torch.no_grad():
        net.encode[0].weight.fill_(1.0)
        net.encode[0].bias.fill_(0.0)
    x = -torch.rand(n, 4) - 0.1
    return net, x, torch.ones(n, 1)


class Rows(torch.utils.data.Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": self.y[i]}


def test_hugging_face_trainer_backward_overflow_caught(tmp_path, capsys):
    net, x, y = dead_inputs()
    callback = TrainerCallback(check_gradients=True)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path),
        use_cpu=True,
        report_to=[],
        max_steps=2,
        save_strategy="no",
        disable_tqdm=True,
    )
    trainer = transformers.Trainer(model=net, args=args, train_dataset=Rows(x, y), callbacks=[callback])
    with pytest.raises(InfNanDetected) as error:
        trainer.train()
    assert error.value.direction == "backward"
    assert error.value.module_name == "length"
    assert "Detected inf/nan in backward during batch_number=0" in capsys.readouterr().out
    callback.remove()
    assert not any(m._forward_hooks or m._backward_hooks for m in net.modules())


def test_lightning_backward_overflow_caught_and_hooks_off(capsys):
    lightning = pytest.importorskip("lightning")  # here, not at collection: 4 s of CPU in every xdist worker
    from lightning_models import DebugUnderflowOverflowCallback as LightningCallback
    from lightning_models import LightningNet

    net, x, y = dead_inputs()
    module = LightningNet(net)
    callback = LightningCallback(check_gradients=True)
    trainer = lightning.Trainer(
        accelerator="cpu",
        max_steps=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[callback],
    )
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=4)
    with pytest.raises(InfNanDetected) as error:
        trainer.fit(module, loader)
    assert error.value.direction == "backward"
    assert error.value.module_name == "net.length"
    assert "Detected inf/nan in backward during batch_number=0" in capsys.readouterr().out
    # Lightning tells callbacks about the exception: everything came off
    assert not any(m._forward_hooks or m._backward_hooks or m._forward_pre_hooks for m in module.modules())
