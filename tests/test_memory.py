import gc
import inspect
import logging
import math
import re
import weakref

import pytest
import torch

from torchdoctor import find_executable_batch_size
from torchdoctor.memory import is_out_of_memory

IMPOSSIBLE_BYTES = 2**62  # more than any machine has: the CPU allocator refuses it for real


@pytest.fixture(autouse=True)
def _older_objects_frozen():
    """Every try of ours and of accelerate's runs ``gc.collect()``, which in a test worker walks every object
    of everything the worker imported and ran before (0.5 s and more a call late in the suite, a minute in all
    for this file). Frozen (`gc.freeze`), those are skipped; what a test creates is still collected (see
    test_memory_of_a_failed_try_is_freed_before_the_next)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


# Gaudi's allocator (habana_frameworks), as accelerate's should_reduce_batch_size expects it
HPU_OUT_OF_MEMORY = "[Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::2147483648 (2048)MB"


def cuda_oom(size):
    return torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {size}.00 MiB. GPU 0 ...")


def fits_up_to(limit, tries, error=cuda_oom):
    """A training function that runs out of memory above ``limit``, recording each size it is given."""

    def train(batch_size, *args):
        tries.append(batch_size)
        if batch_size > limit:
            raise error(batch_size)
        return batch_size, args

    return train


def real_cpu_allocator_error():
    try:
        torch.empty(IMPOSSIBLE_BYTES, dtype=torch.uint8)
    except RuntimeError as error:
        return error
    pytest.fail("allocating 2**62 bytes succeeded")


def accelerate_finder():
    from accelerate.utils import find_executable_batch_size

    return find_executable_batch_size


@pytest.mark.parametrize(
    ("start", "limit"), [(1, 0), (16, 0), (128, 8), (128, 37), (128, 128), (512, 100), (512, 500)]
)
def test_the_default_tries_the_sizes_accelerate_tries(start, limit):
    ours, theirs = [], []
    try:
        expected = accelerate_finder()(fits_up_to(limit, theirs), start)()
    except RuntimeError as error:
        expected = error
    try:
        found = find_executable_batch_size(fits_up_to(limit, ours), start)()
    except RuntimeError as error:
        found = error
    assert ours == theirs
    if isinstance(expected, RuntimeError):
        assert str(found).startswith(str(expected)), (found, expected)
    else:
        assert found == expected


def test_reduce_batch_size_fn_is_the_third_positional_argument_as_in_accelerate():
    sizes = iter([100, 50])
    ours, theirs = [], []
    found = find_executable_batch_size(fits_up_to(60, ours), 128, lambda: next(sizes))()
    sizes = iter([100, 50])
    expected = accelerate_finder()(fits_up_to(60, theirs), 128, lambda: next(sizes))()
    assert found == expected and ours == theirs == [128, 100, 50]


def test_starting_at_zero_raises_accelerates_error_when_called():
    train = find_executable_batch_size(fits_up_to(8, []), 0)  # no error yet, as in accelerate
    with pytest.raises(
        RuntimeError, match=r"^No executable batch size found, reached zero\. starting_batch_size=0"
    ):
        train()
    with pytest.raises(RuntimeError, match="reached zero. starting_batch_size=-4"):
        find_executable_batch_size(starting_batch_size=-4)(fits_up_to(8, []))()


def test_halve_returns_the_first_power_of_two_step_that_fits():
    tries = []
    train = find_executable_batch_size(fits_up_to(37, tries), 128, search="halve")
    assert train("model") == (32, ("model",))
    assert tries == [128, 64, 32]


def test_binary_returns_the_largest_size_that_fits_within_log2_extra_tries():
    tries = []
    train = find_executable_batch_size(starting_batch_size=128, search="binary")(fits_up_to(37, tries))
    assert train()[0] == 37
    assert tries[:3] == [128, 64, 32]
    assert len(tries) - 3 <= math.ceil(math.log2(64 - 32))


@pytest.mark.parametrize("limit", [1, 3, 33, 64, 127, 1000])
def test_binary_finds_every_threshold(limit):
    tries = []
    found = find_executable_batch_size(fits_up_to(limit, tries), 128, search="binary")()[0]
    assert found == min(limit, 128)
    first_fit = next(i for i, size in enumerate(tries) if size <= limit)
    gap = tries[first_fit - 1] - tries[first_fit] if first_fit else 1
    assert len(tries) - (first_fit + 1) <= math.ceil(math.log2(gap))


# What oneDNN raised on the CPU under `ulimit -v` for nanoGPT's model (2 layers, 128 wide, 128 tokens) probed by a
# binary search from 512: 64 fitted, 80 ran out in the CPU allocator, and 72 failed making GELU's primitive
ONEDNN_PRIMITIVE = "could not create a primitive"


def onednn_then_allocator(fitted, ran_out, tries):
    """A training function that fits up to ``fitted``, fails in oneDNN up to ``ran_out``, and runs out of memory
    in the CPU allocator above it."""

    def train(batch_size):
        tries.append(batch_size)
        if batch_size > ran_out:
            raise real_cpu_allocator_error()
        if batch_size > fitted:
            raise RuntimeError(ONEDNN_PRIMITIVE)
        return batch_size

    return train


def test_onednn_failing_above_a_size_that_ran_is_read_as_out_of_memory(caplog):
    tries = []
    caplog.set_level(logging.INFO, logger="torchdoctor.memory")
    train = find_executable_batch_size(onednn_then_allocator(64, 76, tries), 512, search="binary")
    assert train() == 64
    assert tries[:6] == [512, 256, 128, 64, 96, 80] and tries[6] == 72, tries
    assert (
        "batch size 72: out of memory (could not create a primitive: oneDNN's, where a smaller size ran)"
        in (caplog.text)
    )


def test_onednn_failing_before_any_size_ran_is_raised_unchanged():
    # no size ran yet: the op may have no oneDNN kernel at all, which no smaller batch repairs
    tries = []
    train = find_executable_batch_size(onednn_then_allocator(0, 600, tries), 512, search="binary")
    with pytest.raises(RuntimeError, match=f"^{ONEDNN_PRIMITIVE}$"):
        train()
    assert tries == [512]


def test_real_cpu_allocator_failure_is_out_of_memory_and_retried():
    assert is_out_of_memory(real_cpu_allocator_error())
    tries = []

    @find_executable_batch_size(starting_batch_size=64, search="halve")
    def train(batch_size):
        tries.append(batch_size)
        per_sample = IMPOSSIBLE_BYTES if batch_size > 10 else 1024
        return torch.empty(per_sample, dtype=torch.uint8).numel() and batch_size

    assert train() == 8
    assert tries == [64, 32, 16, 8]


@pytest.mark.parametrize(
    "error",
    [
        torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity"),
        RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity)"),
        RuntimeError(
            "HIP out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 63.98 GiB"
        ),
        RuntimeError("XPU out of memory. Tried to allocate 512.00 MiB (GPU 0; 15.11 GiB total capacity)"),
        RuntimeError("CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported"),
        RuntimeError(
            "MPS backend out of memory (MPS allocated: 18.12 GB, other allocations: 384.00 KB, max allowed: "
            "18.13 GB). Tried to allocate 64.00 MB on private pool."
        ),
        RuntimeError(
            "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-"
        ),
        RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"),
        RuntimeError(HPU_OUT_OF_MEMORY),
        RuntimeError("NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.97 GiB total capacity)"),
    ],
)
def test_out_of_memory_messages_of_every_device(error):
    assert is_out_of_memory(error)


@pytest.mark.parametrize(
    "error",
    [
        ValueError("out of memory"),  # not an allocator's error type
        RuntimeError("Expected all tensors to be on the same device, but found cuda:0 and cpu"),
        RuntimeError("CUDA error: device-side assert triggered"),
        KeyError("batch_size"),
        torch.distributed.DistBackendError(
            "NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error, NCCL version 2.19.3\n"
            "Last error:\nCuda failure 'out of memory'"
        ),
    ],
)
def test_other_errors_are_not_out_of_memory(error):
    assert not is_out_of_memory(error)


def test_agrees_with_accelerate_on_the_errors_it_knows():
    from accelerate.utils.memory import should_reduce_batch_size

    for error in (
        real_cpu_allocator_error(),
        cuda_oom(64),
        RuntimeError("MPS backend out of memory (MPS allocated: 1 GB)"),
        RuntimeError(HPU_OUT_OF_MEMORY),
        RuntimeError("XPU out of memory. Tried to allocate 512.00 MiB"),
        RuntimeError("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear"),
        RuntimeError("Expected all tensors to be on the same device"),
        ValueError("nope"),
    ):
        assert is_out_of_memory(error) == should_reduce_batch_size(error), error


def test_other_errors_propagate_unchanged():
    tries = []
    bad = ValueError("labels and logits differ in shape: (64,) vs (64, 10)")

    @find_executable_batch_size(starting_batch_size=128)
    def train(batch_size):
        tries.append(batch_size)
        if batch_size == 128:
            raise cuda_oom(batch_size)
        raise bad

    with pytest.raises(ValueError) as raised:
        train()
    assert raised.value is bad and tries == [128, 115]

    device_assert = RuntimeError("CUDA error: device-side assert triggered")
    with pytest.raises(RuntimeError) as raised:
        find_executable_batch_size(lambda batch_size: (_ for _ in ()).throw(device_assert))()
    assert raised.value is device_assert


def test_reaching_zero_names_the_smallest_size_tried():
    tries = []
    with pytest.raises(RuntimeError) as raised:
        find_executable_batch_size(fits_up_to(0, tries), 8, search="halve")()
    assert str(raised.value) == (
        "No executable batch size found, reached zero. `train` ran out of memory even at batch size 1, "
        "the smallest tried"
    )
    assert tries == [8, 4, 2, 1]


def test_passing_the_batch_size_yourself_is_a_type_error_like_accelerate():
    from accelerate.utils import find_executable_batch_size as accelerate_finder

    def train(batch_size, model):
        return batch_size

    with pytest.raises(TypeError) as ours:
        find_executable_batch_size(train, 16)(16, "model")
    with pytest.raises(TypeError) as theirs:
        accelerate_finder(train, 16)(16, "model")
    assert str(ours.value).startswith("Batch size was passed into `train` as the first argument when called.")
    assert str(theirs.value).startswith(
        "Batch size was passed into `train` as the first argument when called."
    )
    assert "`train(model='model')`" in str(ours.value)
    with pytest.raises(TypeError, match="as `batch_size=`"):
        find_executable_batch_size(train, 16)("model", batch_size=16)
    assert find_executable_batch_size(train, 16)(model="model") == 16


def test_call_forms_of_accelerate():
    def train(batch_size, model, lr=0.1):
        return batch_size, model, lr

    assert find_executable_batch_size(train)("m") == (128, "m", 0.1)
    assert find_executable_batch_size(train, 64)("m", lr=1.0) == (64, "m", 1.0)
    assert find_executable_batch_size(starting_batch_size=8)(train)("m") == (8, "m", 0.1)


def test_the_wrapper_shows_the_signature_without_the_batch_size():
    def train(batch_size, model, lr=0.1):
        """Train."""

    wrapped = find_executable_batch_size(train)
    assert str(inspect.signature(wrapped)) == "(model, lr=0.1)"
    assert wrapped.__name__ == "train" and wrapped.__doc__ == "Train."


def test_reduce_batch_size_fn_with_or_without_the_failed_size():
    tries = []
    sizes = iter([100, 50])
    found = find_executable_batch_size(fits_up_to(60, tries), 128, reduce_batch_size_fn=lambda: next(sizes))()
    assert found[0] == 50 and tries == [128, 100, 50]

    tries.clear()
    found = find_executable_batch_size(fits_up_to(60, tries), 128, reduce_batch_size_fn=lambda n: n - 30)()
    assert found[0] == 38 and tries == [128, 98, 68, 38]

    with pytest.raises(ValueError, match="returned 128 after batch size 128 ran out of memory"):
        find_executable_batch_size(fits_up_to(60, []), 128, reduce_batch_size_fn=lambda: 128)()


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match="search='linear'"):
        find_executable_batch_size(lambda batch_size: None, search="linear")
    with pytest.raises(ValueError, match="search='linear'"):
        find_executable_batch_size(search="linear")  # as a decorator: refused before it wraps anything
    with pytest.raises(ValueError, match="timeout=0"):
        find_executable_batch_size(lambda batch_size: None, timeout=0)
    with pytest.raises(TypeError, match="starting_batch_size='64'"):
        find_executable_batch_size(lambda batch_size: None, "64")


def test_a_later_call_starts_from_the_size_found():
    tries = []
    train = find_executable_batch_size(fits_up_to(40, tries), 128, search="halve")
    train()
    train()
    assert tries == [128, 64, 32, 32]


def test_memory_of_a_failed_try_is_freed_before_the_next():
    class Activations:
        pass

    seen = []

    @find_executable_batch_size(starting_batch_size=2)
    def train(batch_size):
        if seen:
            assert seen[0]() is None, "the first try's activations are still alive"
            return batch_size
        cycle = Activations()
        cycle.self = cycle  # only the garbage collector frees a cycle
        cycle.tensor = torch.ones(1024)
        seen.append(weakref.ref(cycle))
        raise cuda_oom(batch_size)

    assert train() == 1


def test_a_log_line_per_try(caplog):
    with caplog.at_level(logging.INFO, logger="torchdoctor.memory"):
        find_executable_batch_size(fits_up_to(37, []), 128, search="binary")()
    # the rank prefix belongs to the rank-aware logger (torchdoctor.distributed.logging), not to us
    lines = [
        re.sub(r"^\[(?:RANK|rank) \d+\] ", "", record.getMessage())
        for record in caplog.records
        if record.name == "torchdoctor.memory"
    ]
    assert lines[0].startswith(
        "find_executable_batch_size: batch size 128: out of memory (CUDA out of memory."
    )
    assert "batch size 32: fits" in lines[2]
    assert lines[-1] == "find_executable_batch_size: settled on batch size 37 after 8 tries"
    assert len(lines) == 9


def test_what_is_not_callable_is_refused_at_once():
    with pytest.raises(TypeError, match=r"function=5 is not callable.*starting_batch_size=5\)"):
        find_executable_batch_size(5)
    with pytest.raises(TypeError, match="function='train' is not callable"):
        find_executable_batch_size("train")
    with pytest.raises(TypeError, match="reduce_batch_size_fn=3 is not callable"):
        find_executable_batch_size(lambda batch_size: None, reduce_batch_size_fn=3)
    with pytest.raises(TypeError, match="reduce_batch_size_fn=3 is not callable"):
        find_executable_batch_size(starting_batch_size=8, reduce_batch_size_fn=3)  # as a decorator


def test_reduce_batch_size_fn_returning_zero_or_not_an_int_is_named():
    def to_zero():
        return 0

    with pytest.raises(
        RuntimeError,
        match=r"^No executable batch size found, reached zero\. reduce_batch_size_fn to_zero returned 0 after",
    ):
        find_executable_batch_size(fits_up_to(60, []), 128, reduce_batch_size_fn=to_zero)()
    with pytest.raises(ValueError, match=r"returned 64.0 after batch size 128"):
        find_executable_batch_size(fits_up_to(60, []), 128, reduce_batch_size_fn=lambda n: n / 2)()
    np = pytest.importorskip("numpy")
    tries = []
    found = find_executable_batch_size(
        fits_up_to(60, tries), 128, reduce_batch_size_fn=lambda n: np.int64(n // 2)
    )()
    assert found[0] == 32 and tries == [128, 64, 32] and type(found[0]) is int
