"""Four readings whose words did not fit the message they were given (task SMALL, session 36), each worded from
what the log shows about who printed it:

- torch's "Cannot re-initialize CUDA in forked subprocess" raised in vLLM's worker processes (vLLM 0.5.x's
  "(VllmWorkerProcess pid=N)" prefix, the V1 engine's EngineCore): vLLM forks them itself, so torch's
  set_start_method does not reach them; the fix names VLLM_WORKER_MULTIPROC_METHOD=spawn (vllm/envs.py, 0.4.2+,
  fork by default from 0.5.1) beside the torch-level one.
- remote_code_not_trusted from Hugging Face datasets (load.py 2.16.1-3.6.0: a dataset repository with a loading
  script) was said to be "the model's repository" with from_pretrained's fix: it names the dataset, load_dataset's
  flag and HF_DATASETS_TRUST_REMOTE_CODE, 2.20.0's change (it asks) and 4.0's (no scripts at all); transformers'
  own refusals keep the model's words, and the one line both print, alone, names both.
- deepspeed_config_mismatch from accelerate ("... mismatch kwargs  values", "- ds K=V vs arg K=V": the DeepSpeed
  plugin's deepspeed_config_process, which accelerate itself calls with must_match=False, so the caller is other
  code, such as lm-evaluation-harness handing over its batch size) was said to disagree with "the script's
  TrainingArguments", with the Trainer's flags as the fix; transformers' own list keeps them.
- nccl_system_error's fix spoke of /dev/shm whatever call failed: where torch's "Last error:" or NCCL's WARN line
  names another (a socket call, the cuMem handles' Unix-domain socket, a thread, host memory, a /sys file), the
  fix speaks of that call, and of /dev/shm only where the call is a shared-memory one or none is named. (A
  connect or an ibv_* verb named there is network_interface's, which leads.) NCCL's "UDS: Binding to socket ...
  failed : Address already in use" was read, certain, as the rendezvous port 29500 taken: it is refused there.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained

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


def dataset_refusal(repo: str) -> str:
    """datasets 2.20-3.6 resolve_trust_remote_code with no terminal to ask on: the ValueError's two lines."""
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 12, in <module>\n'
        f'    ds = load_dataset("{repo}", split="train")\n'
        '  File "/opt/conda/lib/python3.11/site-packages/datasets/load.py", line 1318, in get_module\n'
        "    trust_remote_code = resolve_trust_remote_code(self.trust_remote_code, self.name)\n"
        f"ValueError: The repository for {repo} contains custom code which must be executed to correctly load the "
        f"dataset. You can inspect the repository content at https://hf.co/datasets/{repo}.\n"
        "Please pass the argument `trust_remote_code=True` to allow custom code to be run.\n"
    )


MODEL_REFUSAL = (
    "ValueError: The repository for microsoft/phi-2 contains custom code which must be executed to correctly load "
    "the model. You can inspect the repository content at https://hf.co/microsoft/phi-2.\n"
    "Please pass the argument `trust_remote_code=True` to allow custom code to be run.\n"
)


@pytest.mark.parametrize(
    "log",
    [
        dataset_refusal("allenai/c4"),
        # the prompt's timeout (SIGALRM) and the script's own refusal, both datasets/load.py 2.16.1-3.6.0
        "ValueError: Loading this dataset requires you to execute custom code contained in the dataset repository "
        "on your local machine. Please set the option `trust_remote_code=True` to permit loading of this dataset.\n",
        "ValueError: Loading wikitext requires you to execute the dataset script in that repo on your local machine. "
        "Make sure you have read the code there to avoid malicious use, then set the option `trust_remote_code=True` "
        "to remove this error.\n",
    ],
    ids=["refused", "prompt_timed_out", "script_refused"],
)
def test_datasets_refusal_names_the_dataset_and_load_dataset(log):
    found = certain(log, "remote_code_not_trusted")
    assert "dataset" in found.summary and "model" not in found.summary, found.summary
    assert "load_dataset" in found.fix and "HF_DATASETS_TRUST_REMOTE_CODE=1" in found.fix, found.fix
    assert "4.0" in found.fix and "from_pretrained" not in found.fix, found.fix


