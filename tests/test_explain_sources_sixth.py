"""Round twelve: classes of messages read from the code that prints them, and the certainty of lines that more
than one failure prints.

Each input is a catalog template (its id beside it) with plausible values in its placeholders, or the line as
its source formats it (quoted in a comment). For each class: the rule fills in the facts, it is only "likely"
(naming the other reading) where its evidence is incomplete, and healthy lines that share its words leave it
silent.
"""

from __future__ import annotations

import io

import pytest
from explaining import filled as template

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def findings(text: str):
    return explain(["-"], stdin=io.BytesIO(text.encode()))


def lead(text: str):
    return findings(text)[0]


def sure(found) -> str:
    return found.details.get("confidence", "certain")


# -- NCCL's CUDA check macros (src/include/checks.h CUDACHECK, cudawrap.h CUCHECK) ---------------------------

NCCL_RAISED = (
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error "
    "(run with NCCL_DEBUG=INFO for details), NCCL version {}\n"
)


@pytest.mark.parametrize(
    ("warn", "other"),
    [
        # WARN("Cuda failure '%s'", cudaGetErrorString(err)): an argument NCCL passed was refused
        (template("nccl:cuda-failure", "invalid resource handle"), "log.gpu_selection"),
        (template("nccl:cuda-failure", "invalid argument"), "log.gpu_selection"),
        # WARN("Cuda failure %d '%s'", err, errStr) (2.19+): the driver API's words, with its number
        (template("nccl:cuda-failure-2", "801", "operation not supported"), "log.driver_too_old"),
    ],
)
def test_nccls_own_cuda_call_refused_is_likely_a_bug_of_that_nccl(warn, other):
    found = lead(
        f"node1:2532579:2532579 [0] enqueue.cc:336 NCCL WARN {warn}\n" + NCCL_RAISED.format("2.12.12")
    )
    assert found.id == "log.nccl_bug_upgrade" and sure(found) == "likely"
    assert other in found.details["alternatives"]
    assert "2.12.12 is older than 2.20.5" in found.fix and "pip install -U torch" in found.fix
    # torch's "unhandled cuda error" is the same failure, read by the WARN above it: not named as another one
    assert "the run stopped on" not in found.summary


def test_nccls_cuda_failures_that_other_kinds_own_stay_theirs():
    assert lead("h:1:1 [0] NCCL WARN Cuda failure 'out of memory'\n").id == "log.cuda_oom"
    assert lead("h:1:1 [0] NCCL WARN Cuda failure 'initialization error'\n").id == "log.cuda_fork"
    # a kernel that faulted is its library's likely bug (cuda_errors.py), not an argument NCCL passed
    assert lead("h:1:1 [0] NCCL WARN Cuda failure 'an illegal memory access was encountered'\n").id != (
        "log.nccl_bug_upgrade"
    )


def test_a_cuda_failure_nccl_clears_and_goes_on_from_is_not_a_failure():
    # CUDACHECKIGNORE: INFO_LOC(NCCL_ALL, "Cuda failure '%s'", ...): printed at INFO by healthy runs
    text = (
        "node1:77:77 [0] NCCL INFO init.cc:1120 Cuda failure 'invalid argument'\nNCCL INFO comm 0x55 done\n"
    )
    assert all(f.id != "log.nccl_bug_upgrade" for f in findings(text))


# -- cudart's bare "invalid device ordinal": any index past the count -----------------------------------------


def test_a_bare_invalid_device_ordinal_is_likely_and_set_device_confirms_it():
    found = lead("RuntimeError: CUDA error: invalid device ordinal\n")
    assert found.id == "log.invalid_device_ordinal" and sure(found) == "likely"
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "main.py", line 88, in <module>\n'
        "    torch.cuda.set_device(rank)\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py", line 404, in set_device\n'
        "    torch._C._cuda_setDevice(device)\n"
        "RuntimeError: CUDA error: invalid device ordinal\n"
    )
    found = lead(traceback)
    assert found.id == "log.invalid_device_ordinal" and sure(found) == "certain"
    # the call on the line after the message names itself too
    found = lead("RuntimeError: CUDA error: invalid device ordinal\n  torch.cuda.set_device(args.gpu)\n")
    assert sure(found) == "certain" and "set_device(args.gpu)" in found.summary


