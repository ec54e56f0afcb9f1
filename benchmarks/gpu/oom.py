"""A real CUDA out-of-memory error: torch's message with the allocator's numbers, the memory snapshot, and
`find_executable_batch_size` finding a size that fits by allocating for real. For benchmarks/gpu/record.sh.

    python oom.py OUT_FOLDER
"""

import pickle
import sys
import time
from pathlib import Path

import torch

import torchdoctor

out = Path(sys.argv[1])
torch.cuda.memory._record_memory_history(max_entries=2000)
width = 8192
model = torch.nn.Linear(width, width, device="cuda")
total = torch.cuda.get_device_properties(0).total_memory
tries = []


@torchdoctor.find_executable_batch_size(starting_batch_size=total // (width * 4))
def probe(batch_size):
    """One training step at ``batch_size`` rows: input, output and gradients, allocated for real."""
    tries.append(batch_size)
    x = torch.randn(batch_size, width, device="cuda")
    model(x).sum().backward()
    torch.cuda.synchronize()
    return batch_size


start = time.perf_counter()
found = probe()
seconds = time.perf_counter() - start
rows = width * 4 / 2**30
print(
    f"find_executable_batch_size: {found} rows ({found * rows:.1f} GiB an activation) after {len(tries)} tries "
    f"in {seconds:.1f} s: {tries}",
    flush=True,
)

# the message as a user sees it, with the allocator's numbers: one allocation larger than the GPU
held = torch.empty(int(total * 0.3) // 4, device="cuda")  # some memory in use, as in a training run
try:
    torch.empty(int(total * 0.9) // 4, device="cuda")
except torch.OutOfMemoryError as error:
    (out / "oom-message.txt").write_text(f"{type(error).__module__}.{type(error).__name__}: {error}\n")
    print(f"{type(error).__name__}: {error}", flush=True)
snapshot = torch.cuda.memory._snapshot()
(out / "memory-snapshot.pickle").write_bytes(pickle.dumps(snapshot))
torch.cuda.memory._record_memory_history(enabled=None)
del held
print(
    f"memory snapshot: {len(snapshot['segments'])} segments, "
    f"{len(snapshot.get('device_traces', [[]])[0])} trace entries",
    flush=True,
)