@pytest.mark.parametrize(
    "log",
    [
        MODEL_REFUSAL,
        "ValueError: Loading THUDM/chatglm3-6b requires you to execute the configuration file in that repo on your "
        "local machine. Make sure you have read the code there to avoid malicious use, then set the option "
        "`trust_remote_code=True` to remove this error.\n",
    ],
    ids=["resolve_trust_remote_code", "configuration_auto"],
)
def test_transformers_refusal_keeps_the_models_words(log):
    found = certain(log, "remote_code_not_trusted")
    assert "model's repository" in found.summary, found.summary
    assert "from_pretrained" in found.fix and "load_dataset" not in found.fix, found.fix


def test_a_dataset_warning_earlier_does_not_make_a_models_refusal_a_datasets():
    # datasets 2.16-2.19 warned and ran the script (a FutureWarning with the same first words): the refusal
    # that follows is the model's
    warning = (
        "/opt/conda/lib/python3.10/site-packages/datasets/load.py:1454: FutureWarning: The repository for "
        "allenai/c4 contains custom code which must be executed to correctly load the dataset. You can inspect the "
        "repository content at https://hf.co/datasets/allenai/c4\n"
    )
    found = certain(warning + MODEL_REFUSAL, "remote_code_not_trusted")
    assert "model's repository" in found.summary, found.summary


def test_the_shared_line_alone_names_both_libraries():
    found = certain(
        "Please pass the argument `trust_remote_code=True` to allow custom code to be run.\n",
        "remote_code_not_trusted",
    )
    assert "load_dataset" in found.fix and "from_pretrained" in found.fix, found.fix


def accelerate_mismatch(*pairs: str) -> str:
    """accelerate/utils/dataclasses.py deepspeed_config_process(must_match=True), as raised through a caller's
    frames (lm-evaluation-harness's HFLM under accelerate launch with a DeepSpeed config)."""
    return (
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/lm_eval/models/huggingface.py", line 247, in __init__\n'
        "    AcceleratorState().deepspeed_plugin.deepspeed_config_process(must_match=True, **kwargs)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/accelerate/utils/dataclasses.py", line 1409, in '
        "deepspeed_config_process\n"
        "    raise ValueError(\n"
        "ValueError: Please correct the following DeepSpeed config values that mismatch kwargs  values:\n"
        + "".join(f"- ds {key}={ds} vs arg {key}={arg}\n" for key, ds, arg in (p.split(",") for p in pairs))
        + "The easiest method is to set these DeepSpeed config values to 'auto'.\n"
    )


@pytest.mark.parametrize(
    "log",
    [
        accelerate_mismatch("train_micro_batch_size_per_gpu,16,1", "train_batch_size,128,8"),
        accelerate_mismatch("train_micro_batch_size_per_gpu,8,8"),  # a JSON "8" beside the caller's int 8
    ],
    ids=["values_differ", "string_in_json"],
)
def test_accelerate_mismatch_names_the_plugins_caller_not_trainingarguments(log):
    found = certain(log, "deepspeed_config_mismatch")
    assert "TrainingArguments" not in found.summary and "accelerate's DeepSpeed plugin" in found.summary, (
        found.summary
    )
    assert "ds train_micro_batch_size_per_gpu=" in found.summary, found.summary
    assert "--per_device_train_batch_size" not in found.fix and '"auto"' in found.fix, found.fix


def test_transformers_mismatch_keeps_trainingarguments():
    log = (
        "ValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments values:\n"
        "- ds train_micro_batch_size_per_gpu=16 vs hf per_device_train_batch_size=4\n"
        "- ds gradient_accumulation_steps=1 vs hf gradient_accumulation_steps=8\n"
        "The easiest method is to set these DeepSpeed config values to 'auto'.\n"
    )
    found = certain(log, "deepspeed_config_mismatch")
    assert "the script's TrainingArguments" in found.summary, found.summary
    assert "--per_device_train_batch_size" in found.fix, found.fix


