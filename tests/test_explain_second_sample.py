"""The kinds the second sample by symptom (corpus files 164-205) asked for, each anchored on a message its source
prints: DeepSpeed's init order and its config against the script's, DDP's device_ids check, a DTensor without a
mesh, the launcher's --local_rank through python-fire, an extension that does not load, apex's fused optimizers.

Each input is a real log from the train half of the corpus (tests/fixtures/corpus/train, its SOURCES.md names the
thread and what it established), or a message template quoted from the catalog (the id is named beside it).
"""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_deepspeed_used_before_init_distributed():
    # 168.txt (bigscience-workshop/Megatron-DeepSpeed#285): deepspeed.comm used before deepspeed.init_distributed
    # the bare assertion, which comm.py also raises after destroy_process_group: likely since
    # test_explain_certainty_cert.py, the other reading named
    found = lead("168.txt")
    assert found.id == "log.deepspeed_init_order" and found.details["confidence"] == "likely"
    assert "log.process_group_destroyed" in found.details["alternatives"]
    assert "deepspeed.init_distributed()" in found.fix
    # deepspeed/comm/comm.py's other wording of the same check
    found = explained(
        "AssertionError: " + template("deepspeed:distributed-backend-is-not-initialized-please")
    )
    assert found.id == "log.deepspeed_init_order"


def test_torchs_no_process_group_in_a_deepspeed_run_names_deepspeeds_init_order_too():
    # the message alone is any distributed call without init: likely, and in a log that mentions DeepSpeed the
    # init-order reading is named beside the others
    text = (
        "[INFO] [logging.py:60:log_dist] [Rank 0] DeepSpeed info: version=0.6.0\n"
        "RuntimeError: Default process group has not been initialized, please make sure to call "
        "init_process_group.\n"
    )
    found = explained(text)
    assert found.id == "log.not_launched_distributed" and found.details["confidence"] == "likely"
    assert "log.deepspeed_init_order" in found.details["alternatives"]
    plain = explained(text.splitlines()[1] + "\n")
    assert "log.deepspeed_init_order" not in plain.details.get("alternatives", [])


def test_accelerate_mixed_precision_against_the_deepspeed_config():
    # 164.txt (shibing624/MedicalGPT#288): bf16 asked for, fp16 in the DeepSpeed config (backticks as copied)
    found = lead("164.txt")
    assert found.id == "log.deepspeed_config_mismatch" and found.details["confidence"] == "certain"
    assert "(bf16) disagrees" in found.summary and "enables fp16" in found.summary
    assert "--mixed_precision fp16" in found.fix and "bf16" in found.fix
    # the template as accelerate prints it, backticks included
    printed = "ValueError: " + template("accelerate:mixed-precision-arg-cannot-be-set", "fp16", "bf16")
    assert explained(printed).summary.startswith("accelerate's mixed precision (fp16)")


def test_deepspeed_config_checks_from_the_sources():
    both = explained("ValueError: " + template("deepspeed:bfloat16-and-fp16-modes-cannot-be"))
    assert both.id == "log.deepspeed_config_mismatch" and "both bf16 and fp16" in both.summary
    batch = explained(
        "ValueError: " + template("accelerate:when-using-deepspeed-accelerate-prepare-requires")
    )
    assert batch.id == "log.deepspeed_config_mismatch" and "train_micro_batch_size_per_gpu" in batch.fix


def test_deepspeed_launcher_hostfile_and_ssh():
    text = template("deepspeed:using-hostfile-at-but-host-was", "/job/hostfile", "node2", "/job/hostfile")
    found = explained(f"[2024-01-06 11:41:34,489] [ERROR] [runner.py:449:main] {text}\n")
    assert found.id == "log.launch_command" and "passwordless ssh" in found.fix
    bad = explained(template("deepspeed:hostfile-contains-bad-entry-unable-to", "node1 slot=8") + "\n")
    assert bad.id == "log.launch_command"


