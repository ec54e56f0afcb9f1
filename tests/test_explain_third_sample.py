"""The knowledge the third sample by symptom (corpus files 206-237) asked for, each anchored on a message its
source prints: torch.cat's device check, an extension op without a CUDA kernel, a checkpoint torn by concurrent
writes, a DataLoader given a sampler and shuffle, DataParallel's gather of an output it cannot combine, unequal
GPUs under DataParallel, a rendezvous store on port 0, DeepSpeed's engine/optimizer attributes across releases,
deepspeed's "No slot" for CUDA_VISIBLE_DEVICES, cpu_adam's curand, and messages retyped with typographic quotes.

Each input is a real log from the train half of the corpus (tests/fixtures/corpus/train, its SOURCES.md names the
thread and what it established), or a message template quoted from the catalog (the id is named beside it).
"""

from __future__ import annotations

import pytest
from explaining import CORPUS, explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_torch_cat_on_two_devices():
    # 217.txt (davda54/sam#5): the optimizer stacked gradient norms of parameters on two GPUs
    found = lead("217.txt")
    assert found.id == "log.device_mismatch" and "cuda:0 and cuda:1" in found.summary
    # two GPUs in one process has several causes: likely; a CPU tensor among them is certain under the script's
    # own traceback (alone, the message does not say whose code left it on the CPU: likely)
    assert found.details["confidence"] == "likely"
    for ident in (
        "torch_native:cat-all-input-tensors-same-device",
        "torch_native:cat-all-input-tensors-same-device-2",
    ):
        own = '  File "/home/me/train.py", line 9, in step\n    x = torch.cat(parts)\n'
        found = explained(own + "RuntimeError: " + template(ident, "cpu", "cuda:0") + "\n")
        assert found.id == "log.device_mismatch" and found.details["confidence"] == "certain"
        assert "cpu and cuda:0" in found.summary


def test_an_extension_op_without_a_cuda_kernel():
    # 207.txt (pytorch/ao#1981): a stale torchao build without its CUDA kernels was loaded
    found = lead("207.txt")
    assert found.id == "log.extension_import" and found.details["confidence"] == "likely"
    assert "torchao::dequantize_tensor_core_tiled_layout" in found.summary and "rebuild" in found.fix
    text = template("torch_native:could-not-run-with-arguments-from-backend", "torchvision::nms", "CUDA")
    found = explained("NotImplementedError: " + text + "\n")
    assert found.id == "log.extension_import" and "import torchvision" in found.fix
    # torch's own ops and the quantized ones (CPU-only by design) are not an extension's build
    for op in ("aten::empty.memory_format", "quantized::linear_dynamic"):
        text = template("torch_native:could-not-run-with-arguments-from-backend", op, "CUDA")
        assert explained("NotImplementedError: " + text + "\n").id == "log.unrecognised"


def test_a_checkpoint_torn_by_concurrent_writes():
    # 219.txt (kakaobrain/scrl#5): every DDP rank wrote the same checkpoint_best.pth
    found = lead("219.txt")
    assert found.id == "log.concurrent_checkpoint_write" and found.details["confidence"] == "likely"
    assert "main process" in found.fix and "log.checkpoint_truncated" in found.details["alternatives"]
    text = "RuntimeError: " + template(
        "torch_native:pytorchstreamreader-failed-reading-zip-archive", "failed finding central directory"
    )
    assert explained(text + "\n").id == "log.concurrent_checkpoint_write"
    # two ranks in the log: the concurrent write is the reading
    ranked = "".join(f"[rank{r}]: {text}\n" for r in (0, 1))
    assert explained(ranked).details["confidence"] == "certain"


def test_a_dataloader_given_a_sampler_and_shuffle():
    # 235.txt (AgatheSenellart/MultiVae#33): shuffle=True hard-coded next to a DistributedSampler
    found = lead("235.txt")
    assert found.id == "log.dataloader_sampler_shuffle" and found.details["confidence"] == "certain"
    assert "shuffle=False" in found.fix and "set_epoch" in found.fix
    # the batch_sampler check is another message
    text = template("torch:batch-sampler-option-is-mutually-exclusive")
    assert explained("ValueError: " + text + "\n").id != "log.dataloader_sampler_shuffle"


