"""The kinds of the families a sample by symptom turned up (DeepSpeed, checkpoints, device placement,
launchers, spawn, bf16, drivers), each on a real log line from a public thread, and how sure each finding is.

The lines are copied verbatim from the threads named beside them (also in the corpus of h19corpus).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def lead(text: str):
    """The first finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


CASES = [
    # hiyouga/LlamaFactory#3224
    (
        "ValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments values:\n"
        "- ds bf16.enabled=True vs hf bf16|bf16_full_eval=False\n"
        "The easiest method is to set these DeepSpeed config values to 'auto'.\n",
        "deepspeed_config_mismatch",
        ["bf16.enabled=True", "auto"],
    ),
    # yuvalkirstain/PickScore#2
    (
        "ValueError: When using `deepspeed_config_file`, the following accelerate config variables will be ignored: "
        "['gradient_accumulation_steps', 'gradient_clipping',\n'zero_stage', 'offload_optimizer_device']\n",
        "deepspeed_config_mismatch",
        ["accelerate config"],
    ),
    # andyzoujm/representation-engineering#45
    (
        "ValueError: You can't train a model that has been loaded with `device_map='auto'` in any distributed "
        "mode. Please rerun your script specifying `--num_processes=1` or by launching with `python "
        "{{myscript.py}}`.\n",
        "device_map_distributed",
        ["num_processes=1", "device_map"],
    ),
    # kaist-avelab/K-Lane#6 (DataParallel)
    (
        "RuntimeError: Caught RuntimeError in replica 1 on device 1.\n"
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and "
        "cuda:0!\n",
        "device_mismatch",
        ["register_buffer", "DataParallel"],
    ),
    # detectron2#2449
    (
        "train_net.py: error: unrecognized arguments: --local_rank=0\n",
        "local_rank_argument",
        ["--local-rank"],
    ),
    # rosinality/ocr-pytorch#1
    (
        "train.py: error: unrecognized arguments: -m torch.distributed.launch --nproc_per_node 2\n",
        "launch_command",
        ["python -m torch.distributed.launch train.py"],
    ),
    # rwth-i6/i6_core#444
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK "
        "expected, but not set\n",
        "rank_env_missing",
        ["torchrun", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"],
    ),
    # Haochen-Wang409/ross#13
    (
        "ValueError: [deepspeed] failed to resume from checkpoint /ckpt/checkpoint-5439\n",
        "checkpoint_incomplete",
        ["save_only_model"],
    ),
    # a DDP checkpoint loaded into the bare model (torch's load_state_dict message)
    (
        "RuntimeError: Error(s) in loading state_dict for ResNet:\n"
        '\tMissing key(s) in state_dict: "conv1.weight", "bn1.weight".\n'
        '\tUnexpected key(s) in state_dict: "module.conv1.weight", "module.bn1.weight".\n',
        "state_dict_keys",
        ["removeprefix('module.')"],
    ),
    # a CPU tensor in an NCCL all_reduce (ProcessGroupNCCL's check)
    ("RuntimeError: Tensors must be CUDA and dense\n", "cpu_tensor_nccl", ["cuda", "gloo"]),
    # one of the DDP wrapper's attributes (a public thread's line)
    (
        "AttributeError: 'DistributedDataParallel' object has no attribute 'encode_stage_2_inputs'\n",
        "ddp_module_attribute",
        ["model.module.encode_stage_2_inputs"],
    ),
    (
        "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.\n",
        "bf16_unsupported",
        ["is_bf16_supported", "fp16"],
    ),
    ("Failed to initialize NVML: Driver/library version mismatch\n", "driver_mismatch", ["Reboot"]),
    (
        "RuntimeError:\n        An attempt has been made to start a new process before the\n"
        "        current process has finished its bootstrapping phase.\n",
        "spawn_main_guard",
        ["__main__"],
    ),
    (
        "/usr/bin/ld: cannot find -lcurand\ncollect2: error: ld returned 1 exit status\n",
        "cuda_build",
        ["libcurand"],
    ),
    ("RuntimeError: No rendezvous handler for tcp://\n", "backend_unavailable", ["Linux", "gloo"]),
    # a public thread on dist.broadcast in an ImageNet example
    ("dist.broadcast: RuntimeError: Tensors must be contiguous\n", "noncontiguous_tensor", [".contiguous()"]),
    (
        "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
        "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
        "to map your storages to the CPU.\n",
        "checkpoint_device_map",
        ["map_location='cpu'"],
    ),
    (
        "Exception: Could not find the transformer layer class to wrap in the model.\n",
        "fsdp_wrap_config",
        ["default_config.yaml"],
    ),
    (
        "RuntimeError: use_libuv was requested but PyTorch was build without libuv support\n",
        "libuv_unavailable",
        ["USE_LIBUV=0"],
    ),
    (
        "[W socket.cpp:601] [c10d] The IPv4 network addresses of (user, 53821) cannot be retrieved (gai error: -3 - "
        "Temporary failure in name resolution).\n",
        "hostname_resolution",
        ["/etc/hosts", "'user'"],
    ),
    (
        "Spotllm:73025:73112 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/microsoft/ncv4/graph.xml\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n",
        "nccl_env_value",
        ["unset NCCL_GRAPH_FILE"],
    ),
    (
        "slurmstepd: error: execve(): torchrun: No such file or directory\n"
        "srun: error: g1301: task 0: Exited with exit code 2\n",
        "broken_install",
        ["python -m torch.distributed.run"],
    ),
    (
        "RuntimeError: CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support\n",
        "mpi_implementation",
        ["nccl", "CUDA-aware"],
    ),
    (
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must "
        "use the 'spawn' start method\n",
        "cuda_fork",
        ["set_start_method('spawn')"],
    ),
    (
        "RuntimeError: DistributedDataParallel is not needed when a module doesn't have any parameter that "
        "requires a gradient.\n",
        "ddp_no_grad_params",
        ["torch.no_grad()"],
    ),
    (
        "lightning_fabric.utilities.exceptions.MisconfigurationException: You set `devices=2` in Lightning, but "
        "the number of tasks per node configured in SLURM `--ntasks-per-node=1` does not match. HINT: Set "
        "`devices=1`.\n",
        "slurm_env",
        ["--ntasks-per-node", "devices=2"],
    ),
]


