"""Planted on one rank for the straggler sweep (FAULT=comm): its blocking all-reduces (the training script's
loss average) end STRAGGLER_DELAY seconds late while STRAGGLER_ON is 1, as over a slow link. Loaded by Python at start-up from PYTHONPATH, so it sits under
whatever wraps torch.distributed later, as a slow network would."""

import os
import time

if os.environ.get("FAULT") == "comm" and os.environ.get("RANK") == os.environ.get("SLOW_RANK"):
    import torch.distributed as dist

    _all_reduce = dist.all_reduce

    def all_reduce(*args, **kwargs):
        work = _all_reduce(*args, **kwargs)
        if os.environ.get("STRAGGLER_ON") == "1" and not kwargs.get("async_op"):
            time.sleep(float(os.environ.get("STRAGGLER_DELAY", "0")))
        return work

    dist.all_reduce = all_reduce
