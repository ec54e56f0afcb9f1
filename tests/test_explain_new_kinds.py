"""The kinds a sample by symptom turned up beyond the first ones (the versions installed, a script not started
distributed, the ranks' choice of GPU, a faulty IB link, an exit without destroy_process_group), and the rule
that where one message fits two causes both are named, the likelier first.

Each input is a real line: from the corpus (tests/fixtures/corpus/train, its SOURCES.md names the thread), printed
here by the installed package itself, or a message template quoted from its source (said beside it).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")

CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "train"


def explained(text: str):
    return explain(["-"], stdin=io.BytesIO(text.encode()))


def test_a_type_error_inside_an_installed_package_is_likely_that_versions_bug():
    # tests/fixtures/corpus/train/163.txt (modelscope/ms-swift, fixed in ms-swift): the paste starts inside
    # the frame, its path cut before the quote
    (found, *_) = explain([str(CORPUS / "163.txt")])
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert found.details["package"] == "transformers" and found.summary.startswith("likely: ")
    assert "training_args.py:1887" in found.summary and "self.fsdp" in found.fix
    assert "pip install -U transformers" in found.fix


def test_an_error_a_library_raises_on_purpose_or_one_in_the_users_code_is_no_library_bug():
    frames = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 9, in <module>\n'
        "    main()\n"
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/training_args.py", line 1500, in __post_init__\n'
        "    raise ValueError(msg)\n"
    )
    (on_purpose, *_) = explained(
        frames.replace(
            'training_args.py", line 1500, in __post_init__', 'tokenization_utils_base.py", line 3300, in pad'
        )
        + "ValueError: You should supply an encoding or a list of encodings to this method that includes input_ids, "
        "but you provided ['text']\n"
    )
    # the tokenizer refusing examples without input_ids on purpose: read as that refusal, not as a bug of transformers
    assert on_purpose.id == "log.library_arguments"
    # a refusal of the Trainer's arguments is read as what it is (trainer_arguments), not as a bug of transformers
    (refused, *_) = explained(
        frames + "ValueError: --load_best_model_at_end requires the save and eval strategy to match\n"
    )
    assert refused.id == "log.trainer_arguments"
    (own, *_) = explained(
        'Traceback (most recent call last):\n  File "/home/u/train.py", line 9, in <module>\n'
        "    x = cfg['lr'] + None\nTypeError: unsupported operand type(s) for +: 'float' and 'NoneType'\n"
    )
    assert own.id == "log.unrecognised"


def test_a_version_check_that_failed_names_the_requirement_and_what_is_installed():
    # the message transformers' own check prints (transformers/utils/versions.py), raised here for real
    from transformers.utils.versions import require_version

    with pytest.raises(ImportError) as raised:
        require_version("torch>=99.0")
    (found, *_) = explained(f"ImportError: {raised.value}\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "torch>=99.0 is needed" in found.summary and "pip install 'torch>=99.0'" in found.fix
    # Lightning's check, as lightning/pytorch/strategies/deepspeed.py words it (catalog
    # lightning:pytorch-requires-deepspeed-detected-deepspeed-version)
    (found, *_) = explained(
        "RuntimeError: PyTorch >= 2.6 requires DeepSpeed >= 0.16.0. Detected DeepSpeed version: 0.14.4. Please "
        "upgrade by running `pip install -U 'deepspeed>=0.16.0'`.\n"
    )
    assert found.id == "log.dependency_version" and "0.14.4 is installed" in found.summary
    assert "pip install -U 'DeepSpeed>=0.16.0'" in found.fix


def test_a_name_that_cannot_be_imported_is_only_likely_a_version_mismatch():
    # CPython's own message, raised here for real
    with pytest.raises(ImportError) as raised:
        exec("from json import no_such_name_in_json")
    (found, *_) = explained(f"ImportError: {raised.value}\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "json has no no_such_name_in_json" in found.summary and "pip show json" in found.fix


def test_a_busy_gpu_is_likely_a_wrong_choice_of_gpu_and_names_the_gpu_that_fell_off():
    # cudaErrorDevicesUnavailable as torch prints it (catalog cuda_runtime:devices-unavailable); the line is
    # quoted verbatim in public cluster docs (an LSF GPU queue in exclusive-process mode, Determined with MPS)
    (found, *_) = explained("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n")
    assert found.id == "log.gpu_selection" and found.details["confidence"] == "likely"
    assert "Exclusive_Process" in found.fix and "CUDA_VISIBLE_DEVICES" in found.fix and "xid" in found.fix


def test_an_ib_port_error_is_a_faulty_link_and_a_completion_error_names_it_as_the_second_reading():
    # quoted from a public write-up of OPT-175B's training failures: "p2p_plugin.c:141 NCCL WARN NET/IB : Got
    # async event : port error" (NCCL net_ib.cc prints every async event of the adapter)
    (found, *_) = explained(
        "node3:1234:1290 [0] p2p_plugin.c:141 NCCL WARN NET/IB : Got async event : port error\n"
    )
    assert found.id == "log.network_fault" and found.details["confidence"] == "certain"
    assert "port error" in found.summary and "ibstat" in found.fix
    # tests/fixtures/logs/018_network_interface.txt's line (NVIDIA/nccl#426): the GID index there, a faulty
    # link elsewhere — the likelier first, the other named
    (completion, *_) = explained(
        "-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, "
        "opcode 1, len 0, vendor err 129\n"
    )
    assert completion.id == "log.network_interface" and completion.details["alternatives"] == [
        "log.network_fault"
    ]
    assert completion.summary.index("likely: ") < completion.summary.index("faulty InfiniBand/RoCE link")
    assert "ib_write_bw" in completion.fix


SHUTDOWN = (
    # as torch 2.4+ prints it (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp; catalog
    # torch_native:process-group-has-not-been-destroyed), with the rank prefix torch adds
    "[rank0]:[W1007 09:55:53.400347903 ProcessGroupNCCL.cpp:1253] Warning: WARNING: process group has NOT been "
    "destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
    "destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare "
    "cases this process can exit before this point and block the progress of another member of the process "
    "group. This constraint has always been present,  but this warning has only been added since PyTorch 2.4 "
    "(function operator())\n"
)


def test_an_exit_without_destroy_process_group_is_a_likely_finding_only_when_nothing_else_is():
    (alone, *_) = explained("step 100 loss=0.12\ntraining finished\n" + SHUTDOWN)
    assert alone.id == "log.shutdown_hang" and alone.details["confidence"] == "likely"
    assert "destroy_process_group()" in alone.fix and "wandb.finish()" in alone.fix
    beside = explained(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 1.02 GiB is free.\n" + SHUTDOWN
    )
    assert beside[0].id == "log.cuda_oom" and "log.shutdown_hang" not in [f.id for f in beside]
    raised = explained(
        'Traceback (most recent call last):\n  File "/home/u/train.py", line 9, in <module>\n    main()\n'
        "ValueError: planted failure\n" + SHUTDOWN
    )
    assert "log.shutdown_hang" not in [f.id for f in raised]


def test_a_victims_generic_error_never_leads_over_the_error_that_started_it():
    # rank 1 fails first with its own error; rank 0 then cannot reach the store (a bare client timeout, which
    # any dead peer causes): the first error leads, the store's timeout does not
    found = explained(
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "/home/u/train.py", line 20, in <module>\n'
        "[rank1]:     load(shard)\n"
        "[rank1]: FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-7.bin'\n"
        "[rank0]: [E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to "
        "10.0.0.1:29500\n"
    )
    # (rank 1's missing file is read as a dataset path, likely: data_paths.py)
    assert found[0].id == "log.data_path_missing" and "rank 1" in found[0].summary
    assert all(
        f.details.get("confidence") != "certain" for f in found[1:] if f.id == "log.rendezvous_or_port"
    )


def test_a_cpu_tensor_on_a_group_without_a_cpu_backend_is_a_cpu_tensor_in_an_nccl_collective():
    # torch 2.x's words for what torch 1.x's ProcessGroupNCCL called "Tensors must be CUDA and dense", raised
    # here for real: a one-rank group whose only backend is for CUDA tensors, handed a CPU tensor
    import torch
    import torch.distributed as dist

    dist.init_process_group(backend="cuda:gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        with pytest.raises(RuntimeError) as raised:
            dist.all_reduce(torch.ones(2))
    finally:
        dist.destroy_process_group()
    (found, *_) = explained(f"[rank1]: RuntimeError: {raised.value}\n")
    # the line alone: the collective may be a library's (tests/test_explain_certainty_review.py)
    assert found.id == "log.cpu_tensor_nccl" and found.details["confidence"] == "likely"
    assert "rank 1" in found.summary and "gloo" in found.fix


def test_tensors_on_two_gpus_name_the_model_spread_by_device_map_and_the_gpu_mapping_as_well():
    # tests/fixtures/corpus/train/098.txt (EvolvingLMMs-Lab/lmms-eval): the thread found device_map='auto' under
    # accelerate launch; the same line is what a wrong rank-to-GPU mapping prints
    (found, *_) = explain([str(CORPUS / "098.txt")])
    assert found.id == "log.device_mismatch" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.device_map_distributed", "log.gpu_selection"]
    assert "device_map={'': int(os.environ['LOCAL_RANK'])}" in found.fix and "LOCAL_RANK" in found.fix


def test_no_gpus_visible_is_only_likely_and_names_a_wrong_cuda_visible_devices():
    # as torch's CUDA initialisation prints it (torch/csrc/cuda, not in a CPU wheel) when no GPU is visible
    (found, *_) = explained("RuntimeError: No CUDA GPUs are available\n")
    assert found.id == "log.cuda_unavailable" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.gpu_selection"] and "nvidia-docker" in found.fix


def test_no_gpus_visible_is_torchs_native_message_cited_by_its_recogniser():
    # c10/cuda/CUDAFunctions.cpp device_count_ensure_non_zero, held by hand in torch_native.tsv (no extractor reads
    # torch's C++): the row the recogniser cites, its text the anchor it reads
    from torchdoctor.explain.catalog import by_id
    from torchdoctor.explain.kinds.cuda import CUDA_UNAVAILABLE

    row = by_id()["torch_native:no-cuda-gpus-are-available"]
    assert row.kind == "cuda_unavailable" and row.file.startswith("c10/cuda/CUDAFunctions.cpp")
    assert row.id in CUDA_UNAVAILABLE.templates and row.text in CUDA_UNAVAILABLE.anchors
    # CoR-GS#23 (train 876): torch 1.7's set_device where CUDA_VISIBLE_DEVICES hid every GPU
    (found, *_) = explain([str(CORPUS / "876.txt")])
    assert found.id == "log.cuda_unavailable" and "CUDA_VISIBLE_DEVICES" in found.fix


def test_deepspeeds_batch_check_names_the_three_numbers_and_auto():
    # deepspeed/runtime/config.py _batch_assertion (catalog deepspeed:check-batch-related-parameters-train-batch),
    # as its f-string prints it for a config written for 8 GPUs run on 4
    (found, *_) = explained(
        "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
        "gradient_acc_step * world_size 256 != 8 * 4 * 4\n"
    )
    assert found.id == "log.deepspeed_config_mismatch" and found.details["confidence"] == "certain"
    assert "256 != micro batch 8 x gradient accumulation 4 x world size 4" in found.summary
    assert '"auto"' in found.fix


# NCCL WARN lines as NCCL prints them (the catalog ids beside each; the prefix "host:pid:tid [dev]" as NCCL's
# debug.cc writes it)
NCCL_LINES = [
    # src/enqueue.cc ArgsCheck (nccl:allocated-on-device-mismatchs-with-nccl)
    (
        "node1:123:456 [0] enqueue.cc:215 NCCL WARN AllReduce : sendbuff allocated on device 1 mismatchs with "
        "NCCL device 0\n",
        "gpu_selection",
        "certain",
        ["GPU 1", "GPU 0", "LOCAL_RANK"],
    ),
    # src/transport/net_socket.cc (nccl:net-socket-peer-message-truncated-receiving)
    (
        "node1:5:6 [1] NCCL WARN NET/Socket : peer 10.0.0.2<43210> message truncated : receiving 1048576 bytes "
        "instead of 65536. If you believe your socket network is in a healthy state, there may be a mismatch in "
        "collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks\n",
        "rank_divergence",
        "likely",
        ["1048576", "NCCL_PROTO"],
    ),
    # src/init.cc (nccl:cuda-driver-version-found-is-minimum)
    (
        "node1:5:6 [1] init.cc:1234 NCCL WARN CUDA Driver version found is 11040. Minimum requirement is 11080\n",
        "driver_too_old",
        "certain",
        ["11.4"],
    ),
    # src/transport/net.cc, NCCL 2.25+ (nccl:nccl-version-mismatch-with-remote-peer)
    (
        "node1:5:6 [1] NCCL WARN NCCL version mismatch with remote peer 10.0.0.2<43210> (local: 22505, remote "
        "22103)\n",
        "nccl_version_mismatch",
        "certain",
        ["same NCCL"],
    ),
    # src/transport/p2p.cc (nccl:failed-to-peer-with-device)
    (
        "node1:5:6 [1] NCCL WARN failed to peer with device 3: 217 peer access is not supported between these "
        "two devices\n",
        "gpu_p2p",
        "certain",
        ["NCCL_P2P_DISABLE"],
    ),
]


@pytest.mark.parametrize(("line", "kind", "confidence", "words"), NCCL_LINES, ids=[c[1] for c in NCCL_LINES])
def test_nccl_warnings_of_other_releases_name_their_kind(line, kind, confidence, words):
    (found, *_) = explained(line)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence, found.summary
    for word in words:
        assert word in found.summary + found.fix, word


def test_an_insufficient_driver_alone_names_a_machine_without_nvidia_as_the_other_reading():
    # tests/fixtures/corpus/train/033.txt (lora-scripts#101): bitsandbytes' CUDA call on a machine whose only GPU
    # is Intel's; cudart says "insufficient" when there is no NVIDIA driver at all
    (found, *_) = explain([str(CORPUS / "033.txt")])
    assert found.id == "log.driver_too_old" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.cuda_unavailable"] and "nvidia-smi" in found.fix


def test_mpichs_mpiexec_refusing_open_mpis_argument_is_a_mix_of_mpi_implementations():
    # the lines MPICH's Hydra prints (catalog system:mpich-hydra-unrecognized-argument), as quoted in public
    # threads where mpi4py built against one MPI was started by another's mpiexec
    (found, *_) = explained(
        "[mpiexec@r001] match_arg (utils/args/args.c:159): unrecognized argument pmi_args\n"
        "[mpiexec@r001] HYDU_parse_array (utils/args/args.c:174): argument matching returned error\n"
    )
    assert found.id == "log.mpi_implementation" and found.details["confidence"] == "certain"
    assert "pmi_args" in found.summary and "mpiexec --version" in found.fix
    (typo, *_) = explained("[mpiexec@r001] match_arg (utils/args/args.c:159): unrecognized argument nprocs\n")
    assert typo.id == "log.mpi_implementation" and typo.details["confidence"] == "likely"


def test_a_hostfile_the_deepspeed_launcher_cannot_read_is_a_launch_command_problem():
    # deepspeed/launcher/runner.py (catalog deepspeed:hostfile-is-empty-or-not-formatted)
    (found, *_) = explained(
        "ValueError: Hostfile is empty or not formatted correctly, unable to proceed with launching.\n"
    )
    assert found.id == "log.launch_command" and found.details["confidence"] == "certain"
    assert "slots=" in found.fix and "--num_nodes" in found.fix


def test_a_quantized_model_on_another_gpu_than_the_process_is_a_device_map_problem():
    # accelerate/accelerator.py prepare_model (catalog accelerate:you-can-train-model-that-has-4), as it words it
    (found, *_) = explained(
        "ValueError: You can't train a model that has been loaded in 8-bit or 4-bit precision on a different "
        "device than the one you're training on. Make sure you loaded the model on the correct device using for "
        "example `device_map={'':torch.cuda.current_device()}` or `device_map={'':torch.xpu.current_device()}`\n"
    )
    assert found.id == "log.device_map_distributed" and found.details["confidence"] == "certain"
    assert "device_map={'': PartialState().process_index}" in found.fix


def test_torchs_ops_raising_on_the_callers_values_are_no_library_bug():
    # raised here for real: a token id past the embedding, a forward() called without its argument — the
    # innermost frame is torch's, the mistake the caller's
    import traceback

    import torch

    class Net(torch.nn.Module):
        def forward(self, x, mask):
            return x

    # the embedding's is read as the caller's mistake it is (kinds/index_ranges.py), the other stays unrecognised
    for call, kind in (
        (lambda: torch.nn.Embedding(4, 2)(torch.tensor([7])), "log.embedding_index_range"),
        (lambda: Net()(torch.ones(1)), "log.unrecognised"),
    ):
        try:
            call()
        except (IndexError, TypeError):
            text = traceback.format_exc()
        assert "site-packages/torch/" in text
        (found, *_) = explained(text)
        assert found.id == kind, (found.id, text)


def test_a_library_that_cannot_be_opened_is_only_likely_an_extension_problem_unless_it_is_the_drivers():
    # the dynamic loader's message (catalog system:ld-cannot-open-shared-object) as Python's ImportError/OSError
    # prints it: a CUDA runtime's library is a build or an install that lacks it; the driver's is no driver
    (runtime, *_) = explained(
        "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
    )
    assert runtime.id == "log.extension_import" and runtime.details["confidence"] == "likely"
    assert runtime.details["alternatives"] == ["log.broken_install"]
    (driver, *_) = explained(
        "OSError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
    )
    assert driver.id == "log.cuda_unavailable" and driver.details["confidence"] == "certain"
    assert "--gpus all" in driver.fix and "log.extension_import" not in [
        f.id
        for f in explained(
            "OSError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
        )
    ]
