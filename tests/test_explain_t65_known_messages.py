"""Train misses whose log holds a message the catalog knows (session 44, T65): each class fixed from the code that
prints the message, tested on the real line."""

from __future__ import annotations

from explaining import explained, filled

# corpus/train/5876.txt (pytorch/pytorch#21093): the MNIST example under DataParallel over unequal GPUs; Thrust's
# bulk launcher (CUDA 7-8) raising cudaErrorMemoryAllocation from a kernel launch, torch passing it on
THRUST_OOM = "RuntimeError: after cudaLaunch in triple_chevron_launcher::launch(): out of memory\n"
IMBALANCE = "UserWarning: " + filled("torch_native:dataparallel-imbalance-between-gpus", "0", "1").replace(
    "\\n", "\n"
)


def test_thrusts_launch_out_of_memory_is_an_out_of_memory_with_no_gpu_named():
    found = explained(THRUST_OOM)
    assert found.id == "log.cuda_oom" and found.details["confidence"] == "likely", found.summary
    # no warning above it chose the weak GPU (seen_on.tsv may still name it: 5876 printed the same line)
    assert "chosen_by" not in found.details and found.details["kind"] == "cuda_oom"


def test_an_out_of_memory_outside_the_allocator_after_the_imbalance_warning_is_the_weak_gpu():
    for error in (THRUST_OOM, "RuntimeError: CUDA error: out of memory\n"):
        found = explained(IMBALANCE + "\n[...]\n" + error)
        assert found.id == "log.mismatched_gpus" and found.details["confidence"] == "likely", found.summary
        assert (
            "GPU 0 has under 75% of GPU 1's" in found.summary
            and "log.cuda_oom" in found.details["alternatives"]
        )
        assert "CUDA_VISIBLE_DEVICES" in found.fix and "smaller batch" in found.fix


def test_the_allocators_own_out_of_memory_after_the_warning_stays_the_finding():
    allocator = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "23.69 GiB of which 1.12 GiB is free.\n"
    )
    assert explained(IMBALANCE + "\n" + allocator).id == "log.cuda_oom"
