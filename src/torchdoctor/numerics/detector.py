"""`DebugUnderflowOverflow` and `detect_overflow`: transformers' detector, same text, faster and harder to break.

Switch by changing the import::

    from torchdoctor import DebugUnderflowOverflow   # was: from transformers.debug_utils import ...

    debug_overflow = DebugUnderflowOverflow(model)   # forward hooks on every module, root included
    loss = model(**batch).loss                       # raises InfNanDetected (a ValueError) at the first inf/nan

Forward hooks on every module record one frame per call (parameters, inputs, outputs: abs min and abs max);
the last ``max_frames_to_save`` frames are printed when an inf or nan shows up. The batch number advances when
the root module's forward returns. ``trace_batch_nums`` prints every frame of those batches (0-indexed)
instead of detecting; ``abort_after_batch_num`` stops the run after that batch.

Where it differs from transformers' (all on purpose):

- Extra lines where transformers sees nothing: keyword arguments (``input[mask]``; unset ``None`` ones are left
  out), dicts, lists, dataclasses and ``ModelOutput``s at any depth (``output[loss]``), so a nan loss inside a
  ``ModelOutput`` is caught. Every line transformers prints is printed the same, in the same order.
- Never crashes the training: empty, bool, integer, complex, sparse, nested, meta, quantized, fp8 tensors
  and tensor subclasses are measured or labelled ("empty", "meta", "unreadable").
- One reduction per tensor; a parameter is measured once per batch (again only if changed in place), an
  activation once even when it is one module's output and the next one's input.
- On accelerators the statistics stay on the device and are read back once per batch, when the root module
  returns (and once at the end of a watched backward pass); the dump still ends at the first bad frame, and
  the ``x has nans``/``x has infs`` lines before it come from the abs max (a nan wins). On CPU it raises at
  the first bad frame, as transformers does.
- The buffer never holds more than ``max_frames_to_save`` frames (transformers' grows without bound after a
  trace); hooks come off with ``.remove()`` or at the end of a ``with`` block; after an ``InfNanDetected``
  the detector starts afresh, so a run that catches it and skips the batch keeps being watched.
- With more than one rank, the dump says which rank and host it comes from; ``file=`` or ``logger=`` redirect
  all output (stdout by default, like transformers).

Beyond it (issue 7): ``check_gradients=True`` watches the backward pass too; fp16/bf16/fp8 values that pass
``headroom`` (50%) of their dtype's largest value are warned about once per module and slot; fp8 e4m3fn
saturation is counted; ``underflow=True`` measures the share of zeros and subnormals in fp16/bf16 tensors
(always shown in traced batches) and prints a summary per batch; the dump is data too (``detector.frames``,
``to_json()``, ``report.plot("overflow.png")``) and ends with the ``keep_in_fp32(...)`` call to try.

What a batch is: one call of the root module's forward, and the backward that follows it. Under gradient
accumulation every micro-batch is a batch. Under activation checkpointing the recomputed forward calls of
the checkpointed modules show up as forward frames of the same batch, among its backward frames.
"""

from __future__ import annotations

import sys
import warnings
import weakref
from collections import deque
from collections.abc import Iterable
from functools import partial
from typing import Any, TextIO

import torch

from torchdoctor.numerics.precision import LIMITS, extra_counts, headroom_message, saturation_message
from torchdoctor.numerics.readback import RawFrame, read_back
from torchdoctor.numerics.report import Frame, OverflowReport, dump_text
from torchdoctor.numerics.stats import _scratch_for, abs_min_max, abs_min_max_lazy, nan_and_inf
from torchdoctor.numerics.walk import NONE, expand, frame_items

_REDUCED_PRECISION = set(LIMITS)
# on a batch that never finishes (the root module is never called) read back at least this often
_MAX_PENDING_FRAMES = 4096
_INF = float("inf")
# dtypes measured by _measure's short path (no fp16/bf16/fp8 notes to take)
_FAST_DTYPES = {torch.float32: "float32", torch.float64: "float64"}
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)