@pytest.mark.parametrize(("text", "kind", "words"), CASES, ids=[c[1] for c in CASES])
def test_real_line_names_its_kind_and_fix(text, kind, words):
    finding = lead(text)
    assert finding.id == f"log.{kind}", (finding.id, finding.summary)
    for word in words:
        assert word.lower() in (finding.summary + finding.fix).lower(), (word, finding.summary, finding.fix)
    assert finding.details["confidence"] in ("certain", "likely")


def test_default_group_alone_is_likely_not_launched_and_names_syncbn_and_with_syncbn_certain():
    # tests/fixtures/corpus/train/021.txt (UniverseNet#8): the thread found SyncBN in a single-process run; the
    # same line is what any distributed call prints in a script started without a launcher
    bare = lead("AssertionError: Default process group is not initialized\n")
    assert bare.id == "log.not_launched_distributed"
    assert bare.details["confidence"] == "likely" and bare.summary.startswith("likely: ")
    assert bare.details["alternatives"] == ["log.syncbn_misuse"] and "SyncBatchNorm" in bare.summary
    assert "torchrun" in bare.fix and "SyncBN -> BN" in bare.fix  # both fixes, the likelier first
    assert bare.fix.index("torchrun") < bare.fix.index("SyncBN -> BN")
    with_syncbn = lead(
        '  File "mmcv/cnn/bricks/norm.py", line 12, in SyncBatchNorm\n'
        "AssertionError: Default process group is not initialized\n"
    )
    assert with_syncbn.id == "log.syncbn_misuse"
    assert with_syncbn.details["confidence"] == "certain" and "SyncBN" in with_syncbn.fix


def test_nccl_failed_or_timed_out_alone_is_likely():
    # karpathy/nanoGPT#55: the watchdog's generic line without its timeout line
    found = lead(
        "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous "
        "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
    )
    assert found.id == "log.nccl_watchdog_timeout" and found.details["confidence"] == "likely"
    # which collective, and whether any went through, is not said: the network between the hosts is the
    # other reading (the thread's: InfiniBand unusable between the two nodes)
    assert found.details["alternatives"] == ["log.network_interface"] and "NCCL_IB_DISABLE=1" in found.fix
    # after thousands of collectives went through, the network path is not the reading
    path = Path(__file__).parent / "fixtures" / "logs" / "002_nccl_watchdog_timeout.txt"
    later = explain([str(path)])[0]
    assert later.id == "log.nccl_watchdog_timeout" and "SeqNum 3348" in later.summary
    assert "alternatives" not in later.details and "NCCL_IB_DISABLE" not in later.fix