def test_dataparallel_cannot_gather_the_output():
    # 211.txt (pytorch/pytorch#14329): forward returned a torch.distributions object
    found = lead("211.txt")
    assert found.id == "log.dataparallel_output" and found.details["confidence"] == "likely"
    assert "DistributedDataParallel" in found.fix
    # 214.txt (allenai/longformer#128): gather_map in the log, a Lightning release's dp bug named beside
    found = lead("214.txt")
    assert (
        found.id == "log.dataparallel_output" and "log.library_version_bug" in found.details["alternatives"]
    )
    assert "pytorch-lightning" in found.fix
    # zip() over a non-iterable anywhere else is not DataParallel's
    assert explained(
        "TypeError: " + template("system:zip-argument-must-support-iteration", "1") + "\n"
    ).id == ("log.unrecognised")


def test_unequal_gpus_then_nccl_fails():
    # 227.txt (HobbitLong/SupContrast#96): DataParallel's imbalance warning, then NCCL's unhandled cuda error
    found = lead("227.txt")
    assert found.id == "log.gpu_selection" and found.details["confidence"] == "likely"
    assert "GPU 4" in found.summary and "CUDA_VISIBLE_DEVICES" in found.fix
    # the warning alone is not a failure: since session 38 (T56) it says what the imbalance does (the run is held
    # back to the slowest GPU), only likely, and as a warning, not a failure (a run that went on)
    warning = (
        "UserWarning: \n    " + template("torch_native:dataparallel-imbalance-between-gpus", "1", "0") + "\n"
    )
    alone = explained(warning + "epoch 1 loss 0.31\n")
    assert (alone.id, alone.status, alone.details["confidence"]) == ("log.mismatched_gpus", "warn", "likely")


def test_a_rendezvous_store_on_port_0():
    # 206.txt (NVIDIA-NeMo/Run#292): the launcher's rendezvous config left the endpoint without a port
    found = lead("206.txt")
    assert found.id == "log.launch_command" and found.details["confidence"] == "certain"
    assert "rdzv" in found.fix
    # the same retry on a real port is a store not up yet, not a malformed command
    line = "[W socket.cpp:872] [c10d] " + template(
        "torch_cpp:no-socket-on-is-listening-yet", "node1", "29500"
    )
    assert explained(line + "\n").id != "log.launch_command"


@pytest.mark.parametrize(
    "line",
    [
        # 215.txt (zjysteven/lmms-finetune#64): the Trainer calling optimizer.train() on ZeRO-3's optimizer
        (CORPUS / "215.txt").read_text(),
        "AttributeError: 'DeepSpeedZeroOptimizer' object has no attribute 'ipg_index'\n",
        "AttributeError: 'DeepSpeedEngine' object has no attribute 'get_global_grad_norm'\n",
    ],
)
def test_an_attribute_deepspeeds_objects_lack_is_a_version_pair(line):
    found = explained(line)
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "accelerate" in found.fix and "log.library_version_bug" in found.details["alternatives"]


def test_an_attribute_other_objects_lack_is_not_a_version():
    assert explained("AttributeError: 'Trainer' object has no attribute 'foo'\n").id == "log.unrecognised"
    # cpu_adam's missing op is its failed build, not a version pair
    found = explained("AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'\n")
    assert found.id == "log.cuda_build"


def test_deepspeeds_no_slot_on_localhost_names_its_cuda_visible_devices_handling():
    # 237.txt (deepspeedai/DeepSpeed#5818): CUDA_VISIBLE_DEVICES=0,2 turned into --include localhost:0,2
    found = lead("237.txt")
    assert found.id == "log.launch_command" and found.details["confidence"] == "likely"
    assert "log.library_version_bug" in found.details["alternatives"] and "--include" in found.fix
    # a host of the hostfile: the user's own --include, certain
    found = explained("ValueError: No slot '4' specified on host 'worker-1'\n")
    assert found.details["confidence"] == "certain" and not found.details.get("alternatives")


def test_cpu_adam_names_curand():
    # 209.txt (LAION-AI/Open-Assistant#2029): a CUDA install without curand for cpu_adam's link
    found = lead("209.txt")
    assert found.id == "log.cuda_build" and "curand" in found.fix


def test_a_message_retyped_with_typographic_quotes():
    # 228.txt (lsdefine/simple_GRPO#20): the poster's own line, quotes as a word processor writes them
    found = lead("228.txt")
    assert found.id == "log.cuda_build" and "cpu_adam" in found.summary
    curly = "RuntimeError: \u2018DeepSpeedCPUAdam\u2019 object has no attribute \u2018ds_opt_adam\u2019\n"
    assert explained(curly).id == explained(curly.replace("\u2018", "'").replace("\u2019", "'")).id


def test_no_nccl_in_torch_on_linux_says_reinstall():
    # 231.txt (AI-secure/InfoBERT#3): reinstalling PyTorch with conda fixed it
    found = lead("231.txt")
    assert found.id == "log.backend_unavailable" and "reinstall" in found.fix
