"""A script's own multiprocessing Process started by spawn (pytorch/examples' mnist_hogwild: its trainers share one
model through share_memory()) handed a lambda: CPython pickles the target and its arguments for the child and
fails in Process.start ("Can't pickle <function <lambda> ...>"). explain's fix led with "use a launcher that starts
the script itself: torchrun", which cannot share one model in memory between processes as Hogwild does (left by
the u28 helper; found again with mnist_hogwild given a lambda as its dataset's transform). Read from a real process,
its console recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it again), and as printed."""

from __future__ import annotations

from pathlib import Path

from explaining import explained
from rank_runner import run_script
from recorded import recorded

SCRIPT = """\
import torch
import torch.multiprocessing as mp


def train(model, transform):
    model(transform(torch.randn(4, 2)))


if __name__ == "__main__":
    mp.set_start_method("spawn", force=True)
    model = torch.nn.Linear(2, 1)
    model.share_memory()
    p = mp.Process(target=train, args=(model, lambda x: x * 2))
    p.start()
    p.join()
"""


def run(folder: Path) -> str:
    script = folder / "hogwild.py"
    script.write_text(SCRIPT)
    done = run_script([str(script)], timeout=120)  # `python script`, forked where torch is imported
    assert done.returncode != 0, done.stderr[-2000:]
    return done.stderr  # what the test read: the traceback, without the script's stdout


RECORDED_RUNS = {"u29_own_process": run}


def test_a_lambda_handed_to_a_spawned_process_says_module_level_functions_not_torchrun():
    stderr = recorded("u29_own_process")
    assert "pickle" in stderr, stderr[-2000:]
    found = explained(stderr)
    assert found.id == "log.spawn_pickling", found.summary
    assert "a multiprocessing Process started by spawn cannot be pickled" in found.summary
    assert "torchrun" not in found.fix and "def at module level" in found.fix
    assert "hogwild.py:14" in found.fix  # the user's p.start()


SPAWNED_RANKS = """\
Traceback (most recent call last):
  File "/home/me/train.py", line 40, in <module>
    mp.spawn(main_worker, nprocs=2, args=(cfg,))
  File "/home/me/venv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 340, in spawn
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
  File "/usr/lib/python3.11/multiprocessing/process.py", line 121, in start
    self._popen = self._Popen(self)
  File "/usr/lib/python3.11/multiprocessing/popen_spawn_posix.py", line 47, in _launch
    reduction.dump(process_obj, fp)
_pickle.PicklingError: Can't pickle <function <lambda> at 0x7f01dcefba60>: attribute lookup <lambda> on __main__ \
failed
"""


def test_mp_spawns_ranks_keep_the_launcher_in_the_fix():
    found = explained(SPAWNED_RANKS)
    assert found.id == "log.spawn_pickling" and "torchrun" in found.fix
    assert "multiprocessing Process started by spawn" not in found.summary


def test_a_dataloaders_spawned_workers_are_not_the_scripts_own_process():
    loader = SPAWNED_RANKS.replace(
        'torch/multiprocessing/spawn.py", line 340, in spawn\n    return start_processes(fn, args, nprocs, join, '
        'daemon, start_method="spawn")',
        'torch/utils/data/dataloader.py", line 1110, in __init__\n    w.start()  # _MultiProcessingDataLoaderIter',
    ).replace("mp.spawn(main_worker, nprocs=2, args=(cfg,))", "for batch in loader:")
    found = explained(loader)
    assert "multiprocessing Process started by spawn" not in found.summary