def test_invalid_usage_is_likely_gpu_selection_and_the_detected_line_a_certain_duplicate_gpu():
    # tests/fixtures/corpus/train/048.txt (8 processes on 4 GPUs) and 079.txt (the device taken from RANK):
    # the same NCCL line for both ways ranks pick their GPUs wrongly
    likely = lead(
        "RuntimeError: NCCL error in: /opt/conda/torch/lib/c10d/ProcessGroupNCCL.cpp:911, invalid usage, "
        "NCCL version 2.7.8\n"
    )
    assert likely.id == "log.gpu_selection" and likely.details["confidence"] == "likely"
    # NCCL's init returns invalid usage after its duplicate-GPU WARN, shown only with NCCL_DEBUG=WARN
    assert (
        likely.details["alternatives"] == ["log.duplicate_gpu"] and "two ranks on one GPU" in likely.summary
    )
    assert (
        "nproc_per_node" in likely.fix and "LOCAL_RANK" in likely.fix and "CUDA_VISIBLE_DEVICES" in likely.fix
    )
    sure = lead("init.cc:521 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000\n")
    assert sure.id == "log.duplicate_gpu" and sure.details["confidence"] == "certain"


def test_a_certain_cause_leads_a_likely_one():
    found = explain(
        ["-"],
        stdin=io.BytesIO(
            b"AssertionError: Default process group is not initialized\n"
            b"Traceback (most recent call last):\n"
            b'  File "/home/ana/train.py", line 9, in <module>\n'
            b"    dist.all_reduce(t)\n"
            b"RuntimeError: Tensors must be CUDA and dense\n"
        ),
    )
    assert [f.id for f in found[:2]] == ["log.cpu_tensor_nccl", "log.not_launched_distributed"]
    assert [f.details["confidence"] for f in found[:2]] == ["certain", "likely"]


def test_torchrun_summary_alone_is_only_likely():
    found = lead("torch.distributed.elastic.multiprocessing.errors.ChildFailedError\n")
    assert found.id == "log.child_failed" and found.details["confidence"] == "likely"


def test_an_nccl_setting_without_a_failure_is_no_finding():
    found = lead(
        "host:1:2 [0] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/graph.xml\nstep 1 loss=0.5\n"
    )
    assert found.id == "log.unrecognised"


def test_ipv6_lookup_alone_and_gloo_refused_are_only_likely():
    ipv6 = lead(
        "[W socket.cpp:601] [c10d] The IPv6 network addresses of (node1, 29500) cannot be retrieved (gai error: "
        "-3 - Temporary failure in name resolution).\n"
    )
    assert ipv6.id == "log.hostname_resolution" and ipv6.details["confidence"] == "likely"
    refused = lead(
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect \n[127.0.1.1]:29591: "
        "Connection refused\n"
    )
    assert refused.id == "log.network_interface" and refused.details["confidence"] == "likely"
    assert "firewall" in refused.fix
    # tests/fixtures/corpus/train/063.txt's line: the thread found a firewall; the second reading is named,
    # and only the one that fits a refused connection (not the faulty IB link an IB completion error names)
    assert refused.details["alternatives"] == ["log.rendezvous_or_port"]


def test_a_bare_unhandled_cuda_error_is_likely_and_names_the_upgrade():
    found = lead("ProcessGroupNCCL.cpp:260, unhandled cuda error\n")
    assert found.id == "log.nccl_error" and found.details["confidence"] == "likely"
    assert "upgrade" in found.fix


def test_a_non_scalar_backward_is_certain_only_with_dataparallel():
    bare = lead("RuntimeError: grad can be implicitly created only for scalar outputs\n")
    assert bare.id == "log.dp_nonscalar_loss" and bare.details["confidence"] == "likely"
    dp = lead(
        '  File "torch/nn/parallel/data_parallel.py", line 171, in forward\n'
        "RuntimeError: grad can be implicitly created only for scalar outputs\n"
    )
    assert dp.details["confidence"] == "certain" and "loss.mean()" in dp.fix


