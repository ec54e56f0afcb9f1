"""``torchdoctor net``: the communication smoke test and bandwidth bench.

``worker`` is one rank's test, ``launch`` starts workers through torch's elastic launcher, ``verdicts`` turns
their reports into findings, ``torch_errors`` and ``nccl_log`` read torch's and NCCL's output, ``bandwidth``
measures collectives with nccl-tests' formulas, ``checks`` is the short test `torchdoctor check` runs.
"""
