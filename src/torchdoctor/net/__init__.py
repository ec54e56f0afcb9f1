"""``torchdoctor net``: the communication smoke test and bandwidth bench.

``options`` checks the flags into one `NetOptions`, ``smoke`` runs the test from them, ``spawn`` starts the
ranks (forked here, or under torch's launcher over several hosts), ``worker`` is one rank's test and
``rank_state`` what it saw, ``verdicts`` turns the states into findings, ``status`` is the line on stderr while
it works, ``torch_errors`` and ``nccl_log`` read torch's and NCCL's output (``read_log`` for saved logs),
``bandwidth`` measures collectives with nccl-tests' formulas, ``checks`` is the short test `torchdoctor check` runs.
"""
