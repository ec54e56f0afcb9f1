import json

from torchdoctor.checks import discover, run_checks
from torchdoctor.gpu_balance import balance_verdict, check_balance, measure_gpus

A100 = {"index": 0, "name": "NVIDIA A100-SXM4-80GB", "memory_gib": 80.0, "tflops": 150.0}
RTX_3090 = {"index": 1, "name": "NVIDIA GeForce RTX 3090", "memory_gib": 24.0, "tflops": 71.0}


def test_mixed_gpus_name_the_smallest_and_slowest_and_the_cost():
    finding = balance_verdict([A100, RTX_3090], environ={})
    assert finding.status == "warn"
    assert finding.summary.startswith(
        "GPU 1 (RTX 3090, 24 GiB) limits the batch to what fits in 24 GiB (GPU 0 has 80 GiB); "
        "GPU 1 is 2.1× slower than GPU 0: every step waits for it"
    )
    assert "36% of the GPUs' matmul throughput idles" in finding.summary  # 1 - 2 × 71 / 221
    # one A100 alone (150) outdoes both at the 3090's pace (2 × 71)
    assert "export CUDA_VISIBLE_DEVICES=0 " in finding.fix
    assert "torchdoctor scale --devices 2 --per-device-batch <B> --target-devices 1" in finding.fix
    assert finding.details["memory_ratio"] == 0.3 and finding.details["speed_ratio"] == 0.473
    json.dumps(finding.details)


def test_identical_gpus_are_balanced():
    gpus = [dict(A100, index=i, tflops=150.0 - i) for i in range(4)]
    finding = balance_verdict(gpus, environ={})
    assert finding.status == "ok"
    assert finding.summary == "4 GPUs balanced: 80–80 GiB, 147–150 TFLOPS fp16 matmul"


def test_only_memory_differs():
    small = dict(A100, index=1, name="NVIDIA A100-PCIE-40GB", memory_gib=40.0, tflops=140.0)
    finding = balance_verdict([A100, small], environ={})
    assert finding.status == "warn"
    assert (
        finding.summary
        == "GPU 1 (A100-PCIE-40GB, 40 GiB) limits the batch to what fits in 40 GiB (GPU 0 has 80 GiB)"
    )
    assert "find_executable_batch_size" in finding.fix and "CUDA_VISIBLE_DEVICES" not in finding.fix


def test_dropping_the_slow_gpu_names_the_ids_through_cuda_visible_devices():
    gpus = [dict(A100, index=0, tflops=300.0), dict(A100, index=1, tflops=300.0)]
    gpus.append({"index": 2, "name": "Tesla T4", "memory_gib": 15.0, "tflops": 60.0})
    finding = balance_verdict(gpus, environ={"CUDA_VISIBLE_DEVICES": "4,5,7"})
    assert "GPU 2 is 5.0× slower than GPU 0" in finding.summary
    assert "export CUDA_VISIBLE_DEVICES=4,5   # 2 × 300 TFLOPS beats 3 × 60 at GPU 2's pace" in finding.fix


def test_keeping_a_slower_gpu_that_still_pays_off():
    # 3 × 70 = 210 beats 2 × 100 = 200: dropping the slow one would cost more than waiting for it
    gpus = [dict(A100, index=i, tflops=100.0) for i in range(2)] + [dict(A100, index=2, tflops=70.0)]
    finding = balance_verdict(gpus, environ={})
    assert finding.status == "warn" and "GPU 2 is 1.4× slower than GPU 0" in finding.summary
    assert "CUDA_VISIBLE_DEVICES" not in finding.fix and "still beat any subset" in finding.fix


def test_skipped_below_two_gpus_with_the_reason():
    assert check_balance(gpus=[A100]).summary == "1 GPU visible: GPU balance applies to 2 or more GPUs"
    assert check_balance(gpus=[A100]).status == "skip"
    assert check_balance(gpus=[A100, RTX_3090], environ={}).status == "warn"


def test_check_on_this_machine_measures_or_skips():
    (finding,) = run_checks(discover(["torchdoctor.gpu_balance"]))
    gpus = measure_gpus(size=1024, repeats=3)
    assert finding.id == "gpu.balance"
    if len(gpus) < 2:
        assert finding.status == "skip"
    else:
        assert finding.status in ("ok", "warn") and len(finding.details["gpus"]) == len(gpus)
        assert all(gpu["tflops"] > 0 and gpu["memory_gib"] > 0 for gpu in gpus)