class InfNanDetected(ValueError):
    """Raised at the first inf/nan. A ``ValueError``, like transformers', so ``except ValueError`` still works.

    ``batch_number`` (0-indexed batch it happened in), ``module_name`` (qualified name of the module whose
    frame first went bad, ``""`` for the root), ``report`` (the dump text, with ``.frames``, ``.to_json()``,
    ``.plot()``), ``direction`` ("forward" or "backward").
    """

    def __init__(
        self, message: str, batch_number: int, module_name: str, report: OverflowReport, direction: str
    ) -> None:
        super().__init__(message)
        self.batch_number = batch_number
        self.module_name = module_name
        self.report = report
        self.direction = direction


def _check_arguments(
    model: Any, max_frames_to_save: Any, trace_batch_nums: Any, abort_after_batch_num: Any, file: Any
) -> tuple[int, list[int], int | None]:
    """Refuse bad `DebugUnderflowOverflow` arguments by name, before any hook goes on.

    Returns ``max_frames_to_save``, ``trace_batch_nums`` (a list) and ``abort_after_batch_num`` as plain ints,
    whatever integer type they came as (``numpy.int64`` too).
    """
    import operator

    def whole(name: str, value: Any, minimum: int) -> int:
        try:
            number = None if isinstance(value, bool) else operator.index(value)
        except TypeError:
            number = None
        if number is None:
            raise TypeError(f"DebugUnderflowOverflow: {name} is not an int")
        if number < minimum:
            raise ValueError(f"DebugUnderflowOverflow: {name} must be at least {minimum}")
        return number

    if not isinstance(model, torch.nn.Module):
        raise TypeError(
            f"DebugUnderflowOverflow: model={model!r} ({type(model).__name__}) is not a torch.nn.Module; "
            "pass the model to watch"
        )
    frames = whole(f"max_frames_to_save={max_frames_to_save!r}", max_frames_to_save, 0)
    abort = abort_after_batch_num
    if abort is not None:
        abort = whole(f"abort_after_batch_num={abort!r}", abort, 0)
    if file is not None and not callable(getattr(file, "write", None)):
        raise TypeError(f"DebugUnderflowOverflow: file={file!r} has no write(); pass an open text file")
    if trace_batch_nums is None:
        return frames, [], abort
    if isinstance(trace_batch_nums, (str, bytes)) or not isinstance(trace_batch_nums, Iterable):
        one = f"; for one batch write [{trace_batch_nums!r}]" if isinstance(trace_batch_nums, int) else ""
        raise TypeError(
            f"DebugUnderflowOverflow: trace_batch_nums={trace_batch_nums!r} is not a list of batch "
            f"numbers{one}"
        )
    batches = list(trace_batch_nums)
    where = f"trace_batch_nums={batches!r}: entry"
    return frames, [whole(f"{where} {number!r}", number, 0) for number in batches], abort