def test_an_invalid_device_ordinal_under_torch_load_names_the_checkpoints_device():
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "eval.py", line 12, in <module>\n'
        '    state = torch.load("ckpt/epoch_9.pt")\n'
        '  File "/usr/lib/python3/site-packages/torch/serialization.py", line 1014, in load\n'
        "    return _load(opened_zipfile, map_location, pickle_module, **pickle_load_args)\n"
        '  File "/usr/lib/python3/site-packages/torch/serialization.py", line 1422, in _load\n'
        "    result = unpickler.load()\n"
        "RuntimeError: CUDA error: invalid device ordinal\n"
    )
    found = lead(traceback)
    assert found.id == "log.invalid_device_ordinal" and sure(found) == "likely"
    assert "log.checkpoint_device_map" in found.details["alternatives"]
    assert "map_location='cpu'" in found.fix


def test_the_launchers_own_index_check_is_certain():
    # torch/distributed/elastic/agent/server/local_elastic_agent.py
    found = lead("ValueError: " + template("torch:local-rank-exceeds-available-gpus-in", "2", "2") + "\n")
    assert found.id == "log.invalid_device_ordinal" and sure(found) == "certain"


# -- torch.load's "... but torch.cuda.is_available() is False" ------------------------------------------------


def test_a_checkpoint_on_a_machine_without_cuda_is_likely_and_names_a_gpu_torch_cannot_see():
    found = lead("RuntimeError: " + template("torch:attempting-to-deserialize-object-on-device") + "\n")
    assert found.id == "log.checkpoint_device_map" and sure(found) == "likely"
    assert "log.cuda_unavailable" in found.details["alternatives"] and "--gpus all" in found.fix
    # the other variant names the saved index past this machine's count: certain
    text = template("torch:attempting-to-deserialize-object-on-device-2", "CUDA", "3", "cuda", "2")
    found = lead(f"RuntimeError: {text}\n")
    assert found.id == "log.checkpoint_device_map" and sure(found) == "certain", found.summary


# -- an NCCL_* setting's INFO line beside an NCCL failure ----------------------------------------------------


def test_an_nccl_setting_beside_a_failure_is_a_suspect_not_the_proof():
    text = (
        "node1:12:12 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0,mlx5_1\n"
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3\n"
    )
    found = lead(text)
    assert found.id == "log.nccl_env_value" and sure(found) == "likely"
    assert "log.nccl_error" in found.details["alternatives"]
    assert "unset NCCL_IB_HCA" in found.fix


def test_an_nccl_setting_in_a_healthy_log_is_nothing():
    text = "node1:12:12 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0\nnode1:12:12 [0] NCCL INFO Init COMPLETE\n"
    assert all(f.id != "log.nccl_env_value" for f in findings(text))


# -- a connect that failed, whatever the reason ----------------------------------------------------------------


@pytest.mark.parametrize("reason", ["No route to host", "Connection timed out"])
def test_nccls_failed_connect_is_likely_an_interface_or_a_firewall(reason):
    warn = "node2:42:42 [0] misc/socket.cc:484 NCCL WARN Net : Connect to 10.0.0.1<40913> failed : " + reason
    found = lead(f"{warn}\n" + NCCL_RAISED.format("2.18.6").replace("unhandled cuda", "unhandled system"))
    assert found.id == "log.network_interface" and sure(found) == "likely"
    assert "log.rendezvous_or_port" in found.details["alternatives"]
    assert "10.0.0.1:40913" in found.summary


def test_no_interface_at_all_stays_certain():
    found = lead("node2:42:42 [0] NCCL WARN " + template("nccl:bootstrap-no-socket-interface-found") + "\n")
    assert found.id == "log.network_interface" and sure(found) == "certain"


# -- c10d's "Socket Timeout" (Utils.hpp SYSCHECK: a store socket's recv past its timeout) ---------------------


