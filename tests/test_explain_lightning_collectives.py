"""A Lightning collective made on one rank only: planted as `if self.global_rank == 0: self.log("valid_loss",
loss, sync_dist=True)` in Lightning's bug_report_model.py (2 CPU ranks, strategy="ddp", under torchrun), rank 0's
all-reduce met rank 1's next collective and gloo aborted on the size check. explain named the ranks running
different collectives with `if rank == 0:` in torch's words; a Lightning user's collectives are self.log's
sync_dist, self.all_gather and the strategy's barrier, and the rank-0-only logging they meant is
rank_zero_only=True. The lines as that run printed them."""

from __future__ import annotations

from explaining import explained

# the run's own lines: a Lightning warning (its path names the framework) and gloo's abort on rank 0
LIGHTNING_WARNING = (
    "[default0]:/venv/lib/python3.11/site-packages/lightning/pytorch/loops/fit_loop.py:321: The number of "
    "training batches (1) is smaller than the logging interval Trainer(log_every_n_steps=50).\n"
)
ABORT = (
    "[default0]:terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
    "[default0]:  what():  [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] "
    "op.preamble.length <= op.nbytes. 8 vs 4. Received data size doesn't match expected size. Is there a "
    "distributed op mismatch? Check that all ranks are running the same ops in the same order.\n"
)


def test_a_size_mismatch_in_a_lightning_run_names_its_collectives_and_rank_zero_only():
    found = explained(LIGHTNING_WARNING + ABORT)
    assert found.id == "log.rank_divergence", found.summary
    assert "self.log(..., sync_dist=True)" in found.fix and "rank_zero_only=True" in found.fix


def test_the_same_mismatch_without_lightning_gets_no_lightning_advice():
    found = explained(ABORT)
    assert found.id == "log.rank_divergence" and "Lightning" not in found.fix
