"""Planted for the straggler sweep and tests, under torch.distributed. Loaded by Python at start-up from
PYTHONPATH, so it sits under whatever wraps torch.distributed later, as a slow network would.

- FAULT=comm on SLOW_RANK: its blocking all-reduces (the training script's loss average) end STRAGGLER_DELAY
  seconds late while STRAGGLER_ON is 1, as over a slow link;
- LAG_RANK: that rank's blocking all-reduces always end STRAGGLER_LAG seconds late, from the first step to
  the last: a healthy job's rank that leaves collectives last by its place in the algorithm."""

import os
import time

_rank = os.environ.get("RANK")
_slow = os.environ.get("FAULT") == "comm" and _rank == os.environ.get("SLOW_RANK")
_lag = _rank is not None and _rank == os.environ.get("LAG_RANK")
if _slow or _lag:
    import torch.distributed as dist

    _all_reduce = dist.all_reduce

    def all_reduce(*args, **kwargs):
        work = _all_reduce(*args, **kwargs)
        if not kwargs.get("async_op"):
            delay = float(os.environ.get("STRAGGLER_LAG", "0")) if _lag else 0.0
            if _slow and os.environ.get("STRAGGLER_ON") == "1":
                delay += float(os.environ.get("STRAGGLER_DELAY", "0"))
            if delay > 0:
                time.sleep(delay)
        return work

    dist.all_reduce = all_reduce