def test_a_dtensor_without_a_mesh_is_likely_a_device_map_model_under_torchrun():
    # 169.txt (huggingface/accelerate#3628): from_pretrained with a device_map under the multi-process launcher
    found = lead("169.txt")
    assert found.id == "log.device_map_distributed" and found.details["confidence"] == "likely"
    assert "c10d.broadcast_.default" in found.summary and "device_map" in found.fix
    assert "log.device_mesh_config" in found.details["alternatives"]


def test_ddp_device_ids_check_reads_where_the_parameters_are():
    # torch/nn/parallel/distributed.py's check; 179.txt (huggingface/accelerate#1802) is its title, cut before
    # the devices: only likely, and the accelerate reading is named
    found = lead("179.txt")
    assert found.id == "log.device_map_distributed" and found.details["confidence"] == "likely"
    assert "log.library_version_bug" in found.details["alternatives"] and "accelerate" in found.fix
    head = "ValueError: DistributedDataParallel device_ids and output_device arguments only work with "
    head += (
        "single-device/multiple-device GPU modules or CPU modules, but got device_ids [0], output_device 0, "
    )
    spread = explained(
        head + "and module parameters {device(type='cuda', index=0), device(type='cuda', index=1)}.\n"
    )
    assert spread.id == "log.device_map_distributed" and spread.details["confidence"] == "certain"
    assert "on 2 GPUs" in spread.summary
    on_cpu = explained(head + "and module parameters {device(type='cpu')}.\n")
    assert on_cpu.id == "log.device_mismatch" and on_cpu.details["confidence"] == "certain"
    assert "still on the CPU" in on_cpu.summary and "model.to(" in on_cpu.fix


def test_torch_0x_different_gpus_message():
    # 177.txt (junyanz/pytorch-CycleGAN-and-pix2pix#22), THCUNN's check
    found = lead("177.txt")
    assert found.id == "log.device_mismatch" and "CUDA_VISIBLE_DEVICES" in found.fix


def test_fire_entry_point_handed_local_rank():
    # 187.txt (AILab-CVC/GPT4Tools#18): a fire.Fire script started by torch.distributed.launch
    found = lead("187.txt")
    assert found.id == "log.local_rank_argument" and found.details["confidence"] == "certain"
    assert "--local_rank" in found.summary and "torchrun" in found.fix


def test_undefined_symbol_certain_only_for_torchs_own_cpp_names():
    # 190.txt (unlimblue/KNN_CUDA#2): c10::Error missing, the extension was built for another torch
    found = lead("190.txt")
    assert found.id == "log.extension_import" and found.details["confidence"] == "certain"
    assert "built against another torch" in found.summary
    # 192.txt (NVIDIA/nv-wavenet#92): at::UndefinedTensorImpl missing, a stale build for torch 1.0 (torch 1.1
    # moved it to c10::); an extension imported before torch misses it too (358.txt, lufficc/SSD#125): likely,
    # that reading named
    old = lead("192.txt")
    assert old.id == "log.extension_import" and old.details["confidence"] == "likely"
    assert "before 1.1" in old.summary and "log.import_torch_first" in old.details["alternatives"]
    # 188.txt (pytorch/extension-ffi#14): a plain C symbol (`state`) the torch build did not export: likely,
    # and that reading is named
    plain = lead("188.txt")
    assert plain.id == "log.extension_import" and plain.details["confidence"] == "likely"
    assert "log.library_version_bug" in plain.details["alternatives"]


def test_apex_fused_optimizers_need_its_cuda_extensions():
    # 204.txt (rwightman/efficientdet-pytorch#241): timm's check that apex (with CUDA) is there
    found = lead("204.txt")
    assert found.id == "log.extension_import" and found.details["confidence"] == "likely"
    assert "apex" in found.fix and "--cuda_ext" in found.fix


def test_build_without_a_reason_line_points_at_cuda_home():
    # 175.txt (mapillary/inplace_abn#188): only "Error compiling objects for extension" in the paste
    found = lead("175.txt")
    assert found.id == "log.cuda_build" and "CUDA_HOME" in found.fix and "nvcc" in found.fix