def test_an_empty_weight_is_zero3s_only_with_zero3_in_the_log():
    # huggingface/trl: a reference model copied from a ZeRO-3 partitioned one
    bare = lead("RuntimeError: 'weight' must be 2-D\n")
    assert bare.id == "log.zero3_partitioned_weights" and bare.details["confidence"] == "likely"
    zero = lead(
        "[INFO] [stage3.py:130:__init__] Reduce bucket size 500000000\nRuntimeError: 'weight' must be 2-D\n"
    )
    assert zero.details["confidence"] == "certain" and "from_pretrained" in zero.fix


def test_a_zero_checkpoint_from_another_world_size_names_both_sizes():
    found = lead(
        "AssertionError: The checkpoint being loaded used a DP world size of 8 but the current world size is 4. "
        "Automatic adjustment of ZeRO's optimizer state partitioning with a new world size is not currently "
        "supported.\n"
    )
    assert found.id == "log.checkpoint_world_size"
    assert "8" in found.summary and "4" in found.summary and "ds_to_universal" in found.fix


def test_cudas_insufficient_driver_alone_is_likely_and_names_a_machine_without_one():
    # Akegarasu/lora-scripts#101: a machine with an Intel iGPU only
    found = lead(
        "Error CUDA driver version is insufficient for CUDA runtime version at line 167 in file "
        "D:\\ai\\tool\\bitsandbytes\\csrc\\ops.cu\n"
    )
    assert found.id == "log.driver_too_old" and found.details["confidence"] == "likely"
    assert "no NVIDIA driver or GPU at all" in found.fix
    sure = lead("UserWarning: The NVIDIA driver on your system is too old (found version 10010).\n")
    assert sure.details["confidence"] == "certain"


def test_an_extensions_undefined_symbol_names_the_package_to_reinstall():
    # tests/fixtures/corpus/train/141.txt (torch_scatter built for another torch): the package is in the path
    found = lead(
        "OSError: /GPUFS/.conda/envs/tor17/lib/python3.6/site-packages/torch_scatter/_version_cuda.so: undefined "
        "symbol: _ZN3c105ErrorC1ENS_14SourceLocationESs\n"
    )
    assert found.id == "log.extension_import"
    assert "--no-cache-dir torch_scatter\n" in found.fix and "<that package>" not in found.fix
    # a module alone in site-packages is often named otherwise than what pip installs: not guessed
    alone = lead(
        "ImportError: /usr/lib/python3/dist-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined "
        "symbol: _ZN3c104cuda9SetDeviceEi\n"
    )
    assert alone.id == "log.extension_import" and "<that package>" in alone.fix


def test_a_gpu_missing_from_the_build_names_the_wheel_tag_of_the_cuda_it_needs():
    # tests/fixtures/corpus/train/128.txt: sm_86 needs CUDA 11.1, the +cu111 wheels
    found = lead(
        "NVIDIA GeForce RTX 3080 Laptop GPU with CUDA capability sm_86 is not compatible with the current PyTorch "
        "installation.\nThe current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.\n"
    )
    assert found.id == "log.no_kernel_image" and "CUDA 11.1 or newer (+cu111 or later)" in found.fix


def test_is_available_answered_false_is_likely_no_usable_cuda_and_true_or_a_branch_is_nothing():
    # tests/fixtures/corpus/train/134.txt (floydhub/dockerfiles#3: a GPU image started with plain docker run)
    found = lead(
        "$ sudo docker run  -t -i floydhub/pytorch:latest-gpu-py3 ipython\n"
        "In [1]: import torch\n\nIn [2]: torch.cuda.is_available()\nOut[2]: False\n"
    )
    assert found.id == "log.cuda_unavailable" and found.details["confidence"] == "likely"
    assert "nvidia-docker" in found.fix and "is_available() is False" in found.summary
    shell = lead('$ python -c "import torch; print(torch.cuda.is_available())"\nFalse\n')
    assert shell.id == "log.cuda_unavailable"
    assert lead(">>> torch.cuda.is_available()\nTrue\n").id == "log.unrecognised"
    branch = lead(
        '  File "train.py", line 3, in <module>\n    if torch.cuda.is_available():\nRuntimeError: boom\n'
    )
    assert branch.id == "log.unrecognised"