class DebugUnderflowOverflow:
    """Watch every module of ``model`` for inf/nan; print the frames that led to the first one, and raise.

    Args:
        model: the module to watch (hooks go on it and on every submodule).
        max_frames_to_save: how many frames back the dump shows.
        trace_batch_nums: print every frame of these batches (0-indexed) instead of detecting.
        abort_after_batch_num: raise ``ValueError`` once this batch has finished.
        file: where the output goes (default ``sys.stdout`` at the time of printing).
        logger: a ``logging.Logger`` to send the output to instead (dumps at ERROR, warnings at WARNING).
        sync: "auto" (accelerators: read back once per batch; CPU: at once), "batch" or "frame".
        check_gradients: also watch the backward pass (module gradients and parameter gradients).
        headroom: warn once per module and slot when an fp16/bf16/fp8 value passes this fraction of its
            dtype's largest value; None turns it off.
        underflow: measure the share of zeros and subnormals in fp16/bf16 tensors and print it per batch.

    Examples:
        >>> with DebugUnderflowOverflow(model):             # doctest: +SKIP
        ...     loss = model(**batch).loss
    """

    def __init__(
        self,
        model: torch.nn.Module,
        max_frames_to_save: int = 21,
        trace_batch_nums: Iterable[int] | None = None,
        abort_after_batch_num: int | None = None,
        *,
        file: TextIO | None = None,
        logger: Any = None,
        sync: str = "auto",
        check_gradients: bool = False,
        headroom: float | None = 0.5,
        underflow: bool = False,
    ) -> None:
        max_frames_to_save, trace_batch_nums, abort_after_batch_num = _check_arguments(
            model, max_frames_to_save, trace_batch_nums, abort_after_batch_num, file
        )
        if sync not in ("auto", "batch", "frame"):
            raise ValueError(f"DebugUnderflowOverflow: sync={sync!r} is not one of 'auto', 'batch', 'frame'")
        if headroom is not None and not 0 < headroom <= 1:
            raise ValueError(f"DebugUnderflowOverflow: headroom={headroom!r} must be a fraction in (0, 1]")
        self.model = model
        self.max_frames_to_save = max_frames_to_save
        self.trace_batch_nums = list(trace_batch_nums or [])
        self.abort_after_batch_num = abort_after_batch_num
        self.file = file
        self.logger = logger
        self.sync = sync
        self.check_gradients = check_gradients
        self.headroom = headroom
        self.underflow = underflow
        self.batch_number = 0  # transformers' counter: advances when the root module's forward returns
        self.total_calls = 0
        self.report: OverflowReport | None = None  # the last dump
        self.warnings: list[str] = []  # headroom and saturation warnings given so far
        self.underflow_summary: list[dict[str, Any]] = []  # one entry per batch and direction
        self._trace = set(self.trace_batch_nums)
        self._buffer: deque[RawFrame] = deque(maxlen=max_frames_to_save)
        self._backward_buffer: deque[RawFrame] = deque(maxlen=max_frames_to_save)
        self._banner: int | None = 0  # "*** Starting batch number=N ***" goes into the next frame
        self._pending: list[RawFrame] = []  # frames whose statistics are still on the device
        self._defers = False  # True once a statistic stayed on a device
        self._params: dict[int, tuple[int, int, tuple]] = {}  # id -> (version, batch, measurement)
        self._activations: dict[int, tuple[Any, int, tuple]] = {}  # id -> (weakref, version, measurement)
        self._dtype_names: dict[torch.dtype, str] = {}
        self._scratch: dict[torch.dtype, torch.Tensor] = {}  # CPU buffers for abs(), reused
        self._warned: set[tuple[str, str, str]] = set()
        self._underflow: dict[str, list] = {}  # direction -> [tiny, numel, worst share, worst slot]
        self._measure_tiny = underflow  # also on in traced batches
        self._handles: list[Any] = []
        # backward pass: parameter gradients wait for their module's frame
        self._owners: dict[int, tuple[torch.nn.Module, str, str]] = {}
        self._grads: dict[int, tuple] = {}
        self._backward_done: set[int] = set()
        self._graph_task = None
        # module calls: gradient hooks on their outputs and on aliases of their inputs (see _hook_backward)
        self._no_backward: set[int] = set()  # modules returning a dict or ModelOutput: no backward frame
        self._open_calls: list[_Call] = []  # calls whose inputs were aliased and whose forward runs
        self._hooked_outputs: dict[int, tuple[Any, list]] = {}  # id -> (weakref, [(call, i), ...])
        self._started_calls: list[_Call] = []  # calls whose backward began in this pass
        for name, module in model.named_modules():
            self._handles.append(
                module.register_forward_hook(partial(self._forward_hook, name), with_kwargs=True)
            )
        if check_gradients:
            self._hook_backward()

    # -- public ----------------------------------------------------------------------------------------

    def remove(self) -> None:
        """Take every hook off the model; the detector stops watching. Safe to call twice."""
        for handle in self._handles:
            handle.remove()
        self._handles = []
        self._pending = []
        self._activations.clear()
        self._params.clear()
        self._grads.clear()
        self._scratch.clear()

    def __enter__(self) -> DebugUnderflowOverflow:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()

    @property
    def frames(self) -> list[Frame]:
        """The frames of the last dump as data; before any dump, the forward frames saved so far."""
        return list(self.report.frames) if self.report is not None else [r.frame() for r in self._buffer]

    def to_json(self, indent: int | None = 2) -> str:
        """The last dump (or the frames saved so far) as JSON."""
        import json

        if self.report is not None:
            return self.report.to_json(indent)
        return json.dumps({"detected": None, "frames": [f.to_dict() for f in self.frames]}, indent=indent)

    # -- forward ---------------------------------------------------------------------------------------

    def _forward_hook(
        self, name: str, module: torch.nn.Module, args: tuple, kwargs: dict, output: Any
    ) -> None:
        batch = self.batch_number
        # activation checkpointing re-running a forward during the backward of the last batch
        recomputing = batch > 0 and torch._C._current_graph_task_id() != -1
        if recomputing:
            batch -= 1
        trace = batch in self._trace
        self.total_calls += 1
        is_root = module is self.model
        if is_root:
            self.batch_number += 1
        self._measure_tiny = self.underflow or trace
        # plain calls instead of `with torch.no_grad()`: this runs for every module call
        grad_was_enabled = torch.is_grad_enabled()
        torch._C._set_grad_enabled(False)
        try:
            items = []
            params = module._parameters
            if params:
                for param_name, param in params.items():
                    if param is not None:
                        items.append((param_name, self._measure_param(param, batch)))
            items += frame_items(args, kwargs, output, self._measure_activation)
        finally:
            torch._C._set_grad_enabled(grad_was_enabled)
        if self.check_gradients and grad_was_enabled:
            self._hook_gradients(name, module, args, output, batch, trace)
        banner = None if recomputing else self._banner  # the next batch's banner waits for its first frame
        raw = RawFrame(name, type(module).__name__, batch, banner, items, self.batch_number, trace)
        if is_root:
            self._banner = self.batch_number
        elif not recomputing:
            self._banner = None
        self._record(raw, end_of_batch=is_root)
        if is_root:
            self._activations.clear()
            self._hooked_outputs.clear()
            self._open_calls.clear()
            self._summarise_underflow(batch, "forward")
        if self.abort_after_batch_num is not None and self.batch_number > self.abort_after_batch_num:
            raise ValueError(
                f"DebugUnderflowOverflow: aborting after {self.batch_number} batches due to"
                f" `abort_after_batch_num={self.abort_after_batch_num}` arg"
            )

    # -- backward --------------------------------------------------------------------------------------

    def _hook_backward(self) -> None:
        """Gradient hooks on every module call's outputs (its ``grad_output``) and on an alias of each of
        its positional inputs (its own ``grad_input``), set in the forward hooks; one hook per parameter.

        PyTorch's full backward hooks would give the same frames, but wrap every module's inputs and
        outputs in Python autograd functions at every call: on a small T5 those alone, doing nothing,
        cost 1.2× a training step; these cost next to nothing. An alias (``x.view_as(x)``) is a C++ view
        that only this module uses, so the gradient reaching it is this module's share of ``x``'s
        gradient, even when ``x`` also feeds other modules (q, k and v; a residual connection). A frame
        is complete when all its input aliases' gradients have come (its outputs' when no input needs
        one), the moment PyTorch would call a full backward hook; at the end of the pass otherwise.
        """
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
                except Exception:  # no view for this kind of tensor: its grad_input is left out
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

    def _hook_gradients(
        self, name: str, module: torch.nn.Module, args: tuple, output: Any, batch: int, trace: bool
    ) -> None:
        """Forward hook's part: hooks on the outputs' and the input aliases' gradients of this call.

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

    def _grad_output_hook(self, slots: list, nr: int, grads: tuple) -> None:
        grad = grads[nr]
        if grad is None or not self._handles:  # no gradient reached it; or removed while its graph lived
            return
        if torch._C._current_graph_task_id() != self._graph_task:
            self._start_backward_pass()
        if self._grads:
            self._record_late_grads()
        measurement = self._measure_grad(grad)
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
        call.grad_inputs[i] = self._measure_grad(grad)
        call.inputs_left -= 1
        if call.inputs_left == 0:
            self._finish_call(call)

    def _measure_grad(self, grad: torch.Tensor | None) -> tuple:
        if grad is None:
            return NONE
        if grad.requires_grad:  # backward(create_graph=True): measuring must not extend the graph
            with torch.no_grad():
                return self._measure_activation(grad)
        return self._measure_activation(grad)

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
        items: list[tuple[str, tuple]] = [
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

    def _param_grads(self, module: torch.nn.Module) -> list[tuple[str, tuple]]:
        """``weight.grad``, ``bias.grad`` … of ``module`` measured so far in this pass (taken off the waiting list)."""
        items = []
        for param_name, param in module._parameters.items():
            measurement = self._grads.pop(id(param), None) if param is not None else None
            if measurement is not None:
                items.append((f"{param_name}.grad", measurement))
        return items

    def _param_grad_hook(self, param_id: int, grad: torch.Tensor) -> None:
        self._start_backward_pass()
        if grad.requires_grad:
            with torch.no_grad():
                self._grads[param_id] = self._measure(grad)
        else:
            self._grads[param_id] = self._measure(grad)  # shown in the owning module's frame

    def _record_late_grads(self, everything: bool = False) -> None:
        """Frames for parameter gradients whose module's frame has passed (its inputs need no gradient, so
        PyTorch called its hook early) or, with ``everything``, whose module's hook never ran."""
        if not self._grads:
            return
        batch = max(self.batch_number - 1, 0)
        modules: dict[int, tuple[torch.nn.Module, str]] = {}
        for param_id in self._grads:
            module, name, _ = self._owners[param_id]
            if everything or id(module) in self._backward_done:
                modules.setdefault(id(module), (module, name))
        for module, name in modules.values():
            items = self._param_grads(module)
            trace = batch in self._trace
            self._record(RawFrame(name, type(module).__name__, batch, None, items, batch, trace, "backward"))

    def _start_backward_pass(self) -> None:
        """On the first hook of a backward pass, arrange for `_end_backward_pass` to run at its end."""
        task = torch._C._current_graph_task_id()
        if task == self._graph_task:
            return
        self._graph_task = task
        self._backward_done.clear()
        self._grads.clear()
        self._measure_tiny = self.underflow or max(self.batch_number - 1, 0) in self._trace
        torch.autograd.Variable._execution_engine.queue_callback(self._end_backward_pass)

    def _end_backward_pass(self) -> None:
        # calls some of whose gradients never came (an output or input the loss does not depend on)
        started, self._started_calls = self._started_calls, []
        for call in started:
            self._finish_call(call)
        self._graph_task = None
        self._hooked_outputs.clear()
        self._record_late_grads(everything=True)
        if self._pending:
            self._flush()
        self._summarise_underflow(max(self.batch_number - 1, 0), "backward")

    # -- measuring -------------------------------------------------------------------------------------

    def _measure_param(self, param: torch.Tensor, batch: int) -> tuple:
        """A parameter's measurement, taken once per batch (again if it was changed in place since)."""
        key = id(param)
        version = _version(param)
        cached = self._params.get(key)
        if cached is not None and cached[0] == version and cached[1] == batch and version is not None:
            return cached[2]
        measurement = self._measure(param, underflow=False)  # the underflow share is about activations
        self._params[key] = (version, batch, measurement)
        return measurement

    def _measure_activation(self, t: torch.Tensor) -> tuple:
        """An activation's measurement, taken once per batch: one module's output is often the next's input.

        Keyed by where the values live, not by the Python object: backward hooks hand the next module a
        view of the same memory. While the measured tensor is alive no other tensor can take its memory, and
        in-place changes move the version counter its views share, so a hit always has the same values.
        """
        try:
            # a contiguous view (a reshape) of the same memory holds the same values, whatever its shape
            key = (
                (t.data_ptr(), t.dtype, t.numel())
                if t.is_contiguous()
                else (t.data_ptr(), t.dtype, t.shape, t.stride())
            )
            version = t._version
        except Exception:  # no storage (sparse, nested, subclasses) or no version counter (inference tensors)
            return self._measure(t)
        cached = self._activations.get(key)
        if cached is not None and cached[1] == version and cached[0]() is not None:
            return cached[2]
        measurement = self._measure(t)
        self._activations[key] = (weakref.ref(t), version, measurement)
        return measurement

    def _measure(self, t: torch.Tensor, underflow: bool = True) -> tuple:
        """``(label, min, max, dtype name, has, notes)``; numbers stay 0-d device tensors until read back."""
        # the common case (a plain fp32 CPU tensor, read at once) without the general path's checks;
        # the type first: a subclass may refuse even `.dtype`
        dtype = _FAST_DTYPES.get(t.dtype) if type(t) in _PLAIN_TYPES else None
        if dtype is not None and t.is_cpu and self.sync != "batch":
            try:
                scratch = self._scratch.get((t.dtype, t.shape))
                if scratch is None:
                    scratch = _scratch_for(t, self._scratch)
                low, high = torch.aminmax(torch.abs(t, out=scratch))
                low, high = low.item(), high.item()
                if high == high and high != _INF:
                    return "", low, high, dtype, None, None
            except Exception:  # empty, sparse, nested, …: the general path labels them
                pass
        dtype = ""
        try:
            dtype = self._dtype_names.get(t.dtype)
            if dtype is None:
                dtype = self._dtype_names[t.dtype] = str(t.dtype).removeprefix("torch.")
            result = abs_min_max_lazy(t, self._scratch)
            if isinstance(result, str):
                return result, None, None, dtype, None, None
            low, high = result
            notes = (
                extra_counts(t, dtype, underflow and self._measure_tiny)
                if dtype in _REDUCED_PRECISION
                else None
            )
            if self.sync == "batch" or (not high.is_cpu and self.sync == "auto"):
                self._defers = True  # from now on frames wait for the batch's one read-back
                return "", low, high, dtype, None, notes
            low, high = low.item(), high.item()
            if notes:
                notes = {k: v.item() if isinstance(v, torch.Tensor) else v for k, v in notes.items()}
        except Exception:  # never crash the training being watched
            return "unreadable", None, None, dtype, None, None
        has = None
        if not (high == high and high != _INF):
            nan, inf = nan_and_inf(t)
            has = tuple(word for word, present in (("nans", nan), ("infs", inf)) if present) or ("nans",)
        return "", low, high, dtype, has, notes

    # -- reading back, tracing, dumping ----------------------------------------------------------------

    def _record(self, raw: RawFrame, end_of_batch: bool = False) -> None:
        if self._defers:
            self._pending.append(raw)
            if end_of_batch or len(self._pending) >= _MAX_PENDING_FRAMES:
                self._flush()
        else:
            self._handle(raw)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        read_back(pending)
        for raw in pending:
            self._handle(raw)

    def _handle(self, raw: RawFrame) -> None:
        buffer = self._buffer if raw.direction == "forward" else self._backward_buffer
        bad = False
        for slot, m in raw.items:
            if m[4]:
                bad = True
            elif m[3] in _REDUCED_PRECISION and not m[0]:
                self._check_precision(raw, slot, m)
        if raw.trace:
            buffer.clear()
            self._say_has(raw)
            self._print(raw.frame().text())
            return
        buffer.append(raw)
        if bad:
            self._say_has(raw)
            self._dump_and_raise(raw, buffer)

    def _check_precision(self, raw: RawFrame, slot: str, m: tuple) -> None:
        """Headroom and saturation warnings (once per module, slot and kind), underflow totals."""
        label, low, high, dtype, has, notes = m
        notes = notes or {}
        # what a module receives was produced elsewhere, and warned about there
        produced = not slot.startswith(("input", "grad_output"))
        where = raw.module_name or raw.class_name
        if produced and self.headroom is not None and (where, slot, "headroom") not in self._warned:
            message = headroom_message(where, slot, dtype, high, self.headroom)
            if message:
                self._warned.add((where, slot, "headroom"))
                self._warn(message)
        if produced and notes.get("saturated") and (where, slot, "saturated") not in self._warned:
            self._warned.add((where, slot, "saturated"))
            self._warn(saturation_message(where, slot, dtype, notes["saturated"], notes.get("numel")))
        if "tiny" in notes:
            totals = self._underflow.setdefault(raw.direction, [0, 0, -1.0, ""])
            totals[0] += notes["tiny"]
            totals[1] += notes["numel"]
            share = notes["tiny"] / notes["numel"]
            if share > totals[2]:
                totals[2], totals[3] = share, f"{raw.module_name} {slot}".strip()

    def _summarise_underflow(self, batch: int, direction: str) -> None:
        totals = self._underflow.pop(direction, None)
        if not totals or not totals[1] or not self.underflow:
            return
        tiny, numel, worst, where = totals
        self.underflow_summary.append(
            {
                "batch_number": batch,
                "direction": direction,
                "tiny": tiny,
                "numel": numel,
                "worst": where,
                "worst_share": worst,
            }
        )
        what = "activations" if direction == "forward" else "gradients"
        self._print(
            f"batch {batch} {direction}: {tiny / numel:.1%} of fp16/bf16 {what} are zero or subnormal "
            f"(most: {where} {worst:.1%})"
        )

    def _say_has(self, raw: RawFrame) -> None:
        for name, measurement in raw.items:
            for word in measurement[4] or ():
                self._print(f"{name} has {word}")

    def _dump_and_raise(self, raw: RawFrame, buffer: deque[RawFrame]) -> None:
        from torchdoctor.distributed.ranks import current

        frames = [r.frame() for r in buffer]
        frame = frames[-1] if frames else raw.frame()  # max_frames_to_save=0 keeps none
        rank = current()
        rank_line = f"on rank {rank.rank} of {rank.world_size} (host {rank.host})" if rank.distributed else ""
        text = dump_text(
            frames,
            raw.header_batch,
            frame.direction,
            extra_header=rank_line,
            tail=_fp32_suggestion(self, frame),
        )
        report = OverflowReport(
            text,
            frames,
            frame.module_name,
            frame.batch_number,
            frame.direction,
            rank={"rank": rank.rank, "world_size": rank.world_size, "host": rank.host},
        )
        self.report = report
        self._print(text, error=True)
        # start afresh: a caller that catches this and skips the batch keeps being watched
        buffer.clear()
        self._pending = []
        self._activations.clear()
        self._grads.clear()
        self._graph_task = None
        self._started_calls = []
        self._open_calls.clear()
        where = frame.module_name or "the model"
        raise InfNanDetected(
            "DebugUnderflowOverflow: inf/nan detected, aborting as there is no point running further. "
            "Please scroll up above this traceback to see the activation values prior to this event. "
            f"First inf/nan in {frame.direction} of {where} ({frame.class_name}), batch {frame.batch_number}.",
            frame.batch_number,
            frame.module_name,
            report,
            frame.direction,
        )

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        if self.logger is not None:
            self.logger.warning(message)
        else:
            self._print(message)

    def _print(self, text: str, error: bool = False) -> None:
        if self.logger is not None:
            (self.logger.error if error else self.logger.info)(text)
        else:
            print(text, file=self.file if self.file is not None else sys.stdout)


