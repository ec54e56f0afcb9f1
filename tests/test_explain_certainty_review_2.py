"""The certainty review's second part (helper V7, issue 19): recognisers that spoke with certainty on a line their
source prints for more than one cause, read against that source. Each test gives the line as its source prints
it, alone (likely, the other reading named), and beside the fact that rules the other reading out (certain).

- accelerate's "Cannot apply desired operation due to shape mismatches" (``accelerate/utils/operations.py``
  ``verify_operation``) is raised after every rank joined one ``gather_object`` of the shapes: the ranks' tensors
  differ (``gathered_shapes_differ``), not their collectives. The exchange carries the shapes only, so a rank in
  ``gather`` and another in ``reduce`` print it too: likely alone, certain where two ranks name the same
  operation or torchdoctor's own debug mode (which compares the operation first) adds its call sites.
"""

from __future__ import annotations

import pytest
from explaining import certain, explained, likely_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

SHAPES = (
    "accelerate.utils.operations.DistributedOperationException: Cannot apply desired operation due to shape "
    "mismatches. All shapes across devices must be valid.\n\nOperation: `accelerate.utils.operations.gather`\n"
    "Input shapes:\n  - Process 0: [8, 112]\n  - Process 1: [8, 97]\n"
)


def test_accelerates_shape_check_is_tensors_that_differ_not_collectives_that_differ():
    found = likely_with(SHAPES, "gathered_shapes_differ", "log.rank_divergence")
    assert "pad_across_processes" in found.fix and "use_gather_object=True" in found.fix
    assert "Process 0: [8, 112], Process 1: [8, 97]" in found.summary
    both = "".join(f"[rank{r}]: " + line + "\n" for r in (0, 1) for line in SHAPES.splitlines())
    certain(both, "gathered_shapes_differ")
    sites = SHAPES + "Called from:\n  - Process 0-1: /home/ana/project/eval.py:61 in evaluate\n"
    certain(sites, "gathered_shapes_differ")


def test_a_mismatch_of_operations_stays_rank_divergence():
    # the near miss: torchdoctor's own message for ranks in different operations is not a shape mismatch
    text = (
        "Cannot apply desired operation because the processes called different operations at the same point. "
        "All processes must call the same collectives in the same order.\n\nOperations:\n"
        "  - Process 0: `gather`\n  - Process 1: `reduce`\n"
    )
    assert explained(text).id != "log.gathered_shapes_differ"
    assert (
        explained("Cannot apply desired operation due to device mismatches.\n").id
        != "log.gathered_shapes_differ"
    )


BATCH = (
    "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
    "gradient_acc_step * world_size {} != {} * {} * {}\n"
)


def test_a_batch_a_whole_factor_above_deepspeeds_world_is_also_the_trainers_auto_fill():
    # deepspeed/runtime/config.py: the world size is the data-parallel one (divided by sequence_parallel_size, or
    # mpu's); transformers' trainer_config_process and accelerate before 1.12 fill "auto" from every process
    found = likely_with(BATCH.format(64, 4, 2, "4.0"), "deepspeed_config_mismatch", "log.library_version_bug")
    assert "sequence_parallel_size" in found.fix
    # not a whole factor: no fill multiplies to it, the config's own numbers are wrong
    certain(BATCH.format(30, 4, 2, 4), "deepspeed_config_mismatch")
    # at world size 1 the launcher's reading is named, not the fill's
    found = likely_with(
        BATCH.format(64, 4, 2, 1), "deepspeed_config_mismatch", "log.not_launched_distributed"
    )
    assert "log.library_version_bug" not in found.details["alternatives"]


TF32 = "ValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7\n"
FSDP_CPU = (
    "ValueError: The strategy `fsdp` requires a GPU accelerator, but received `accelerator='cpu'`. Please set "
    "`accelerator='cuda'`, `accelerator='gpu'`, or pass a `CUDAAccelerator()` instance to use FSDP.\n"
)


