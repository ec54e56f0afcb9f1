"""ProcessGroupNCCL guessing which GPU a rank uses, because the process never said (a warning users post alone).

``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp`` warns when it must pick a device for a rank that named none: its
barrier ("using GPU {} to perform barrier as devices used by this process are currently unknown. This can
potentially cause a hang if this rank to GPU mapping is incorrect.", 1.8+; 2.3+ add "Specify device_ids in barrier()
to force use of a particular device, or call init_process_group() with a device_id.") and its eager init ("Guessing
device ID based on global rank. This can cause a hang if rank to GPU mapping is heterogeneous.", 2.3+). It takes the
global rank modulo the GPUs it sees, which is the right GPU only where every node runs one rank per visible GPU in
order. Nothing failed yet, so the warning is a finding only where the log shows no failure (``fallback``), likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "rendezvous and network"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _guessed(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    gpu = first(hits, "barrier_gpu")
    what = f"GPU {gpu} for its barrier" if gpu is not None else "its GPU from the global rank"
    return (
        f"ProcessGroupNCCL guessed {what}: the process never said which GPU it uses (a warning; it hangs or "
        "shares a GPU only where the guess is wrong)" + on_ranks(hits),
        "Tell each process its GPU before the first collective, from the launcher's LOCAL_RANK:\n"
        "    local_rank = int(os.environ['LOCAL_RANK']); torch.cuda.set_device(local_rank)\n"
        "    dist.init_process_group('nccl', device_id=torch.device('cuda', local_rank))   # torch 2.3+\n"
        "or dist.barrier(device_ids=[local_rank]). The guess (global rank modulo the visible GPUs) is wrong where "
        "a node runs fewer ranks than it has GPUs, CUDA_VISIBLE_DEVICES differs between ranks, or nodes hold "
        "different numbers of GPUs: then two ranks share a GPU and the barrier hangs.",
    )


BARRIER_DEVICE = Recogniser(
    kind="barrier_device_guessed",
    title="ProcessGroupNCCL guessing a rank's GPU",
    anchors=(
        "to perform barrier as devices used by this process are currently unknown",
        "Guessing device ID based on global rank",
    ),
    templates=("torch_native:using-gpu-to-perform-barrier", "torch_native:guessing-device-id"),
    facts=(R(r"using GPU (?P<barrier_gpu>\d+) to perform barrier"),),
    confirm=lambda hits, ctx: False,  # a warning: whether the guess was wrong is not in it
    fallback=True,
    describe=_guessed,
)

RECOGNISERS = (BARRIER_DEVICE,)