def detect_overflow(var: Any, ctx: str) -> bool:
    """Whether ``var`` holds a nan or an inf; prints ``"{ctx} has nans"`` / ``"{ctx} has infs"`` if so.

    Same as ``transformers.debug_utils.detect_overflow`` for a tensor; also takes dicts, lists, tuples,
    dataclasses and ``ModelOutput``s (each inner tensor named ``ctx[key]``), and never raises.

    >>> detect_overflow(torch.tensor([1.0, float("inf")]), "logits")
    logits has infs
    True
    """
    detected = False
    for name, value in expand(var, ctx):
        if not isinstance(value, torch.Tensor):
            continue
        result = abs_min_max(value)
        if isinstance(result, str) or (result[1] == result[1] and result[1] != float("inf")):
            continue
        detected = True
        nan, inf = nan_and_inf(value)
        if nan or not inf:
            print(f"{name} has nans")
        if inf:
            print(f"{name} has infs")
    return detected


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
        self.grad_inputs: dict[int, tuple] = {}
        self.grad_outputs: dict[int, tuple] = {}
        self.task: int | None = None  # the backward pass (graph task) its gradients belong to
        self.done = False


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
    except Exception:
        return False


_GRAD_NAMES = {(kind, i): f"grad_{kind}[{i}]" for kind in ("input", "output") for i in range(32)}