def test_a_store_socket_timeout_is_likely_the_rendezvous_and_names_the_rank_that_never_came():
    found = lead("torch.distributed.DistNetworkError: " + template("torch_native:socket-timeout") + "\n")
    assert found.id == "log.rendezvous_or_port" and sure(found) == "likely"
    assert "log.peer_closed" in found.details["alternatives"] and "Socket Timeout" in found.summary


def test_the_nccl_id_wait_keeps_its_own_reading_of_a_socket_timeout():
    line = (
        "torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId "
        "from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout\n"
    )
    assert lead(line).id == "log.collective_timeout"


# -- Open MPI's mpirun, pdsh and ssh: a multi-node launch refused --------------------------------------------


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (template("system:openmpi-not-enough-slots", "8"), ["--oversubscribe", "slots=8"]),
        (template("system:openmpi-run-as-root", "mpirun"), ["--allow-run-as-root"]),
        (template("system:pdsh-ssh-exit-code", "node1", "node2", "255"), ["ssh-copy-id", "known_hosts"]),
    ],
)
def test_a_multi_node_launch_the_launcher_could_not_make_is_launch_command(line, words):
    found = lead(f"{line}\n")
    assert found.id == "log.launch_command" and sure(found) == "certain", found.summary
    assert all(w in found.fix for w in words), found.fix


def test_a_remote_commands_own_exit_through_pdsh_is_not_a_launch_failure():
    # pdsh reports the remote command's exit code too: 1 is the training script's error, not ssh's
    found = lead(template("system:pdsh-ssh-exit-code", "node1", "node2", "1") + "\n")
    assert found.id != "log.launch_command"


def test_ssh_refusing_a_key_is_likely_and_gits_refusal_is_not_a_launch():
    found = lead(template("system:ssh-permission-denied", "worker-3", "publickey,gssapi-with-mic") + "\n")
    assert found.id == "log.launch_command" and sure(found) == "likely"
    assert all(
        f.id != "log.launch_command" for f in findings("git@github.com: Permission denied (publickey).\n")
    )
    # ssh's "Host key verification failed." is git's over ssh too
    found = lead(template("system:ssh-host-key-verification-failed") + "\n")
    assert found.id == "log.launch_command" and sure(found) == "likely" and "known_hosts" in found.fix


# -- srun refusing a step (slurm_errno.c's reasons) ----------------------------------------------------------


@pytest.mark.parametrize(
    "reason",
    [
        "system:slurm-more-processors-than-permitted",
        "system:slurm-node-configuration-not-available",
        "system:slurm-invalid-gres",
    ],
)
def test_srun_refusing_a_step_is_slurm_env(reason):
    line = template("system:srun-unable-to-create-step", "4021337", template(reason))
    found = lead(f"{line}\n")
    assert found.id == "log.slurm_env" and sure(found) == "certain"
    assert template(reason) in found.summary and "--ntasks-per-node" in found.fix


# -- LOCAL_RANK not set: a plain python run or a scheduler without a torch launcher ---------------------------


def test_deepspeeds_local_rank_message_is_likely_and_a_scheduler_makes_it_certain():
    message = template("deepspeed:deepspeed-requires-the-local-rank-environment")
    found = lead(f"RuntimeError: {message}\n")
    assert found.id == "log.rank_env_missing" and sure(found) == "likely"
    assert "log.not_launched_distributed" in found.details["alternatives"]
    found = lead(f"+ srun python train.py --deepspeed ds.json\nRuntimeError: {message}\n")
    assert found.id == "log.rank_env_missing" and sure(found) == "certain"


# -- transformers' from_pretrained under ZeRO-3 --------------------------------------------------------------


def test_a_device_map_under_zero3_is_device_map_distributed():
    found = lead("ValueError: " + template("transformers:deepspeed-zero-is-not-compatible-with") + "\n")
    assert found.id == "log.device_map_distributed" and sure(found) == "certain"
    assert "ZeRO stage 2" in found.fix and "device_map" in found.fix
    # transformers 4.x's words (modeling_utils.py)
    older = "ValueError: DeepSpeed Zero-3 is not compatible with `low_cpu_mem_usage=True` or with passing a `device_map`."
    assert lead(older + "\n").id == "log.device_map_distributed"


