"""Hang watchdog: when a run stops making progress (`progress`), say where every rank is waiting, then end it.

Two ways to use it:

- ``torchdoctor launch --watchdog 300 train.py``: the run is stuck when *no* worker made progress for 300 s
  (the clock starts when the first worker starts the script). The launcher (`supervise`) then asks every
  worker (`worker`) for its stack with a signal (`collect`: ``faulthandler``, so even a rank blocked in C code
  answers), prints one report (`report`) and stops the run with exit status 1. Works whatever the script does.
- ``torchdoctor.watch_for_hangs(300)`` in the script, under any launcher (`watch`): a thread in each rank
  watches that rank; the first rank to make no progress for 300 s asks the others for their stacks through
  the process group's store (not through a collective, which would hang too), prints one report, and every
  rank exits.

Pick a timeout of minutes, longer than the longest step: a rank that really spends the whole timeout on one
line (a checkpoint save, one huge kernel) without output or `heartbeat()` counts as stuck.
"""
