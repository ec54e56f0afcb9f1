"""`gpu.balance`'s measurements on this machine's GPUs against a longer reference run and the datasheet.

    python balance.py

Prints `measure_gpus` (what `torchdoctor check` uses: a 4096 fp16 matmul, 10 times), `measure_device` (what
each rank measures under `launch --stragglers`: a 2048 fp16 matmul and a 16 MiB host-to-device copy), and
a reference of the same kind run long enough to be steady (8192 fp16 matmuls for about a second; a 1 GiB
pinned host-to-device copy; a 4 GiB device-to-device copy). For benchmarks/gpu/record.sh (issue 23).
"""

import json
import time

import torch

from torchdoctor.gpu_balance import measure_device, measure_gpus


def seconds_of(work, count: int) -> float:
    work()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(count):
        work()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / count


def reference() -> dict:
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    matmul = seconds_of(lambda: a @ b, 200)
    host = torch.empty(2**28, dtype=torch.float32, pin_memory=True)
    device = torch.empty_like(host, device="cuda")
    h2d = seconds_of(lambda: device.copy_(host), 10)
    big = torch.empty(2**30, dtype=torch.float32, device="cuda")
    other = torch.empty_like(big)
    d2d = seconds_of(lambda: other.copy_(big), 10)
    return {
        "fp16 matmul 8192 TFLOPS": round(2 * 8192**3 / matmul / 1e12, 1),
        "host-to-device 1 GiB pinned GB/s": round(host.numel() * 4 / h2d / 1e9, 1),
        "device-to-device 4 GiB GB/s (read + write)": round(2 * big.numel() * 4 / d2d / 1e9, 1),
    }


for _ in range(2):  # the first pass warms the clocks and cuBLAS; the second is the figure
    gpus = measure_gpus()
    device = measure_device("cuda")
print("measure_gpus:", json.dumps(gpus))
print("measure_device:", json.dumps(device))
print("reference:", json.dumps(reference()))
props = torch.cuda.get_device_properties(0)
print(f"device: {props.name}, {props.multi_processor_count} SMs, {props.total_memory / 2**30:.1f} GiB")
