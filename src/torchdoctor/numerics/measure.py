"""Measuring tensors for the overflow detector: the `Measurement` behind every line of a frame, and the caches
that keep each tensor to one reduction per batch.

A parameter is measured once per batch (again only if it was changed in place); an activation once, even when
it is one module's output and the next one's input. On an accelerator (or with ``sync="batch"``) the numbers
stay 0-d device tensors until the batch's one read-back (`readback.read_back`).
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

import torch

from torchdoctor.numerics.precision import LIMITS, extra_counts
from torchdoctor.numerics.stats import abs_min_max_lazy, nan_and_inf, scratch_for

_REDUCED_PRECISION = set(LIMITS)
_INF = float("inf")
# dtypes measured by `Measurer.tensor`'s short path (no fp16/bf16/fp8 notes to take)
_FAST_DTYPES = {torch.float32: "float32", torch.float64: "float64"}
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)


class Measurement(NamedTuple):
    """What one line of a frame says about one value.

    ``label`` is "" for a measured tensor, otherwise why there are no numbers ("None", "not a tensor",
    "empty", "meta", "unreadable"); ``abs_min``/``abs_max`` are floats, or 0-d device tensors until read
    back; ``dtype`` is the dtype's name ("float16"); ``has`` names what is wrong (``("nans",)``,
    ``("infs",)``) or is None; ``notes`` holds extra counts (``saturated``; ``tiny`` and ``numel`` for the
    underflow share) or is None.
    """

    label: str
    abs_min: Any
    abs_max: Any
    dtype: str
    has: tuple[str, ...] | None
    notes: dict[str, Any] | None


NONE = Measurement("None", None, None, "", None, None)
NOT_A_TENSOR = Measurement("not a tensor", None, None, "", None, None)


class Measurer:
    """Measures tensors for one detector, with its caches: parameters by version and batch, activations by
    the memory they live in, dtype names, and CPU buffers for ``abs()``.

    ``sync`` is the detector's ("auto", "batch", "frame"); ``underflow`` whether the share of zeros and
    subnormals is wanted in every batch. ``tiny`` (the detector turns it on in traced batches too) says whether
    the next measurements count that share; ``defers`` turns True once a statistic stayed on a device.
    """

    def __init__(self, sync: str, underflow: bool) -> None:
        self.sync = sync
        self.underflow = underflow
        self.tiny = underflow
        self.defers = False
        self._params: dict[
            int, tuple[int | None, int, Measurement]
        ] = {}  # id -> (version, batch, measurement)
        self._activations: dict[
            Any, tuple[Any, int, Measurement]
        ] = {}  # key -> (weakref, version, measurement)
        self._dtype_names: dict[torch.dtype, str] = {}
        self._scratch: dict[Any, torch.Tensor] = {}

    def new_batch(self) -> None:
        """Forget the activations: a new batch's tensors are new values."""
        self._activations.clear()

    def clear(self) -> None:
        """Forget everything, buffers included (the detector was removed)."""
        self._activations.clear()
        self._params.clear()
        self._scratch.clear()

    def parameter(self, param: torch.Tensor, batch: int) -> Measurement:
        """A parameter's measurement, taken once per batch (again if it was changed in place since)."""
        key = id(param)
        version = _version(param)
        cached = self._params.get(key)
        if cached is not None and cached[0] == version and cached[1] == batch and version is not None:
            return cached[2]
        measurement = self.tensor(param, underflow=False)  # the underflow share is about activations
        self._params[key] = (version, batch, measurement)
        return measurement

    def activation(self, t: torch.Tensor) -> Measurement:
        """An activation's measurement, taken once per batch: one module's output is often the next's input.

        Keyed by where the values live, not by the Python object: gradient hooks hand the next module a
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
        except Exception:  # noqa: BLE001 - no storage (sparse, nested, subclasses) or no version counter (inference tensors)
            return self.tensor(t)
        cached = self._activations.get(key)
        if cached is not None and cached[1] == version and cached[0]() is not None:
            return cached[2]
        measurement = self.tensor(t)
        self._activations[key] = (weakref.ref(t), version, measurement)
        return measurement

    def gradient(self, grad: torch.Tensor | None) -> Measurement:
        """A gradient's measurement (cached as activations are); `NONE` when no gradient came."""
        if grad is None:
            return NONE
        if grad.requires_grad:  # backward(create_graph=True): measuring must not extend the graph
            with torch.no_grad():
                return self.activation(grad)
        return self.activation(grad)

    def tensor(self, t: torch.Tensor, underflow: bool = True) -> Measurement:
        """Measure ``t`` now, without a cache; the numbers stay 0-d device tensors when read-back is deferred."""
        # the common case (a plain fp32 CPU tensor, read at once) without the general path's checks;
        # the type first: a subclass may refuse even `.dtype`
        dtype = _FAST_DTYPES.get(t.dtype) if type(t) in _PLAIN_TYPES else None
        if dtype is not None and t.is_cpu and self.sync != "batch":
            try:
                scratch = self._scratch.get((t.dtype, t.shape))
                if scratch is None:
                    scratch = scratch_for(t, self._scratch)
                low, high = torch.aminmax(torch.abs(t, out=scratch))
                low, high = low.item(), high.item()
                if high == high and high != _INF:
                    return Measurement("", low, high, dtype, None, None)
            except Exception:  # noqa: BLE001 - empty, sparse, nested, …: the general path labels them
                pass
        dtype = ""
        try:
            dtype = self._dtype_names.get(t.dtype)
            if dtype is None:
                dtype = self._dtype_names[t.dtype] = str(t.dtype).removeprefix("torch.")
            result = abs_min_max_lazy(t, self._scratch)
            if isinstance(result, str):
                return Measurement(result, None, None, dtype, None, None)
            low, high = result
            notes = extra_counts(t, dtype, underflow and self.tiny) if dtype in _REDUCED_PRECISION else None
            if self.sync == "batch" or (not high.is_cpu and self.sync == "auto"):
                self.defers = True  # from now on frames wait for the batch's one read-back
                return Measurement("", low, high, dtype, None, notes)
            low, high = low.item(), high.item()
            if notes:
                notes = {k: v.item() if isinstance(v, torch.Tensor) else v for k, v in notes.items()}
        except Exception:  # noqa: BLE001 - never crash the training being watched
            return Measurement("unreadable", None, None, dtype, None, None)
        has = None
        if not (high == high and high != _INF):
            nan, inf = nan_and_inf(t)
            has = tuple(word for word, present in (("nans", nan), ("infs", inf)) if present) or ("nans",)
        return Measurement("", low, high, dtype, has, notes)


def _version(t: torch.Tensor) -> int | None:
    """The tensor's in-place modification counter; None where it has none (inference tensors)."""
    try:
        return t._version
    except Exception:  # noqa: BLE001 - any tensor type (subclasses, fakes, meta) may refuse this: the detector must not break the user's step
        return None