def test_slurm_oom_killer_is_a_sigkill_from_host_memory():
    # 197.txt (Visual-AI/3DRS#7): a DataLoader worker killed, SLURM's cgroup OOM killer named below it
    found = lead("197.txt")
    assert found.id == "log.worker_killed" and "host RAM" in found.fix


def test_new_source_messages_for_known_kinds():
    syncbn = explained("ValueError: " + template("torch:syncbatchnorm-layers-only-work-with-gpu") + "\n")
    assert syncbn.id == "log.syncbn_misuse" and "CPU" in syncbn.summary
    rtx = explained(
        "NotImplementedError: " + template("accelerate:using-rtx-series-doesn-support-faster") + "\n"
    )
    assert rtx.id == "log.gpu_p2p" and "NCCL_P2P_DISABLE=1" in rtx.fix
    same_gpu = explained(
        "node1:12:34 [0] init.cc:1422 NCCL WARN " + template("nccl:multiple-ranks-are-using-the-same") + "\n"
    )
    assert same_gpu.id == "log.duplicate_gpu" and "set_device" in same_gpu.fix
    local_rank = explained(
        "RuntimeError: " + template("deepspeed:deepspeed-requires-the-local-rank-environment", "") + "\n"
    )
    assert local_rank.id == "log.rank_env_missing" and "LOCAL_RANK" in local_rank.summary


def test_fsdp_flat_parameter_checks_name_the_wrapping_to_change():
    # torch/distributed/fsdp/_flat_param.py and _init_utils.py, as the catalog quotes them
    grads = explained("ValueError: " + template("torch:must-flatten-tensors-with-uniform-requires") + "\n")
    assert grads.id == "log.fsdp_wrap_config" and "use_orig_params=True" in grads.fix
    # the same pasted without backticks, in torch 2.0's wording
    assert (
        explained("ValueError: FlatParameter requires uniform requires_grad\n").id == "log.fsdp_wrap_config"
    )
    dtypes = explained(
        "ValueError: "
        + template("torch:must-flatten-tensors-with-uniform-dtype", "torch.float16", "torch.float32")
        + "\n"
    )
    assert dtypes.id == "log.fsdp_wrap_config" and "torch.float16 and torch.float32" in dtypes.summary
    cpu = explained("ValueError: " + template("torch:the-module-has-cpu-parameters-or") + "\n")
    assert cpu.id == "log.fsdp_wrap_config" and "device_id" in cpu.fix


def test_accelerate_multinode_without_master_addr():
    # accelerate/state.py, as the catalog quotes it
    found = explained("ValueError: " + template("accelerate:tried-to-launch-on-distributed-with") + "\n")
    assert found.id == "log.rendezvous_or_port" and "MASTER_ADDR" in found.summary
    assert "export MASTER_ADDR" in found.fix


def test_deepspeeds_refusals_of_its_config_say_what_to_change():
    untested = explained("AssertionError: " + template("deepspeed:you-are-using-an-untested-zero") + "\n")
    assert untested.id == "log.deepspeed_config_mismatch" and "zero_allow_untested_optimizer" in untested.fix
    stage = explained("AssertionError: " + template("deepspeed:zero-stage-requires-an-optimizer", "3") + "\n")
    assert stage.id == "log.deepspeed_config_mismatch" and "optimizer=" in stage.fix
    # another library's "requires an optimizer" is not DeepSpeed's
    assert (
        explained("ValueError: this scheduler requires an optimizer\n").id != "log.deepspeed_config_mismatch"
    )


def test_fsdp_device_id_against_the_current_gpu():
    text = template("torch:inconsistent-compute-device-and-device-id", "1", "cuda:0", "cuda:1")
    found = explained(f"ValueError: {text}\n")
    assert found.id == "log.gpu_selection" and found.details["confidence"] == "certain"
    assert "(cuda:1)" in found.summary and "set_device" in found.fix
