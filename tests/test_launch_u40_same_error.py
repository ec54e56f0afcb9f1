"""A failed job where every rank raised the same error at the same line (nanoGPT's train.py on CPU: each rank's
``DDP(model, device_ids=[local_rank])`` raises ValueError): every rank is a culprit, and none is called "a
consequence, their collective lost its peer", which session 40 found the verdict saying of rank 1. The folder is
written as two ranks of that run wrote it (their ``rank<N>.done``)."""

import json

from torchdoctor.hang.failure import failure_verdict

TORCH = "/venv/lib/python3.11/site-packages/torch/nn/parallel/distributed.py"
DDP_ERROR = (
    "ValueError: DistributedDataParallel device_ids and output_device arguments only work with "
    "single-device/multiple-device GPU modules or CPU modules, but got device_ids [{rank}], output_device None, "
    "and module parameters {{device(type='cpu')}}."
)


def _done(folder, rank, error, line, at):
    frames = [["train.py", line, "<module>"], [TORCH, 939, "__init__"], [TORCH, 1372, "_log_and_throw"]]
    (folder / f"rank{rank}.done").write_text(
        json.dumps({"collectives": 0, "error": error, "frames": frames, "time": at})
    )


def test_the_same_error_at_the_same_line_on_every_rank_blames_every_rank(tmp_path):
    for rank in (0, 1):
        _done(tmp_path, rank, DDP_ERROR.format(rank=rank), 213, 100.0 + rank / 100)
    found = failure_verdict(tmp_path)
    assert found.culprits == [0, 1] and found.where.line == 213
    assert "consequence" not in found.text and "lost its peer" not in found.text
    assert found.text.startswith("rank 0 failed first: ValueError: DistributedDataParallel device_ids")
    assert "Rank 1 raised the same error there, on its own." in found.text


def test_another_error_of_its_own_is_told_and_a_lost_peer_is_still_a_consequence(tmp_path):
    _done(tmp_path, 0, "RuntimeError: CUDA error: device-side assert triggered", 50, 100.0)
    _done(tmp_path, 1, "KeyError: 'labels'", 40, 100.5)
    _done(tmp_path, 2, "RuntimeError: Connection closed by peer [127.0.0.1]:4242", 60, 101.0)
    found = failure_verdict(tmp_path)
    assert found.culprits == [0]
    assert "Rank 1 failed on its own too: KeyError: 'labels' at train.py:40 in <module>" in found.text
    assert "Rank 2 failed after it, as its consequence (their collective lost its peer)" in found.text


DEBUG_MODE_ERROR = (
    "DistributedOperationException: Cannot apply desired operation because the processes called different "
    "operations at the same point. All processes must call the same collectives in the same order."
)


def test_debug_modes_error_on_every_rank_at_each_ranks_own_line_blames_both(tmp_path):
    """nanoGPT with rank 0 reducing its loss where rank 1 waits in a barrier, under `launch --debug`: debug mode
    raises on both ranks, each at its own call; neither is the other's consequence (it said rank 0 was)."""
    _done(tmp_path, 0, DEBUG_MODE_ERROR + "\n\nOperation: ...", 319, 100.02)
    _done(tmp_path, 1, DEBUG_MODE_ERROR + "\n\nOperation: ...", 321, 100.01)
    found = failure_verdict(tmp_path)
    assert found.culprits == [0, 1] and "consequence" not in found.text
    assert found.text.startswith("rank 1 failed first: DistributedOperationException")
    assert "Rank 0 raised the same error at train.py:319 in <module>." in found.text