# -- healthy lines that share the words -------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "node1:12:12 [0] NCCL INFO Channel 00/02 : 0[0] -> 1[1] via P2P/IPC/read",
        "[2024-01-10 10:00:05,000] [INFO] [launch.py:163:main] dist_world_size=8",
        "srun: job 4021337 queued and waiting for resources",
        "mpirun --allow-run-as-root -np 8 python train.py",
        "[W socket.cpp:464] [c10d] The server socket has timed out, will retry.",
    ],
)
def test_healthy_lines_fire_none_of_these(line):
    new = {"log.nccl_bug_upgrade", "log.launch_command", "log.slurm_env", "log.rendezvous_or_port"}
    assert all(f.id not in new for f in findings(line + "\n")), findings(line + "\n")[0].summary


# -- NCCL refusing the config struct torch hands it (init.cc parseCommConfig, 2.14+) -------------------------


def test_an_nccl_config_read_as_undefined_is_likely_another_libnccl_than_torchs():
    text = (
        NCCL_RAISED.format("2.14.3").replace("unhandled cuda error", "invalid argument")
        + "ncclInvalidArgument: Invalid value for an argument.\nLast error:\n"
        + template("nccl:invalid-config-blocking-attribute-value", "-2147483648")
        + "\n"
    )
    found = lead(text)
    assert found.id == "log.nccl_version_mismatch" and sure(found) == "likely"
    assert "LD_LIBRARY_PATH" in found.fix and "log.nccl_bug_upgrade" in found.details["alternatives"]
    # a value an NCCL_COMM_BLOCKING setting gave is not the struct misread
    found = lead(
        "h:1:1 [0] NCCL WARN " + template("nccl:invalid-config-blocking-attribute-value", "7") + "\n"
    )
    assert found.id != "log.nccl_version_mismatch"
    # two ranks' versions side by side stay certain
    text = "h:1:1 [0] NCCL WARN " + template(
        "nccl:mismatched-nccl-version-detected-rank-version", "0", "21803", "1", "22105"
    )
    found = lead(text + "\n")
    assert found.id == "log.nccl_version_mismatch" and sure(found) == "certain"


# -- a build's nvcc that is not the CUDA torch was built with ------------------------------------------------


@pytest.mark.parametrize(
    ("line", "words"),
    [
        # nvcc of CUDA 10.1 or older, given torch's cpp_extension option of CUDA 10.2+
        (template("system:nvcc-unknown-option-dependencies"), ["CUDA_HOME", "torch.version.cuda"]),
        # NVIDIA apex's setup.py
        (
            "RuntimeError: " + template("third_party:apex-cuda-version-mismatch", "11.8"),
            ["cuda-11.8", "11.8"],
        ),
        # flash-attn's setup.py
        (
            "RuntimeError: " + template("third_party:flash-attn-cuda-too-old", "11.6"),
            ["nvcc -V", "CUDA_HOME"],
        ),
    ],
)
def test_a_build_whose_nvcc_is_not_torchs_cuda_is_cuda_build(line, words):
    found = lead(line + "\n")
    assert found.id == "log.cuda_build" and sure(found) == "certain", found.summary
    said = found.summary + "\n" + found.fix
    assert all(w in said for w in words), said


# -- the out-of-memory message's list of the GPU's processes (CUDACachingAllocator asks NVML for each) -------

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.15 GiB of which 1.06 GiB is free. {} Of the allocated memory 17.12 GiB is allocated by PyTorch, and "
    "1.31 GiB is reserved by PyTorch but unallocated.\n"
)


def test_an_oom_with_several_processes_on_its_gpu_names_ranks_sharing_it():
    listed = " ".join(f"Process {pid} has 19.50 GiB memory in use." for pid in (3112, 3113, 3114))
    found = lead(OOM.format(listed))
    assert found.id == "log.cuda_oom" and sure(found) == "likely"
    assert "log.gpu_selection" in found.details["alternatives"]
    assert "3 other processes" in found.fix and "set_device(int(os.environ['LOCAL_RANK']))" in found.fix