def _grad_name(kind: str, i: int) -> str:
    name = _GRAD_NAMES.get((kind, i))
    return name if name is not None else f"grad_{kind}[{i}]"


def _version(t: torch.Tensor) -> int | None:
    """The tensor's in-place modification counter; None where it has none (inference tensors)."""
    try:
        return t._version
    except Exception:
        return None


def _fp32_suggestion(detector: DebugUnderflowOverflow, frame: Frame) -> str:
    """The ``keep_in_fp32(...)`` line to try when the bad frame computed in reduced precision under autocast.

    Not for the root, and not where the weights themselves are fp16/bf16 (``model.half()``): keeping a
    module in fp32 needs fp32 weights, so there the fix is to train with autocast instead.
    """
    if not frame.module_name or not any(e.dtype in _REDUCED_PRECISION for e in frame.entries):
        return ""
    try:
        from torchdoctor.numerics.fp32 import suggestion
    except ImportError:
        return ""
    modules = dict(detector.model.named_modules())
    name = frame.module_name
    module = modules.get(name)
    # a leaf that overflowed (a Linear, a Dropout) is best kept in fp32 with the block that feeds it
    if module is not None and not any(True for _ in module.children()) and "." in name:
        name = name.rsplit(".", 1)[0]
        module = modules.get(name, module)
    if module is None or any(p.dtype in (torch.float16, torch.bfloat16) for p in module.parameters()):
        return ""
    return suggestion(name)
