"""The backward pass for the overflow detector (``check_gradients=True``): one backward frame per module call.

Gradient hooks go on every module call's outputs (its ``grad_output``) and on an alias of each of its
positional inputs (its own ``grad_input``), set from the forward hooks; one hook per parameter.

PyTorch's full backward hooks would give the same frames, but wrap every module's inputs and outputs in Python
autograd functions at every call: on a small T5 those alone, doing nothing, cost 1.2× a training step; these
cost next to nothing. An alias (``x.view_as(x)``) is a C++ view that only this module uses, so the gradient
reaching it is this module's share of ``x``'s gradient, even when ``x`` also feeds other modules (q, k and v; a
residual connection). A frame is complete when all its input aliases' gradients have come (its outputs' when
no input needs one), the moment PyTorch would call a full backward hook; at the end of the pass otherwise.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from torchdoctor.numerics.measure import NONE, Measurement, Measurer
from torchdoctor.numerics.readback import RawFrame


class _Call:
    """One module call, as its gradient hooks see it: what came in so far, and what is still to come."""

    __slots__ = (
        "module",
        "name",
        "batch",
        "trace",
        "n_inputs",
        "n_outputs",
        "aliases",
        "inputs_hooked",
        "outputs_hooked",
        "inputs_left",
        "outputs_left",
        "grad_inputs",
        "grad_outputs",
        "task",
        "done",
    )

    def __init__(self, module: torch.nn.Module, n_inputs: int) -> None:
        self.module = module
        self.name = ""
        self.batch = 0
        self.trace = False
        self.n_inputs = n_inputs
        self.n_outputs = 0
        self.aliases: list[tuple[int, torch.Tensor]] | None = []
        self.inputs_hooked = 0
        self.outputs_hooked = 0
        self.inputs_left = 0
        self.outputs_left = 0
        self.grad_inputs: dict[int, Measurement] = {}
        self.grad_outputs: dict[int, Measurement] = {}
        self.task: int | None = None  # the backward pass (graph task) its gradients belong to
        self.done = False


class GradientWatch:
    """The backward-pass bookkeeping of one detector.

    ``record`` takes each finished backward frame; ``finished_batch()`` says which batch (and whether it is
    traced) a backward pass belongs to, the one whose forward last returned; ``pass_ended()`` runs once at the
    end of every backward pass, after its last frame.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        measurer: Measurer,
        record: Callable[[RawFrame], None],
        finished_batch: Callable[[], tuple[int, bool]],
        pass_ended: Callable[[], None],
    ) -> None:
        self.model = model
        self._measurer = measurer
        self._record = record
        self._finished_batch = finished_batch
        self._pass_ended = pass_ended
        self._handles: list[Any] = []
        self._owners: dict[
            int, tuple[torch.nn.Module, str, str]
        ] = {}  # parameter id -> (module, name, param)
        self._grads: dict[int, Measurement] = {}  # parameter gradients waiting for their module's frame
        self._backward_done: set[int] = set()
        self._graph_task: int | None = None
        self._no_backward: set[int] = set()  # modules returning a dict or ModelOutput: no backward frame
        self._open_calls: list[_Call] = []  # calls whose inputs were aliased and whose forward runs
        self._hooked_outputs: dict[int, tuple[Any, list]] = {}  # id -> (weakref, [(call, i), ...])
        self._started_calls: list[_Call] = []  # calls whose backward began in this pass

    def install(self) -> None:
        """Forward pre-hooks that alias the inputs, and a hook on every parameter that trains."""
        inplace = [name for name, m in self.model.named_modules() if getattr(m, "inplace", False) is True]
        if inplace:
            warnings.warn(
                "DebugUnderflowOverflow(check_gradients=True) hooks the gradients of module inputs and outputs, "
                f"which in-place modules ({', '.join(inplace[:5])}) overwrite: set their inplace=False for this run",
                stacklevel=3,
            )
        for name, module in self.model.named_modules():
            self._handles.append(module.register_forward_pre_hook(self._alias_inputs))
            for param_name, param in module._parameters.items():
                if param is None or not param.requires_grad or id(param) in self._owners:
                    continue
                self._owners[id(param)] = (module, name, param_name)
                self._handles.append(param.register_hook(partial(self._param_grad_hook, id(param))))

    def remove(self) -> None:
        """Take the hooks off; hooks left on a graph that still lives do nothing from now on."""
        for handle in self._handles:
            handle.remove()
        self._handles = []
        self._grads.clear()

    def end_of_forward(self) -> None:
        """The root module returned: the calls of this forward are all known."""
        self._hooked_outputs.clear()
        self._open_calls.clear()

    def start_afresh(self) -> None:
        """After a dump: forget the pass in progress, so a caller that skips the batch keeps being watched."""
        self._grads.clear()
        self._graph_task = None
        self._started_calls = []
        self._open_calls.clear()

    # -- forward: the hooks of each call ---------------------------------------------------------------

    def _alias_inputs(self, module: torch.nn.Module, args: tuple) -> tuple | None:
        """Forward pre-hook: give the module an alias of each input that needs a gradient."""
        if module is self.model:
            self._open_calls.clear()  # left over by a forward that raised
        if not args or id(module) in self._no_backward or not torch.is_grad_enabled():
            return None
        aliases = None
        for i, x in enumerate(args):
            if isinstance(x, torch.Tensor) and x.requires_grad:
                try:
                    alias = x.view_as(x)
                except Exception:  # noqa: BLE001 - no view for this kind of tensor: its grad_input is left out
                    continue
                if aliases is None:
                    aliases = []
                    new_args = list(args)
                new_args[i] = alias
                aliases.append((i, alias))
        if aliases is None:
            return None
        call = _Call(module, len(args))
        call.aliases = aliases
        self._open_calls.append(call)
        return tuple(new_args)

    def hook_call(
        self, name: str, module: torch.nn.Module, args: tuple, output: Any, batch: int, trace: bool
    ) -> None:
        """The forward hook's part: hooks on the outputs' and the input aliases' gradients of this call.

        The hooks go on the tensors' autograd nodes (``grad_fn.register_prehook``): the same moment as a
        tensor hook, at half the cost of ``Tensor.register_hook``.
        """
        call = None
        open_calls = self._open_calls
        if open_calls and open_calls[-1].module is module:
            call = open_calls.pop()
        if isinstance(output, torch.Tensor):
            outputs: tuple = (output,)
        elif isinstance(output, tuple):
            outputs = output
        else:
            # PyTorch's full backward hooks never fire on a module returning a dict or ModelOutput: neither
            # do these, and its inputs are no longer aliased
            self._no_backward.add(id(module))
            return
        hooked = [(i, o) for i, o in enumerate(outputs) if isinstance(o, torch.Tensor) and o.requires_grad]
        if not hooked and call is None:
            return
        if call is None:
            call = _Call(module, len(args))
        call.name, call.batch, call.trace = name, batch, trace
        call.n_outputs = len(outputs)
        registered = 0
        hooked_outputs = self._hooked_outputs
        for i, o in hooked:
            entry = hooked_outputs.get(id(o))
            if entry is not None and entry[0]() is o:
                entry[1].append((call, i))
                registered += 1
                continue
            # one hook per tensor, for every module that returns it (a parent returning its child's output)
            slots = [(call, i)]
            if _hook_grad(o, partial(self._grad_output_hook, slots, o.output_nr)):
                hooked_outputs[id(o)] = (weakref.ref(o), slots)
                registered += 1
        call.outputs_left = call.outputs_hooked = registered
        # after the outputs' hooks: a module returning its input (an alias) sees grad_output first
        inputs = 0
        for i, alias in call.aliases or ():
            inputs += _hook_grad(alias, partial(self._grad_input_hook, call, i, alias.output_nr))
        # the call must not hold the aliases: their graph holds the call (a cycle Python cannot see)
        call.aliases = None
        call.inputs_left = call.inputs_hooked = inputs

    # -- backward: the gradients as they come ----------------------------------------------------------

    def _grad_output_hook(self, slots: list, nr: int, grads: tuple) -> None:
        grad = grads[nr]
        if grad is None or not self._handles:  # no gradient reached it; or removed while its graph lived
            return
        if torch._C._current_graph_task_id() != self._graph_task:
            self._start_backward_pass()
        if self._grads:
            self._record_late_grads()
        measurement = self._measurer.gradient(grad)
        # the outermost module first, as with full backward hooks (the parent's output wraps the child's)
        for call, i in reversed(slots):
            if call.task != self._graph_task:
                self._begin_call(call)
            call.grad_outputs[i] = measurement
            call.outputs_left -= 1
            if not call.inputs_hooked and call.outputs_left == 0:
                self._finish_call(call)

    def _grad_input_hook(self, call: _Call, i: int, nr: int, grads: tuple) -> None:
        grad = grads[nr]
        if grad is None or not self._handles:
            return
        if torch._C._current_graph_task_id() != self._graph_task:
            self._start_backward_pass()
        if self._grads:
            self._record_late_grads()
        if call.task != self._graph_task:
            self._begin_call(call)
        call.grad_inputs[i] = self._measurer.gradient(grad)
        call.inputs_left -= 1
        if call.inputs_left == 0:
            self._finish_call(call)

    def _param_grad_hook(self, param_id: int, grad: torch.Tensor) -> None:
        self._start_backward_pass()
        if grad.requires_grad:
            with torch.no_grad():
                self._grads[param_id] = self._measurer.tensor(grad)
        else:
            self._grads[param_id] = self._measurer.tensor(grad)  # shown in the owning module's frame

    def _begin_call(self, call: _Call) -> None:
        """A call's first gradient of this backward pass (again on a second pass over a retained graph)."""
        call.task = self._graph_task
        call.done = False
        call.grad_outputs = {}
        call.grad_inputs = {}
        call.outputs_left = call.outputs_hooked
        call.inputs_left = call.inputs_hooked
        self._started_calls.append(call)

    def _finish_call(self, call: _Call) -> None:
        """The call's backward frame: into the module, its parameters, out of it towards its inputs."""
        if call.done:
            return
        call.done = True
        outputs, inputs = call.grad_outputs, call.grad_inputs
        items: list[tuple[str, Measurement]] = [
            (_grad_name("output", i), outputs.get(i, NONE)) for i in range(call.n_outputs)
        ]
        if call.module._parameters:
            items += self._param_grads(call.module)
        items += [(_grad_name("input", i), inputs.get(i, NONE)) for i in range(call.n_inputs)]
        self._backward_done.add(id(call.module))
        name, batch = call.name, call.batch
        self._record(
            RawFrame(name, type(call.module).__name__, batch, None, items, batch, call.trace, "backward")
        )

    def _param_grads(self, module: torch.nn.Module) -> list[tuple[str, Measurement]]:
        """``weight.grad``, ``bias.grad`` … of ``module`` measured so far in this pass (taken off the waiting list)."""
        items = []
        for param_name, param in module._parameters.items():
            measurement = self._grads.pop(id(param), None) if param is not None else None
            if measurement is not None:
                items.append((f"{param_name}.grad", measurement))
        return items

    def _record_late_grads(self, everything: bool = False) -> None:
        """Frames for parameter gradients whose module's frame has passed (its inputs need no gradient, so
        PyTorch called its hook early) or, with ``everything``, whose module's hook never ran."""
        if not self._grads:
            return
        batch, trace = self._finished_batch()
        modules: dict[int, tuple[torch.nn.Module, str]] = {}
        for param_id in self._grads:
            module, name, _ = self._owners[param_id]
            if everything or id(module) in self._backward_done:
                modules.setdefault(id(module), (module, name))
        for module, name in modules.values():
            items = self._param_grads(module)
            self._record(RawFrame(name, type(module).__name__, batch, None, items, batch, trace, "backward"))

    def _start_backward_pass(self) -> None:
        """On the first hook of a backward pass, arrange for `_end_backward_pass` to run at its end."""
        task = torch._C._current_graph_task_id()
        if task == self._graph_task:
            return
        self._graph_task = task
        self._backward_done.clear()
        self._grads.clear()
        self._measurer.tiny = self._measurer.underflow or self._finished_batch()[1]
        torch.autograd.Variable._execution_engine.queue_callback(self._end_backward_pass)

    def _end_backward_pass(self) -> None:
        # calls some of whose gradients never came (an output or input the loss does not depend on)
        started, self._started_calls = self._started_calls, []
        for call in started:
            self._finish_call(call)
        self._graph_task = None
        self._hooked_outputs.clear()
        self._record_late_grads(everything=True)
        self._pass_ended()


def _hook_grad(t: torch.Tensor, hook: Any) -> bool:
    """Call ``hook(grads)`` with the gradients of ``t``'s autograd node (``t``'s is at ``t.output_nr``)
    when they are computed; False if ``t`` takes no hook.

    The hook lives as long as the graph. Not on a leaf (a module returning a parameter as it is): a hook
    there would stay for good, one more at every call; its ``grad_output`` line reads None.
    """
    try:
        node = t.grad_fn
        if node is None:
            return False
        node.register_prehook(hook)
        return True
    except Exception:  # noqa: BLE001 - any tensor type (subclasses, fakes, meta) may refuse this: the detector must not break the user's step
        return False


_GRAD_NAMES = {(kind, i): f"grad_{kind}[{i}]" for kind in ("input", "output") for i in range(32)}


def _grad_name(kind: str, i: int) -> str:
    name = _GRAD_NAMES.get((kind, i))
    return name if name is not None else f"grad_{kind}[{i}]"