def test_an_oom_with_one_other_process_stays_certain():
    found = lead(OOM.format("Process 3112 has 60.50 GiB memory in use."))
    assert found.id == "log.cuda_oom" and sure(found) == "certain"
    assert "Another process (pid 3112)" in found.fix
    # torchrun's summary naming the listed pids as its own workers: the processes are this job's, not others
    summary = "[ERROR] failed (exitcode: 1) local_rank: 0 (pid: 3112) of binary: /usr/bin/python\n"
    listed = "Process 3112 has 19.50 GiB memory in use. Process 3113 has 19.50 GiB memory in use."
    found = lead(OOM.format(listed) + summary)
    assert found.id == "log.cuda_oom" and sure(found) == "certain"


# -- GNU ld without the build's own object files (binutils: "cannot find %s: No such file or directory") -----


def test_a_link_without_the_builds_own_objects_is_likely_the_packages_build():
    folder = (
        "/tmp/pip-install-1tlqmndk/apex_0123456789abcdef0123456789abcdef/build/temp.linux-x86_64-cpython-310"
    )
    found = lead(template("system:ld-cannot-find-input-file", f"{folder}/csrc/fused_adam.o") + "\n")
    assert found.id == "log.library_version_bug" and sure(found) == "likely"
    assert "the build of apex" in found.summary and "log.cuda_build" in found.details["alternatives"]
    # a library the link asks for by name is the toolkit's or the system's: not this
    assert lead("/usr/bin/ld: cannot find -lcudart\n").id == "log.cuda_build"


def test_accelerates_deepspeed_launch_without_deepspeed_is_the_environment():
    found = lead("ImportError: " + template("accelerate:deepspeed-is-not-installed-run-pip3") + "\n")
    assert found.id == "log.broken_install" and sure(found) == "certain"
    assert "pip install DeepSpeed" in found.fix and "which python" in found.fix


# -- a DataLoader worker's crash (torch/csrc/DataLoader.cpp: its signal handlers, its parent's report) -------


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: "
        + template("torch_native:dataloader-worker-killed-by-signal", "2207", "Segmentation fault"),
        template("torch_native:dataloader-unexpected-segfault-in-worker"),
        template("torch_native:dataloader-unexpected-fpe-in-worker"),
    ],
)
def test_a_dataloader_workers_crash_is_likely_a_crash_in_the_datasets_code(line):
    found = lead(line + "\n")
    assert found.id == "log.worker_crash" and sure(found) == "likely"
    assert "num_workers=0" in found.fix


def test_a_dataloader_workers_bus_error_and_sigkill_stay_theirs():
    killed = template("torch_native:dataloader-worker-killed-by-signal", "2207", "Bus error")
    assert lead(f"RuntimeError: {killed}\n").id == "log.dataloader_shm"
    killed = template("torch_native:dataloader-worker-killed-by-signal", "2207", "Killed")
    assert lead(f"RuntimeError: {killed}\n").id == "log.worker_killed"


def test_a_dataloader_worker_gone_without_its_report_is_likely_shm_naming_the_oom_killer_and_a_crash():
    line = "RuntimeError: " + template("torch:dataloader-worker-pid-exited-unexpectedly", "12345, 12346")
    found = lead(line + "\n")
    assert found.id == "log.dataloader_shm" and sure(found) == "likely"
    assert {"log.worker_killed", "log.worker_crash"} <= set(found.details["alternatives"])
    assert "--shm-size" in found.fix
    # with shared memory's own refusal above it, the report is there: certain (a bus error alone may be a
    # memory-mapped file: test_explain_certainty_review_3.py)
    full = "RuntimeError: unable to write to file </torch_287_2714559211_8>: No space left on device (28)\n"
    assert sure(lead(full + line + "\n")) == "certain"


def test_a_cuda_call_refused_under_graph_capture_says_so_and_names_no_driver():
    found = lead(
        "h:1:1 [0] NCCL WARN "
        + template("nccl:cuda-failure", "operation not permitted when stream is capturing")
        + "\n"
    )
    assert found.id == "log.nccl_bug_upgrade" and sure(found) == "likely"
    assert "CUDA graph" in found.fix and "log.driver_too_old" not in found.details.get("alternatives", [])