def torch_system_error(last_error: str, nccl: str = "2.20.5") -> str:
    """torch 2.x's DistBackendError for ncclSystemError, with NCCL's last WARN after "Last error:"."""
    return (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
        f"unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version {nccl}\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
        "Last error:\n"
        f"{last_error}\n"
    )


def system_error_fix(log: str) -> str:
    found = explained(log)
    assert found.id == "log.nccl_system_error", (found.id, found.summary)
    return found.fix


@pytest.mark.parametrize(
    "log",
    [
        # misc/socket.cc's own WARN (2.12-2.18) and include/checks.h's SYSCHECK on a socket option
        torch_system_error(
            "ncclSocketInit: Socket creation failed : Address family not supported by protocol"
        ),
        torch_system_error("Call to setsockopt failed: Protocol not available", "2.27.3"),
        # torch 1.x prints no "Last error:": NCCL's WARN line above its error names the call (2.7's SYSCHECK words)
        "host1:2211:2290 [0] misc/socket.cc:339 NCCL WARN Call to setsockopt failed : Protocol not available\n"
        "RuntimeError: NCCL error in: /opt/pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, "
        "NCCL version 2.7.8\n",
    ],
    ids=["socket_init_nccl_2.18", "setsockopt_nccl_2.27", "warn_line_nccl_2.7"],
)
def test_a_socket_call_named_gets_the_networks_fix_not_dev_shm(log):
    fix = system_error_fix(log)
    assert "TCP sockets" in fix and "NCCL_SOCKET_IFNAME" in fix, fix
    assert "not NCCL's shared memory" in fix and "df -h /dev/shm" not in fix and "--shm-size" not in fix, fix


@pytest.mark.parametrize(
    "last_error",
    [
        "UDS: Binding to socket /tmp/nccl-socket-3-7f2a failed : Address already in use (98)",
        "UDS: Sending data over socket nccl-socket-1-9c41 failed : Connection refused (111)",
    ],
    ids=["bind", "send"],
)
def test_the_cumem_handles_unix_socket_is_named_as_such(last_error):
    # the bind's "Address already in use" is the socket's name on this host, not a TCP port of the rendezvous
    fix = system_error_fix(torch_system_error(last_error))
    assert "Unix-domain socket" in fix and "NCCL_CUMEM_ENABLE=0" in fix and "--shm-size" not in fix, fix
    assert "29500" not in fix, fix


@pytest.mark.parametrize(
    "last_error, words",
    [
        ("Call to pthread_create failed: Resource temporarily unavailable", "ulimit -u"),
        ("Failed to malloc 1073741824 bytes", "free -g"),
        ("Could not find real path of /sys/class/net/eth0/device", "mount /sys"),
    ],
    ids=["thread", "host_memory", "sys_file"],
)
def test_other_calls_named_get_their_own_fix(last_error, words):
    fix = system_error_fix(torch_system_error(last_error))
    assert words in fix and "not NCCL's shared memory" in fix and "--shm-size" not in fix, fix


@pytest.mark.parametrize(
    "log",
    [
        torch_system_error("Error while creating shared memory segment /dev/shm/nccl-WU88OE (size 9637888)"),
        torch_system_error("Call to posix_fallocate failed : No space left on device", "2.10.3"),
        # no call named at all: the commonest one, /dev/shm, stays the general fix
        "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, "
        "NCCL version 2.7.8\n",
    ],
    ids=["segment", "fallocate", "none_named"],
)
def test_a_shared_memory_call_or_none_keeps_dev_shm(log):
    fix = system_error_fix(log)
    assert "/dev/shm" in fix and "TCP sockets" not in fix, fix
