"""Which rank is slow, and why, with nothing added to the user's code (``torchdoctor launch --stragglers``,
or `torchdoctor.watch_for_stragglers` under any other launcher).

hooks.py (where a step ends; time waiting for data and in collectives), record.py (a rank's rows, one store
key per window), verdict.py (the straggler and its cause; victims never named), aggregate.py (rank 0 reads
the windows), summary.py (per-rank lines, findings), plot.py (the picture), watch.py (turning it on).
"""
