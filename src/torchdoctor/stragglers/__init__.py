"""Which rank is slow, and why, with nothing added to the user's code (``torchdoctor launch --stragglers``,
or `torchdoctor.watch_for_stragglers` under any other launcher).

hooks.py (where a step ends; time waiting for data and in collectives), record.py (a rank's rows, one store
key per window), verdict.py (the straggler and its cause; victims never named), aggregate.py (reading
and judging the windows), judge.py (rank 0's process that does it), results.py (the summary and the files at the
end), summary.py (per-rank lines, findings), plot.py (the picture), watch.py (turning it on).
"""
