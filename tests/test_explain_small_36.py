"""Four readings whose words did not fit the message they were given (task SMALL, session 36), each worded from
what the log shows about who printed it:

- torch's "Cannot re-initialize CUDA in forked subprocess" raised in vLLM's worker processes (vLLM 0.5.x's
  "(VllmWorkerProcess pid=N)" prefix, the V1 engine's EngineCore): vLLM forks them itself, so torch's
  set_start_method does not reach them; the fix names VLLM_WORKER_MULTIPROC_METHOD=spawn (vllm/envs.py, 0.4.2+,
  fork by default from 0.5.1) beside the torch-level one.
"""

from __future__ import annotations

import pytest
from explaining import certain

pytestmark = pytest.mark.usefixtures("every_message_seen")

FORK = (
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
    "the 'spawn' start method"
)


def vllm_05_worker() -> str:
    """vLLM 0.5.x: a worker forked by the multiprocessing executor fails in init_device; every line carries the
    prefix multiproc_worker_utils.py writes and the logger's."""
    prefix = "(VllmWorkerProcess pid=4242) ERROR 08-02 18:15:15 multiproc_worker_utils.py:226] "
    lines = [
        "INFO 08-02 18:15:10 llm_engine.py:176] Initializing an LLM engine (v0.5.3.post1) with config: "
        "model='Qwen/Qwen2-7B-Instruct', tensor_parallel_size=2",
        f"{prefix}Exception in worker VllmWorkerProcess while processing method init_device: Cannot "
        "re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' "
        "start method, Traceback (most recent call last):",
        f'{prefix}  File "/opt/conda/lib/python3.10/site-packages/vllm/executor/multiproc_worker_utils.py", '
        "line 223, in _run_worker_process",
        f"{prefix}    output = executor(*args, **kwargs)",
        f'{prefix}  File "/opt/conda/lib/python3.10/site-packages/vllm/worker/worker.py", line 132, in init_device',
        f"{prefix}    torch.cuda.set_device(self.device)",
        f'{prefix}  File "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py", line 279, in _lazy_init',
        f"{prefix}    raise RuntimeError(",
        f"{prefix}{FORK}",
    ]
    return "\n".join(lines) + "\n"


def vllm_v1_engine_core() -> str:
    """vLLM 0.8 (V1 engine): the engine core process, forked, fails in its executor's init_device."""
    prefix = "ERROR 03-29 09:16:02 [core.py:343] "
    lines = [
        "INFO 03-29 09:15:56 [core.py:54] Initializing a V1 LLM engine (v0.8.2) with config: "
        "model='Qwen/Qwen2.5-7B-Instruct'",
        f"{prefix}EngineCore hit an exception: Traceback (most recent call last):",
        f'{prefix}  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 335, in '
        "run_engine_core",
        f"{prefix}    engine_core = EngineCoreProc(*args, **kwargs)",
        f'{prefix}  File "/usr/local/lib/python3.12/dist-packages/vllm/executor/uniproc_executor.py", line 41, '
        "in _init_executor",
        f'{prefix}    self.collective_rpc("init_device")',
        f'{prefix}  File "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py", line 358, in _lazy_init',
        f"{prefix}    raise RuntimeError(",
        f"{prefix}{FORK}",
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("log", [vllm_05_worker(), vllm_v1_engine_core()], ids=["vllm_0.5", "vllm_v1"])
def test_vllm_fork_names_its_variable_beside_torchs_start_method(log):
    found = certain(log, "cuda_fork")
    assert "vLLM" in found.summary, found.summary
    assert "VLLM_WORKER_MULTIPROC_METHOD=spawn" in found.fix, found.fix
    assert "set_start_method('spawn')" in found.fix, found.fix  # the torch-level fix stays beside it
    assert "notebook" not in found.fix, found.fix


def test_fork_without_vllm_keeps_torchs_fix():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/multiprocessing/process.py", line 314, in _bootstrap\n'
        "    self.run()\n"
        '  File "/home/ana/project/train.py", line 30, in worker\n'
        "    model = model.cuda()\n"
        '  File "/usr/lib/python3/dist-packages/torch/cuda/__init__.py", line 279, in _lazy_init\n'
        "    raise RuntimeError(\n"
        f"{FORK}\n"
    )
    found = certain(log, "cuda_fork")
    assert "VLLM" not in found.fix and "vLLM" not in found.summary, found.fix
    assert "set_start_method('spawn')" in found.fix, found.fix
