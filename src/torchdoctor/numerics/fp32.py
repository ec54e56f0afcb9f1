"""`keep_in_fp32`: run chosen modules in fp32 with autocast off — the usual fix for a block that overflows fp16.

The recipe the overflow detector's users are given once it names the block that overflows: run that block's
forward with autocast disabled and its inputs upcast to fp32, and leave its output in fp32 (casting it back to
fp16 would bring the inf right back; the next module under autocast casts it down itself, after the layer norm
or residual sum that follows has brought it back into range). ``keep_in_fp32`` does that with forward hooks, so it
can be undone and needs no edit of the model's code.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

# autocast device types worth switching off; the ones this build of torch does not know are skipped
_AUTOCAST_DEVICES = ("cuda", "cpu", "xpu", "mps", "hpu")
_LOW_PRECISION = (torch.float16, torch.bfloat16)


def suggestion(module_name: str) -> str:
    """The line to try once ``module_name`` is found to overflow; the overflow error (`InfNanDetected`) ends with it.

    >>> suggestion("encoder.block.2.layer.1.DenseReluDense")
    'torchdoctor.keep_in_fp32(model, "encoder.block.2.layer.1.DenseReluDense")'
    """
    return f'torchdoctor.keep_in_fp32(model, "{module_name}")'


class KeptInFp32:
    """What ``keep_in_fp32`` returns: the modules it changed, and ``undo()`` (also on leaving a ``with`` block)."""

    def __init__(self, names: list[str], handles: list[Any]) -> None:
        self.names = names
        self._handles = handles

    def undo(self) -> None:
        """Put the modules back as they were: their forward runs under autocast again. Safe to call twice."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    @property
    def active(self) -> bool:
        """True until ``undo()``."""
        return bool(self._handles)

    def __enter__(self) -> KeptInFp32:
        return self

    def __exit__(self, *exc: object) -> None:
        self.undo()

    def __repr__(self) -> str:
        state = "active" if self.active else "undone"
        return f"KeptInFp32({', '.join(repr(n) for n in self.names)}; {state})"


def keep_in_fp32(model: nn.Module, *module_names: str) -> KeptInFp32:
    """Run the named submodules of ``model`` in fp32: autocast off, floating-point inputs upcast, output left fp32.

    Names are the qualified names of ``model.named_modules()``, as the overflow dump prints them; ``""`` is
    the model itself. The module's weights are not touched, so they must already be fp32 (true under autocast,
    where the weights stay fp32 and only the computation is in half precision).

    >>> fix = torchdoctor.keep_in_fp32(model, "encoder.block.2.layer.1.DenseReluDense")  # doctest: +SKIP
    >>> fix.undo()  # doctest: +SKIP
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"keep_in_fp32: model={model!r} ({type(model).__name__}) is not a torch.nn.Module; "
            'call it as keep_in_fp32(model, "name", ...)'
        )
    if not module_names:
        raise TypeError('keep_in_fp32(model, "name", ...) needs at least one module name')
    modules = dict(model.named_modules())
    chosen: dict[str, nn.Module] = {}
    for name in module_names:
        if not isinstance(name, str):
            raise TypeError(
                f"keep_in_fp32 takes module names as strings, got {type(name).__name__} {name!r}; "
                "the names are those of model.named_modules()"
            )
        if name not in modules:
            raise ValueError(_unknown_name_message(name, modules))
        _check_weights_are_fp32(name, modules[name])
        chosen.setdefault(name, modules[name])

    handles = []
    for module in chosen.values():
        # one stack per module: the autocast-off contexts entered by the pre-hook, left by the post-hook
        # (a stack, not a slot, because a module can be called again from inside its own forward)
        entered: list[list[torch.autocast]] = []
        handles.append(module.register_forward_pre_hook(_pre_hook(entered), with_kwargs=True, prepend=True))
        # always_call: leave autocast-off even when the forward raises, or autocast would stay off for
        # the rest of the step
        handles.append(module.register_forward_hook(_post_hook(entered), always_call=True))
    return KeptInFp32(list(chosen), handles)


def _pre_hook(entered: list[list[torch.autocast]]):
    def hook(module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        contexts = []
        for device in _autocast_devices_on():
            context = torch.autocast(device, enabled=False)
            context.__enter__()
            contexts.append(context)
        entered.append(contexts)
        return _to_fp32(args), _to_fp32(kwargs)

    return hook


def _post_hook(entered: list[list[torch.autocast]]):
    def hook(module: nn.Module, args: tuple, output: Any) -> None:
        if entered:
            for context in reversed(entered.pop()):
                context.__exit__(None, None, None)

    return hook


def _autocast_devices_on() -> Iterator[str]:
    for device in _AUTOCAST_DEVICES:
        if _autocast_on(device):
            yield device


def _autocast_on(device: str) -> bool:
    try:
        return torch.is_autocast_enabled(device)
    except TypeError:  # torch < 2.4 takes no device type
        if device == "cpu":
            return torch.is_autocast_cpu_enabled()
        return device == "cuda" and torch.is_autocast_enabled()
    except RuntimeError:  # a device type this build of torch does not know
        return False


def _to_fp32(value: Any) -> Any:
    """Upcast every floating-point tensor below fp32 in ``value``, however nested in tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        if value.is_floating_point() and value.dtype != torch.float64 and value.dtype != torch.float32:
            return value.float()
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # namedtuple
        return type(value)(*(_to_fp32(v) for v in value))
    if isinstance(value, (tuple, list)):
        return type(value)(_to_fp32(v) for v in value)
    if isinstance(value, dict):
        if type(value) is dict:
            return {k: _to_fp32(v) for k, v in value.items()}
        converted = copy.copy(value)  # keeps a dict subclass (OrderedDict, ModelOutput) what it was
        for k, v in value.items():
            converted[k] = _to_fp32(v)
        return converted
    return value


def _check_weights_are_fp32(name: str, module: nn.Module) -> None:
    low = sorted({str(p.dtype) for p in module.parameters() if p.dtype in _LOW_PRECISION})
    if low:
        raise ValueError(
            f"module {name!r} has {' and '.join(low)} weights; keep_in_fp32 runs it on fp32 inputs, so its "
            f'weights must be fp32 too: call model.get_submodule("{name}").float() first'
        )


def _unknown_name_message(name: str, modules: dict[str, nn.Module]) -> str:
    close = difflib.get_close_matches(name, [n for n in modules if n], n=3, cutoff=0.6)
    hint = f"; close matches: {', '.join(repr(c) for c in close)}" if close else ""
    return (
        f"keep_in_fp32: {type(next(iter(modules.values()))).__name__} has no module named {name!r}{hint} "
        "(names are those of model.named_modules(), as the overflow dump prints them)"
    )
