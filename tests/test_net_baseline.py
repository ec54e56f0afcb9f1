"""The per-GPU-model baseline of `net --find-bad`: the stored table, its lookup by the names torch gives GPUs,
and the verdict's words for a measured figure beside it (no GPU needed: the measured values are passed in)."""

from __future__ import annotations

import pytest

from torchdoctor.net.baseline import (
    BELOW,
    COPY_SHARE,
    MATMUL_SHARE,
    TABLE,
    against_baseline,
    baseline_for,
    load_table,
    sentence,
)
from torchdoctor.net.find_bad import findings

# Names as torch.cuda.get_device_name() gives them on these GPUs.
NAMES = {
    "NVIDIA H100 80GB HBM3": "H100 SXM",
    "NVIDIA H100 PCIe": "H100 PCIe",
    "NVIDIA H100 NVL": "H100 NVL",
    "NVIDIA H200": "H200 SXM",
    "NVIDIA H200 NVL": "H200 NVL",
    "NVIDIA GH200 480GB": "GH200",
    "NVIDIA A100-SXM4-80GB": "A100 80GB SXM",
    "NVIDIA A100 80GB PCIe": "A100 80GB PCIe",
    "NVIDIA A100-SXM4-40GB": "A100 40GB",
    "NVIDIA A100-PCIE-40GB": "A100 40GB",
    "NVIDIA A10": "A10",
    "NVIDIA A10G": "A10G",
    "NVIDIA L4": "L4",
    "NVIDIA L40": "L40",
    "NVIDIA L40S": "L40S",
    "Tesla V100-SXM2-32GB": "V100 SXM2",
    "Tesla V100-PCIE-16GB": "V100 PCIe",
    "Tesla V100S-PCIE-32GB": "V100S PCIe",
    "Tesla T4": "T4",
    "NVIDIA GeForce RTX 4090": "GeForce RTX 4090",
    "NVIDIA GeForce RTX 3090": "GeForce RTX 3090",
    "NVIDIA GeForce RTX 3090 Ti": "GeForce RTX 3090 Ti",
    "NVIDIA RTX A6000": "RTX A6000",
}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_each_known_gpu_name_finds_its_own_row(name):
    assert baseline_for(name).model == NAMES[name]


def test_unknown_models_and_cpus_have_no_baseline():
    assert baseline_for("NVIDIA GeForce GTX 1080") is None and baseline_for("cpu") is None
    assert against_baseline("matmul_gflops", 100.0, "cpu") is None


def test_every_row_is_sourced_and_of_a_plausible_size():
    rows = load_table()
    assert len(rows) >= 20
    for _, row in rows:
        assert row.source.startswith(("nvidia.com/", "aws.amazon.com/")), row
        assert 5 <= row.fp32_tflops <= 150 and 250 <= row.memory_gbs <= 10_000, row
    assert {row.model for _, row in rows} >= set(NAMES.values())  # no row is shadowed by an earlier one


def test_a_row_that_does_not_read_is_named_by_its_line(tmp_path):
    table = tmp_path / "t.tsv"
    table.write_text("# note\npattern\tmodel\tfp32_tflops\tmemory_gbs\tsource\nH100\tH100\tfast\t3350\tx\n")
    with pytest.raises(ValueError, match=r"t\.tsv:3: .*H100"):
        load_table(table)


def test_the_verdict_says_what_share_of_its_model_a_gpu_does():
    expected = 19.5 * 1000 * MATMUL_SHARE  # A100 80GB SXM, float32 matmul
    words = sentence(3, "GPU 1", "NVIDIA A100-SXM4-80GB", "matmul_gflops", 0.4 * expected)
    assert words.startswith(
        "rank 3 (GPU 1, NVIDIA A100-SXM4-80GB) does 5.46 TFLOPS float32 matmul, 40% of what"
    )
    assert "13.7 TFLOPS: 70% of the 19.5 TFLOPS peak of the A100 80GB SXM" in words
    copy = against_baseline("copy_gbs", 2680.0, "NVIDIA H100 80GB HBM3")
    assert copy["expected"] == round(3350 * COPY_SHARE, 1) and copy["share"] == 1.0
    assert "compared with the other ranks only" in sentence(0, "host a", "cpu", "copy_gbs", 9.0)
    unknown = sentence(0, "GPU 0", "NVIDIA GeForce GTX 1080", "copy_gbs", 300.0)
    assert "no stored baseline for this model" in unknown


def _cuda_record(matmul: dict[int, float], model: str = "NVIDIA A100-SXM4-80GB") -> dict:
    speed = {str(r): {"matmul_gflops": g, "copy_gbs": 1700.0} for r, g in matmul.items()}
    return {
        "hosts": {str(r): f"node{r // 2}" for r in matmul},
        "device": "cuda",
        "interfaces": {str(r): {"interface": "ib0"} for r in matmul},
        "devices": {
            str(r): {"model": model, "index": r % 2, "pci_bus": f"0000:{0x41 + r % 2:02x}:00.0"}
            for r in matmul
        },
        "digests": {str(r): {"digest": "same", "model": model} for r in matmul},
        "speed": speed,
        "speed_again": speed,
        "rounds": [{"what": "the same seeded computation and each rank's speed"}],
        "seconds": 2.0,
    }


def test_a_slow_gpu_is_named_by_host_index_and_bus_with_its_share_of_the_model():
    (slow,) = findings(_cuda_record({0: 13000.0, 1: 13100.0, 2: 12900.0, 3: 5460.0}))
    assert slow.id == "net.slow_rank" and slow.details["rank"] == 3
    assert slow.summary.startswith(
        "rank 3 (host node1, GPU 1, PCI 0000:42:00.0) is slow: matmul 5460 GFLOP/s"
    )
    assert "40% of what this model does" in slow.summary and slow.details["baseline"]["share"] == 0.4
    assert "nvidia-smi -q" in slow.fix


def test_gpus_all_slow_alike_are_below_their_baseline_though_no_peer_stands_out():
    low = 13650.0 * (BELOW - 0.1)
    verdicts = findings(_cuda_record({0: low, 1: low, 2: low * 1.02, 3: low}))
    assert [f.id for f in verdicts] == ["net.find_bad", "net.below_baseline"]
    ok, below = verdicts
    assert ok.status == "ok" and "of what the A100 80GB SXM does (stored baseline)" in ok.summary
    assert below.status == "warn" and below.details["ranks"] == [0, 1, 2, 3] and "slow alike" in below.summary
    healthy = findings(_cuda_record({r: 12000.0 for r in range(4)}))
    assert [f.id for f in healthy] == ["net.find_bad"] and "at 88%–88% of what" in healthy[0].summary


def test_on_cpus_the_verdict_says_there_is_no_baseline():
    record = _cuda_record({r: 40.0 for r in range(4)}, model="cpu")
    record["device"] = "cpu"
    (ok,) = findings(record)
    assert "no stored baseline on CPUs (the ranks are compared with each other only)" in ok.summary


def test_the_table_ships_in_the_package():
    assert TABLE.name == "gpu_baseline.tsv" and TABLE.exists()