def test_refusals_a_machine_without_a_visible_gpu_prints_too_name_it():
    # transformers' is_torch_tf32_available() is False without torch.cuda.is_available() or with a CPU / ROCm build;
    # Lightning resolves accelerator="auto" to the CPU before it refuses FSDP there
    found = likely_with(TF32, "trainer_arguments", "log.cuda_unavailable")
    assert "torch.version.cuda" in found.fix
    found = certain("|   0  Tesla V100-SXM2-16GB           On  |\n" + TF32, "trainer_arguments")
    assert "drop --tf32" in found.fix
    likely_with(FSDP_CPU, "trainer_arguments", "log.cuda_unavailable")
    # the near misses: an Ampere GPU named does not confirm a pre-Ampere one; a TPU asked for is the argument
    likely_with("GPU 0: NVIDIA A100-SXM4-80GB\n" + TF32, "trainer_arguments", "log.cuda_unavailable")
    certain(FSDP_CPU.replace("'cpu'", "'tpu'"), "trainer_arguments")
    certain("ValueError: Trainer: training requires a train_dataset.\n", "trainer_arguments")


def test_an_integer_world_keeps_the_batch_check_certain():
    # the near miss: 64 = 4 x 2 x 4 x 2 with an integer world is the processes' own count (or Megatron's mpu), not
    # the sequence-parallel division, so the config's numbers are the user's
    certain(BATCH.format(64, 4, 2, 4), "deepspeed_config_mismatch")


NO_LOSS = (
    "ValueError: The model did not return a loss from the inputs, only the following keys: "
    "last_hidden_state,past_key_values. For reference, the inputs it received are {}.\n"
)


def test_a_model_that_got_labels_and_returned_no_loss_is_the_models_class_not_the_batch():
    # transformers/trainer.py compute_loss lists the inputs: labels among them rule the batch's reading out; the
    # model's class or its library's release is then what failed, only likely (CERT10: test_explain_certainty_cert10)
    found = likely_with(
        NO_LOSS.format("input_ids,attention_mask,labels"), "trainer_arguments", "log.library_version_bug"
    )
    assert "AutoModelForCausalLM" in found.fix and "collator" not in found.fix
    found = certain(NO_LOSS.format("input_ids,attention_mask"), "trainer_arguments")
    assert "collator" in found.fix
    # the near miss: a column merely named like it (label_ids) is not the labels the model takes
    assert "collator" in explained(NO_LOSS.format("input_ids,label_ids")).fix


NO_GROUP = "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.\n"
SYNCBN_FORWARD = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/project/train.py", line 88, in <module>\n'
    "    out = model(x)\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/nn/modules/batchnorm.py", line 731, in forward\n'
    "    world_size = torch.distributed.get_world_size(process_group)\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 711, in '
    "get_world_size\n"
    "    return _get_group_size(group)\n"
)


def test_no_process_group_beside_a_syncbn_is_syncbns_only_where_its_forward_asked():
    # torch/nn/modules/batchnorm.py: 2.x checks torch.distributed.is_initialized() before it asks for the world
    # size (and runs as BatchNorm without a group); 1.x and apex asked in SyncBatchNorm.forward
    config = "norm_cfg = dict(type='SyncBN', requires_grad=True)\n"
    found = likely_with(config + NO_GROUP, "syncbn_misuse", "log.not_launched_distributed")
    assert "torchrun" in found.fix
    certain(SYNCBN_FORWARD + NO_GROUP, "syncbn_misuse")
    certain(config + SYNCBN_FORWARD + NO_GROUP, "syncbn_misuse")
    # SyncBN's own GPU-only refusal has one cause
    certain("ValueError: SyncBatchNorm expected input tensor to be on GPU\n", "syncbn_misuse")
    # the near miss: without SyncBN anywhere, no process group is a run no launcher started
    assert explained(NO_GROUP).id == "log.not_launched_distributed"


def test_the_cuda_runtimes_out_of_memory_is_likely_the_gpu_other_processes_filled():
    # C10_CUDA_CHECK's "CUDA error: out of memory" is cudaErrorMemoryAllocation outside the caching allocator
    # (which words its own "CUDA out of memory. Tried to allocate"): a context on a GPU others already filled
    runtime = "RuntimeError: CUDA error: out of memory\n"
    found = likely_with(runtime, "cuda_oom", "log.gpu_selection")
    assert "set_device" in found.fix
    # the near miss: the allocator's own message, one process on the GPU, keeps its certainty
    allocator = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 1.20 GiB is free. Process 3112 has 77.90 GiB memory in use.\n"
    )
    certain(allocator, "cuda_oom")
    certain(allocator + runtime, "cuda_oom")