DEEPSPEED_ASSERT = (  # tests/fixtures/corpus/train/156.txt (hiyouga/LlamaFactory#3634), as pasted
    'File ".../lib/python3.9/site-packages/deepspeed/runtime/zero/stage3.py", line 525, in defragment\n'
    "    assert len(set(t.dtype for t in tensors)) == 1\n"
)


def test_a_traceback_cut_after_an_assert_inside_a_library_is_likely_that_librarys_bug():
    """Python prints the AssertionError right after the frame's `assert` line: a paste that ends there was
    cut before it, and the assert failed where the frame says."""
    found = lead(DEEPSPEED_ASSERT + "\n")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert found.details["package"] == "deepspeed" and "assert len(set(t.dtype" in found.fix
    assert "its line is cut from the log" in found.summary
    # with its exception line, the same reading from the line itself
    whole = lead(DEEPSPEED_ASSERT + "AssertionError\n")
    assert whole.id == "log.library_version_bug" and "cut from the log" not in whole.summary


def test_an_assert_line_that_is_not_the_end_of_the_log_or_is_the_users_own_is_no_library_bug():
    assert lead(DEEPSPEED_ASSERT + "step 2 loss=1.23\n").id == "log.unrecognised"
    own = lead('  File "/home/me/train.py", line 12, in main\n    assert batch.shape[0] == 8\n')
    assert own.id == "log.unrecognised" and own.details["frame"] == "/home/me/train.py:12 in main"


def test_dataparallels_own_device_check_is_certain_and_says_to_put_the_model_on_device_ids_0():
    # tests/fixtures/corpus/train/154.txt: torch/nn/parallel/data_parallel.py checks the module is on
    # device_ids[0] before it scatters; that message has one cause, unlike two GPUs met in an op
    found = lead(
        "RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one "
        "of them on device: cuda:1\n"
    )
    assert found.id == "log.device_mismatch" and found.details["confidence"] == "certain"
    assert "DataParallel" in found.summary and "device_ids" in found.fix and "model.to('cuda:0')" in found.fix
    assert "alternatives" not in found.details


# deepspeed/launcher/launch.py's sigkill_handler: logger.error(f"{cmd} exits with return code = {code}"), in
# DeepSpeed's log format (deepspeedai/DeepSpeed#3232 shows -9 after a host ran out of memory, #3989 -11)
DEEPSPEED_EXIT = (
    "[2023-04-14 13:11:27,879] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 13266\n"
    "[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py', "
    "'--local_rank=0', '--zero_stage', '2', '--deepspeed'] exits with return code = {code}\n"
)


def test_the_deepspeed_launchers_return_code_of_a_signal_is_read_as_torchruns_exitcode_is():
    killed = lead(DEEPSPEED_EXIT.format(code=-9))
    assert killed.id == "log.worker_killed" and "exits with return code = -9" in killed.summary
    assert "out-of-memory killer" in killed.fix
    crashed = lead(DEEPSPEED_EXIT.format(code=-11))
    assert crashed.id == "log.worker_crash" and crashed.details["confidence"] == "likely"
    # a worker that exited 1 raised an error of its own, elsewhere in the log: what the summary names is the
    # worker that failed, never a cause (as torchrun's exitcode 1 is: kinds/exits.py)
    failed = lead(DEEPSPEED_EXIT.format(code=1))
    assert failed.id == "log.child_failed" and failed.details["confidence"] == "likely"
    assert "the cause is not in this log" in failed.summary and "deepspeed launcher" in failed.summary


@pytest.mark.parametrize(
    "text",
    [
        # slurmstepd's cgroup v2 report and srun's task state (slurm; nextflow-io/nextflow#5932 shows both)
        "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM "
        "Killed.\n",
        "srun: error: gpu-node-07: task 3: Out Of Memory\n",
        # the cgroup v1 report
        "slurmstepd: error: Detected 2 oom-kill event(s) in step 3756240.batch cgroup. Some of your processes may "
        "have been killed by the cgroup out-of-memory handler.\n",
    ],
)
def test_slurms_out_of_memory_reports_are_a_certain_kill_by_the_oom_killer(text):
    found = lead(text)
    assert found.id == "log.worker_killed" and found.details["confidence"] == "certain", found.summary
    assert "out-of-memory killer" in found.fix and "sacct" in found.fix
