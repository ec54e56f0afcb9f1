"""Classes of the train half's misses, fourth round (helper T48, issue 19).

- aten's "Cannot copy out of meta tensor; no data!" where the log shows a 4-bit (QLoRA) model and DeepSpeed ZeRO-3:
  QLoRA under ZeRO-3 before the releases that shard 4-bit weights (train 4970.txt, 2U1/Qwen-VL-Series-Finetune#7),
  likely; the message with only one of the two stays the plain meta-weights reading;
- the out-of-memory fix for torch 1.x-2.0's wording (reserved and allocated, no "unallocated"): what the numbers
  show, memory reserved and not allocated beside the request, read as likely fragmentation, not as a certainty.
"""

from __future__ import annotations

from explaining import explained, lead, leads_with, read


def test_qlora_under_zero3_read_from_the_filers_line():
    # train 4970.txt: "When I use deepspeed zero3 with Qlora for sft, I get an error like
    # "[rank2]: NotImplementedError: Cannot copy out of meta tensor; no data!""
    found = read("4970.txt", "library_option_conflict", "likely")
    assert "QLoRA under DeepSpeed ZeRO-3" in found.summary, found.summary
    assert "ZeRO-2" in found.fix and "bnb_4bit_quant_storage" in found.fix, found.fix
    assert "log.meta_weights_not_loaded" in found.details.get("alternatives", []), found.details


def test_qlora_under_zero3_from_the_configs_the_run_printed():
    # the two facts on lines of their own: accelerate's DeepSpeed config and the model config's quantization block
    leads_with(
        "- deepspeed_config: {'zero3_init_flag': True, 'zero_stage': 3}\n"
        '  "quantization_config": {\n'
        '    "load_in_4bit": true,\n'
        '    "bnb_4bit_quant_type": "nf4",\n'
        "Traceback (most recent call last):\n"
        '  File "/home/ana/sft/train.py", line 88, in <module>\n'
        "    model = AutoModelForCausalLM.from_pretrained(path, quantization_config=bnb_config)\n"
        "NotImplementedError: Cannot copy out of meta tensor; no data!\n",
        "library_option_conflict",
        "likely",
        ["ZeRO-3", "ZeRO-2"],
    )


def test_the_meta_copy_without_zero3_stays_a_weight_never_loaded():
    # near miss: QLoRA named but no ZeRO-3 (a device_map'd 4-bit model moved with .to()): not this reading
    found = explained(
        "loading the QLoRA base model with device_map='auto'\n"
        "NotImplementedError: Cannot copy out of meta tensor; no data!\n"
    )
    assert found.id == "log.meta_weights_not_loaded", found.summary
    # and ZeRO-3 without a 4-bit model, nor a load_in_4bit that is off
    found = explained(
        "zero_stage: 3\nload_in_4bit: False\nNotImplementedError: Cannot copy out of meta tensor; no data!\n"
    )
    assert found.id == "log.meta_weights_not_loaded", found.summary


def test_torch_1x_out_of_memory_with_reserved_memory_unused_is_likely_fragmentation():
    # torch 1.x-2.0's wording: about 100 MiB reserved and not allocated, a 20 MiB request
    found = explained(
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; "
        "9.50 GiB already allocated; 5.00 MiB free; 9.60 GiB reserved in total by PyTorch)\n"
    )
    assert found.id == "log.cuda_oom", found.summary
    assert "not a lack of memory" not in found.fix and "much more than it uses" not in found.fix, found.fix
    assert "This is likely fragmentation: 102.40 MiB is reserved by PyTorch but not allocated" in found.fix, (
        found.fix
    )
    assert (
        "9.60 GiB reserved, 9.50 GiB allocated" in found.fix
        and "more than the 20.00 MiB request" in found.fix
    )
    assert "expandable_segments:True" in found.fix and "max_split_size_mb" in found.fix, found.fix


def test_torch_2_1s_unallocated_wording_with_free_memory_beside_it():
    # torch 2.1+: "reserved by PyTorch but unallocated" smaller than the request, with the free memory it holds it
    found = explained(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 77.93 GiB memory in "
        "use. Of the allocated memory 76.50 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but "
        "unallocated.\n"
    )
    assert found.id == "log.cuda_oom", found.summary
    assert (
        "This is likely fragmentation: 1.00 GiB is reserved by PyTorch but unallocated, which with the 1.20 GiB free "
        "would hold the 2.00 GiB request" in found.fix
    ), found.fix


def test_a_shortage_with_little_reserved_unused_is_not_called_fragmentation():
    # near miss: 2 MiB reserved unused for a 512 MiB request, nothing free: no fragmentation reading
    found = explained(
        "RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 10.76 GiB total capacity; "
        "9.50 GiB already allocated; 5.00 MiB free; 9.50 GiB reserved in total by PyTorch)\n"
    )
    assert found.id == "log.cuda_oom" and "ragmentation" not in found.fix, found.fix


def test_torch_1x_same_device_argument_check_reads_as_tensors_on_different_devices():
    # train/5026.txt (espnet/espnet#4031: a replica on GPU 1 reaching a weight of GPU 0's), aten's checkSameGPU
    found = lead("5026.txt")
    assert found.id == "log.device_mismatch"
    # the same check with its positional wording (torch 1.x conv): "argument #1 'input'" against "#2 'weight'"
    other = explained(
        "RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 "
        "'weight'; but device 1 does not equal 0 (while checking arguments for cudnn_convolution)\n"
    )
    assert other.id == "log.device_mismatch"
