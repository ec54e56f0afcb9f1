"""DDP's "Expected to have finished reduction in the prior iteration" (a parameter the loss never used) in a run
whose DDP wrapper a library built: the fix is that library's option, not DistributedDataParallel(...,
find_unused_parameters=True) that the script never calls. Found with a head the loss never uses in a
transformers Trainer script (2 CPU ranks under torchrun); read as the sources print it (accelerate launch cannot
start 2 DDP ranks on a machine without GPUs or mpirun, and torchrun's log of an accelerate script shows no
accelerate frame: there the plain DDP fix stays)."""

from __future__ import annotations

from explaining import explained

MESSAGE = (
    "[default0]:[rank0]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a "
    "new one. This error indicates that your module has parameters that were not used in producing loss.\n"
)
# accelerate launch re-raising the worker's exit (accelerate/commands/launch.py simple_launcher / multi_gpu_launcher)
ACCELERATE_LAUNCH = (
    '  File "/venv/lib/python3.11/site-packages/accelerate/commands/launch.py", line 999, in simple_launcher\n'
    "subprocess.CalledProcessError: Command '['/venv/bin/python', 'train.py']' returned non-zero exit status 1.\n"
)
TRAINER = (
    '[default0]:[rank0]:   File "/venv/lib/python3.11/site-packages/transformers/trainer.py", line 1576, in train\n'
    '[default0]:[rank0]:   File "/venv/lib/python3.11/site-packages/transformers/trainer.py", line 2082, in '
    "training_step\n"
)


def test_under_accelerate_launch_the_fix_is_its_kwargs_handler():
    found = explained(MESSAGE + ACCELERATE_LAUNCH)
    assert found.id == "log.ddp_unused_parameters"
    assert "DistributedDataParallelKwargs(find_unused_parameters=True)" in found.fix


def test_under_transformers_trainer_the_fix_is_its_training_argument():
    found = explained(TRAINER + MESSAGE)
    assert found.id == "log.ddp_unused_parameters"
    assert "ddp_find_unused_parameters=True" in found.fix and "DistributedDataParallel(model" not in found.fix


def test_a_script_of_its_own_keeps_ddps_argument():
    found = explained(MESSAGE)
    assert "DistributedDataParallel(model, find_unused_parameters=True)" in found.fix
    assert "TrainingArguments" not in found.fix and "kwargs_handlers" not in found.fix
