"""Catalog templates of FSDP, FSDP2, DTensor, distributed checkpoints and loading weights mapped to kinds from
their sources: each line as its source prints it (values filled in), and near misses (a warning of the same words,
a healthy run's line, a rank that is a victim of another's failure) that must not be named with that kind or lead.

The sources: torch/distributed/fsdp (_fully_shard/_fsdp_param_group.py, _fsdp_state.py, _fsdp_init.py,
_fully_shard.py; _flat_param.py, _wrap_utils.py, _optim_utils.py, _init_utils.py, _state_dict_utils.py,
_unshard_param_utils.py), torch/distributed/tensor (_dispatch.py, _op_schema.py, _ops, _sharding_prop.py, _api.py),
torch/distributed/checkpoint/state_dict_saver.py, torch/distributed/_shard/sharded_tensor/api.py,
torch/serialization.py, safetensors' Python binding, transformers' modeling_utils.py (4.x), accelerate's
utils/modeling.py and utils/fsdp_utils.py.
"""

from __future__ import annotations

import io

import pytest
from explaining import names_its_kind

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def findings(text: str):
    """Every finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))


def lead(text: str):
    return findings(text)[0]


# (line as printed, kind, confidence, words the summary or fix must hold)
NAMED = [
    # FSDP2 lazy init: a model built on the meta device and never materialized
    (
        "RuntimeError: FSDP parameters should be materialized from meta device before training, but the following "
        "were still on meta device: ['tok_embeddings.weight', 'layers.0.attention.wq.weight']\nFor example, call "
        "module.to_empty(device) to materialize to device and call module.reset_parameters() on each module to "
        "initialize values.\n",
        "wrapper_usage",
        "certain",
        ["to_empty", "reset_parameters"],
    ),
    (
        "RuntimeError: FSDP parameters should be materialized on CPU when enabling CPU offloading. For example, load "
        'a CPU state dict or call module.to_empty(device="cpu"). Found following parameters on non-CPU device: '
        "[('layers.0.weight', device(type='cuda', index=0))]\n",
        "wrapper_usage",
        "certain",
        ["CPUOffloadPolicy"],
    ),
    (
        "ValueError: Parameter 'lm_head.weight' is shared with a parameter already managed by another FSDP group. "
        "For shared/tied parameters, use fully_shard([module_a, module_b]) to place them in the same FSDP group.\n",
        "wrapper_usage",
        "certain",
        ["tied", "fully_shard([model.embed_tokens, model.lm_head])"],
    ),
    (
        "AssertionError: Must flatten tensors on the same device but got both cuda:0 and cpu\n",
        "wrapper_usage",
        "certain",
        ["device_id"],
    ),
    (
        "ValueError: FSDP auto wrapping requires modules to not already have FSDP applied but found "
        "model.layers.0 in\nFullyShardedDataParallel(\n",
        "wrapper_usage",
        "certain",
        ["once"],
    ),
    (
        "ValueError: FSDP expects uniform original parameter dtype but got {torch.float32, torch.bfloat16}\n",
        "fsdp_wrap_config",
        "certain",
        ["MixedPrecisionPolicy"],
    ),
    # FSDP / FSDP2 / DCP settings that do not go together
    (
        "ValueError: reshard_after_forward should be a bool, got <ShardingStrategy.FULL_SHARD: 1>\n",
        "fsdp_config_mismatch",
        "certain",
        ["reshard_after_forward=True"],
    ),
    (
        "RuntimeError: Found state_dict_type LOCAL_STATE_DICT. DeviceMesh is not compatible with LOCAL_STATE_DICT. "
        "Please set state_dict_type to SHARDED_STATE_DICT to get DTensor state_dict.\n",
        "fsdp_config_mismatch",
        "certain",
        ["SHARDED_STATE_DICT"],
    ),
    (
        "AssertionError: A CPU backend must be enabled for async save; try initializing process group with "
        "'cpu:gloo,cuda:nccl'\n",
        "fsdp_config_mismatch",
        "certain",
        ["cpu:gloo,cuda:nccl"],
    ),
    (
        "NotImplementedError: offload_to_cpu=True and NO_SHARD is not supported yet\n",
        "fsdp_config_mismatch",
        "certain",
        ["summon_full_params"],
    ),
    # FSDP's own state-dict checks: a state dict of another state_dict_type or wrapping
    (
        "RuntimeError: FSDP assumes _fsdp_wrapped_module.flat_param is in the state_dict but the state_dict only "
        "has odict_keys(['model.embed_tokens.weight', 'model.norm.weight']). prefix=_fsdp_wrapped_module., "
        "module_name=, param_name=flat_param rank=0.\n",
        "state_dict_keys",
        "likely",
        ["state_dict_type"],
    ),
    (
        "RuntimeError: Parameter 'model.layers.0.mlp.up_proj.weight' found in sharded model state dict but missing "
        "from full state dict. Full state dict has 290 keys, sharded has 291 keys.\n",
        "state_dict_keys",
        "likely",
        ["FULL_STATE_DICT"],
    ),
    # checkpoints cut for another world size
    (
        "RuntimeError: Global world size at save time was 8, but at load time was 4\n",
        "checkpoint_world_size",
        "certain",
        ["SHARDED_STATE_DICT"],
    ),
    (
        "AssertionError: Local shard size = torch.Size([1048576]) and the tensor in the state_dict is "
        "torch.Size([2097152]).\n",
        "checkpoint_world_size",
        "likely",
        ["number of GPUs"],
    ),
    # the HF Trainer (before 4.16) restoring one CUDA RNG state per GPU saved, on fewer GPUs
    (
        "Traceback (most recent call last):\n"
        '  File "run_clm.py", line 540, in <module>\n'
        "    train_result = trainer.train(resume_from_checkpoint=checkpoint)\n"
        '  File "/usr/local/lib/python3.9/site-packages/transformers/trainer.py", line 1312, in train\n'
        "    self._load_rng_state(resume_from_checkpoint)\n"
        '  File "/usr/local/lib/python3.9/site-packages/transformers/trainer.py", line 1545, in _load_rng_state\n'
        '    torch.cuda.random.set_rng_state_all(checkpoint_rng_state["cuda"])\n'
        '  File "/usr/local/lib/python3.9/site-packages/torch/cuda/random.py", line 73, in set_rng_state_all\n'
        "    set_rng_state(state, i)\n"
        '  File "/usr/local/lib/python3.9/site-packages/torch/cuda/random.py", line 62, in cb\n'
        "    default_generator = torch.cuda.default_generators[idx]\n"
        "IndexError: tuple index out of range\n",
        "checkpoint_world_size",
        "likely",
        ["rng_state", "number of GPUs", "4.16"],
    ),
    # an FSDP1 model's parameter used while sharded: generate() outside the root forward, a freed storage
    (
        "Traceback (most recent call last):\n"
        '  File "/workspace/eval.py", line 61, in <module>\n'
        "    out = model.module.generate(**batch, max_new_tokens=32)\n"
        '  File "/usr/local/lib/python3.10/site-packages/torch/nn/functional.py", line 2264, in embedding\n'
        "    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)\n"
        "RuntimeError: 'weight' must be 2-D\n"
        "model is FullyShardedDataParallel(\n",
        "fsdp_params_outside_forward",
        "likely",
        ["summon_full_params", "use_orig_params"],
    ),
    (
        "[rank1]: RuntimeError: setStorage: sizes [4096, 4096], strides [4096, 1], storage offset 0, and itemsize 2 "
        "requiring a storage size of 33554432 are out of bounds for storage of size 0\n"
        '[rank1]:   File "/opt/conda/lib/python3.11/site-packages/torch/distributed/fsdp/_flat_param.py", line '
        "1502, in _use_unsharded_views\n",
        "fsdp_params_outside_forward",
        "likely",
        ["sharded"],
    ),
    # DTensor
    (
        "RuntimeError: aten._foreach_norm.Scalar: got mixed torch.Tensor and DTensor, need to convert all "
        "torch.Tensor to DTensor before calling distributed operators! Please see "
        "https://docs.pytorch.org/docs/main/distributed.tensor.html#mixed-tensor-and-dtensor-operations for more "
        "details.\n",
        "dtensor_mixed_operands",
        "likely",
        ["from_local", "max_grad_norm"],
    ),
    (
        "RuntimeError: DTensor does not support cross-mesh operation on aten.mul.Tensor! Got meshes: "
        "DeviceMesh('cuda', [0, 1], mesh_dim_names=('tp',)) DeviceMesh('cuda', [0, 1, 2, 3], "
        "mesh_dim_names=('dp',)). Please make sure all the arguments have the same DeviceMesh.\n",
        "dtensor_mixed_operands",
        "likely",
        ["different device meshes"],
    ),
    (
        "NotImplementedError: Operator aten._scaled_dot_product_cudnn_attention.default does not have a sharding "
        "strategy registered.\n",
        "dtensor_unsupported_op",
        "certain",
        ["aten._scaled_dot_product_cudnn_attention.default", "to_local"],
    ),
    (
        "ValueError: `placements` must have the same length as `device_mesh.ndim`! Found placements length: 1, "
        "and device_mesh.ndim: 2.\n",
        "device_mesh_config",
        "certain",
        ["one placement per mesh dimension"],
    ),
    # torch.load under weights_only=True (the default since 2.6)
    (
        "RuntimeError: Can not safely load weights when explicit pickle_module is specified\n",
        "weights_only_load",
        "certain",
        ["weights_only=False", "pickle_module"],
    ),
    (
        "RuntimeError: Cannot use ``weights_only=True`` with TorchScript archives passed to ``torch.load``. In "
        "PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
        "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
        "arbitrary code execution. Do it only if you got the file from a trusted source.\n",
        "weights_only_load",
        "certain",
        ["torch.jit.load"],
    ),
    # files that are not (whole) checkpoints
    (
        "Traceback (most recent call last):\n"
        '  File "convert.py", line 12, in <module>\n'
        "    state = safetensors.torch.load_file(path)\n"
        "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge\n",
        "checkpoint_file_invalid",
        "certain",
        ["git lfs pull", "--force-download"],
    ),
    (
        "safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer\n",
        "checkpoint_file_invalid",
        "certain",
        ["cut short"],
    ),
    (
        "OSError: You seem to have cloned a repository without having git-lfs installed. Please install git-lfs and "
        "run `git lfs install` followed by `git lfs pull` in the folder you cloned.\n",
        "checkpoint_file_invalid",
        "certain",
        ["git lfs pull"],
    ),
    (
        '  File "/usr/lib/python3/dist-packages/torch/serialization.py", line 1030, in _legacy_load\n'
        '    raise RuntimeError("Invalid magic number; corrupt file?")\n'
        "RuntimeError: Invalid magic number; corrupt file?\n",
        "checkpoint_file_invalid",
        "certain",
        ["pickle.load"],
    ),
    # a weight left on the meta device, moved or loaded later (aten's copy_, accelerate's set_module_tensor_to_device)
    (
        "NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead "
        "of torch.nn.Module.to() when moving module from meta to a different device.\n",
        "meta_weights_not_loaded",
        "likely",
        ["device_map", "to_empty"],
    ),
    (
        "ValueError: lm_head.weight is on the meta device, we need a `value` to put in on 0.\n",
        "meta_weights_not_loaded",
        "likely",
        ["lm_head.weight", "fsdp_sync_module_states"],
    ),
    # torch.distributed.checkpoint's set_state_dict: a trainable parameter the optimizer checkpoint has no state for
    (
        "RuntimeError: Missing optimizer state for parameter 'model.layers.0.self_attn.q_proj.lora_A.default.weight' "
        "in checkpoint. The parameter requires gradients but has no saved optimizer state. To load anyway, use "
        "StateDictOptions(strict=False).\n",
        "optimizer_group_mismatch",
        "likely",
        ["strict=False", "frozen"],
    ),
    # dcp.load's FileSystemReader: a folder without .metadata
    (
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/checkpoint/filesystem.py", line 643, in '
        "read_metadata\n"
        '    with self.fs.create_stream(path, "rb") as metadata_file:\n'
        "FileNotFoundError: [Errno 2] No such file or directory: '/checkpoints/step_1000/.metadata'\n",
        "checkpoint_path",
        "likely",
        [".distcp", "/checkpoints/step_1000"],
    ),
    # from_pretrained's and accelerate's refusals of a device_map
    (
        "ValueError: The current `device_map` had weights offloaded to the disk. Please provide an `offload_folder` "
        "for them. Alternatively, make sure you have `safetensors` installed if the model you are using offers the "
        "weights in this format.\n",
        "trainer_arguments",
        "certain",
        ["offload_folder="],
    ),
    (
        "ValueError: The device_map provided does not give any device for the following parameters: "
        "model.norm.weight, lm_head.weight\n",
        "trainer_arguments",
        "certain",
        ["device_map='auto'"],
    ),
    # torch.load of an empty or cut-short file, of a whole model whose class the loading script lacks, of a zip
    # record that does not read
    (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        "    ckpt = torch.load(args.resume, map_location='cpu')\n"
        '  File "/opt/conda/lib/python3.8/site-packages/torch/serialization.py", line 795, in load\n'
        "    return _legacy_load(opened_file, map_location, pickle_module, **pickle_load_args)\n"
        '  File "/opt/conda/lib/python3.8/site-packages/torch/serialization.py", line 1002, in _legacy_load\n'
        "    magic_number = pickle_module.load(f, **pickle_load_args)\n"
        "EOFError: Ran out of input\n",
        "checkpoint_truncated",
        "certain",
        ["barrier", "0-byte"],
    ),
    (
        "Traceback (most recent call last):\n"
        '  File "eval.py", line 14, in <module>\n'
        "    model = torch.load('checkpoints/model_best.pth')\n"
        '  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 1014, in load\n'
        "    return _load(opened_zipfile,\n"
        '  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 1422, in _load\n'
        "    result = unpickler.load()\n"
        '  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 1415, in find_class\n'
        "    return super().find_class(mod_name, name)\n"
        "AttributeError: Can't get attribute 'UNet' on <module '__main__' from 'eval.py'>\n",
        "checkpoint_class_missing",
        "certain",
        ["state_dict", "__main__.UNet"],
    ),
    (
        "RuntimeError: PytorchStreamReader failed reading file data/14: invalid header or archive is corrupted\n",
        "concurrent_checkpoint_write",
        "likely",
        ["rank 0"],
    ),
    # transformers 4.x wrapping torch.load's error on a weights file: likely alone; the error above it leads
    (
        "OSError: Unable to load weights from pytorch checkpoint file for 'models/bert/pytorch_model.bin' at "
        "'models/bert/pytorch_model.bin'. If you tried to load a PyTorch model from a TF 2.0 checkpoint, please set "
        "from_tf=True.\n",
        "checkpoint_file_invalid",
        "likely",
        ["download it again", "torch older than 1.6"],
    ),
    # dcp.save into a folder that holds a checkpoint, overwrite=False
    (
        "RuntimeError: Checkpoint already exists and self.overwrite=False.\n",
        "checkpoint_path",
        "certain",
        ["overwrite=True"],
    ),
    # PEFT given a folder without an adapter (a base or merged model, the run's parent folder)
    (
        "ValueError: Can't find 'adapter_config.json' at 'outputs/llama-7b-merged'\n",
        "checkpoint_path",
        "likely",
        ["adapter_model.safetensors", "outputs/llama-7b-merged"],
    ),
    # accelerate's FSDP and big-model loading: a folder with two indexes, merge-weights above optimizer_0, a full
    # state dict loaded without sync_module_states
    (
        "ValueError: /data/llama-7b containing more than one `.index.json` file, delete the irrelevant ones.\n",
        "checkpoint_path",
        "certain",
        ["delete"],
    ),
    (
        "ValueError: Checkpoint /out/step_500 does not exist. However, a potential optimizer checkpoint directory "
        "exists.Please try passing in /out/step_500/optimizer_0 instead.\n",
        "checkpoint_path",
        "certain",
        ["/out/step_500/optimizer_0"],
    ),
    (
        "ValueError: Set the `sync_module_states` flag to `True` so that model states are synced across processes "
        "when initializing FSDP object\n",
        "fsdp_config_mismatch",
        "certain",
        ["fsdp_sync_module_states: true"],
    ),
    # safetensors' save (save_pretrained's, the Trainer's): tied weights, a non-contiguous tensor
    (
        "RuntimeError: \n"
        "            Some tensors share memory, this will lead to duplicate memory on disk and potential differences "
        "when loading them again: [{'lm_head.weight', 'model.embed_tokens.weight'}].\n"
        "            A potential way to correctly save your model is to use `save_model`.\n"
        "            More information at https://huggingface.co/docs/safetensors/torch_shared_tensors\n",
        "safetensors_save_refused",
        "certain",
        ["save_safetensors=False", "_tied_weights_keys", "lm_head.weight"],
    ),
    (
        "ValueError: You are trying to save a non contiguous tensor: `encoder.layer.0.attention.self.query.weight` "
        "which is not allowed. It either means you are trying to save tensors which are reference of each other in "
        "which case it's recommended to save only the full tensors, and reslice at load time, or simply call "
        "`.contiguous()` on your tensor to pack it before saving.\n",
        "safetensors_save_refused",
        "certain",
        [".contiguous()"],
    ),
    (
        "RuntimeError: The weights trying to be saved contained shared tensors [{'lm_head.weight', "
        "'transformer.wte.weight'}] which are not properly defined. We found all the potential target tied weights "
        "keys to be: ['lm_head.weight'].\nThis can also just mean that the module's tied weight keys are wrong vs "
        "the actual tied weights in the model.\n",
        "safetensors_save_refused",
        "certain",
        ["_tied_weights_keys"],
    ),
    # accelerate's set_module_tensor_to_device: a checkpoint's tensor of another shape
    (
        'ValueError: Trying to set a tensor of shape torch.Size([32000, 4096]) in "weight" (which has shape '
        "torch.Size([32001, 4096])), this looks incorrect.\n",
        "model_checkpoint_mismatch",
        "likely",
        ["config"],
    ),
]


@pytest.mark.parametrize(("text", "kind", "confidence", "words"), NAMED)
def test_source_line_names_its_kind(text, kind, confidence, words):
    names_its_kind(text, kind, confidence, words)


# (a line that shares an anchor's words but is another message, the kind it must not be named)
NEAR_MISSES = [
    # FSDP's warnings in a healthy run
    (
        "UserWarning: The passed-in `module` is on CPU and will thus have FSDP's sharding initialization run on CPU, "
        "which may be slower than on GPU. We recommend passing in the `device_id` argument for FSDP to move "
        "`module` to GPU for the sharding initialization.\n",
        "wrapper_usage",
    ),
    (
        "UserWarning: reshard_after_forward=1 (int) means resharding parameters to world size 1, instead of "
        "reshard_after_forward=True (bool)\n",
        "fsdp_config_mismatch",
    ),
    (
        "FutureWarning: FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated. Please use APIs, "
        "get_state_dict() and set_state_dict(), which can support different parallelisms, FSDP1, FSDP2, DDP.\n",
        "fsdp_config_mismatch",
    ),
    (
        "UserWarning: FSDP is switching to use `NO_SHARD` instead of ShardingStrategy.FULL_SHARD since the world "
        "size is 1.\n",
        "fsdp_config_mismatch",
    ),
    # DTensor's warnings
    (
        "UserWarning: Found a non-scalar tensor with numel=1 and ndim!=0, we are implicitly creating a replicated "
        "DTensor for it. However, please consider changing it to a scalar tensor or explicitly create a DTensor "
        "under distributed environment.\n",
        "dtensor_mixed_operands",
    ),
    (
        "Dijkstra search exhausted without finding a valid strategy for aten.mm.default on mesh (explored 4096 "
        "combinations); falling back to full expansion\n",
        "dtensor_unsupported_op",
    ),
    # loading warnings a healthy run prints
    (
        "Some weights of the model checkpoint at bert-base-uncased were not used when initializing "
        "BertForSequenceClassification: ['cls.predictions.bias']\n",
        "state_dict_keys",
    ),
    (
        "Some weights of the model checkpoint at bert-base-uncased were not used when initializing "
        "BertForSequenceClassification: ['cls.predictions.bias']\n",
        "model_checkpoint_mismatch",
    ),
    (
        "The safetensors archive passed at model.safetensors does not contain metadata. Make sure to save your model "
        "with the `save_pretrained` method. Defaulting to 'pt' metadata.\n",
        "checkpoint_file_invalid",
    ),
    (
        "UserWarning: Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
        "argument was not explicitly passed to `torch.load`, forcing weights_only=False.\n",
        "weights_only_load",
    ),
    (
        "UserWarning: 'torch.load' received a zip file that looks like a TorchScript archive dispatching to "
        "'torch.jit.load' (call 'torch.jit.load' directly to silence this warning)\n",
        "checkpoint_file_invalid",
    ),
    # torch.load's warning when pickle options meet weights_only=True: the load goes on
    ("UserWarning: pickle_load_args only works if `weights_only=False`.\n", "weights_only_load"),
    # accelerate's warning for a hand-written device_map: the model still loads
    (
        "Tied parameters are on different devices: {'lm_head.weight': 1, 'model.embed_tokens.weight': 0}. Please "
        "modify your custom device map or set `device_map='auto'`.\n",
        "trainer_arguments",
    ),
    # a torch older than 1.6 reading the zip format 1.6 writes: a release, not a file that is no checkpoint
    (
        "RuntimeError: ./weights/best.pth is a zip archive (did you mean to use torch.jit.load()?)\n",
        "checkpoint_file_invalid",
    ),
    # a spawned DataLoader worker (Windows) that read nothing from its parent: a victim, not torch.load's file
    (
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        '  File "C:\\Python39\\lib\\multiprocessing\\spawn.py", line 126, in _main\n'
        "    self = reduction.pickle.load(from_parent)\n"
        "EOFError: Ran out of input\n",
        "checkpoint_truncated",
    ),
    # a class the unpickler cannot find in a data file read with pickle, no torch.load in the log
    (
        "AttributeError: Can't get attribute 'Vocab' on <module '__main__' from 'preprocess.py'>\n",
        "checkpoint_class_missing",
    ),
    # dcp.save's warning before torch 2.5 made overwrite=False the default: the save goes on
    (
        "UserWarning: Detected an existing checkpoint in /ckpt/step_100, overwriting since self.overwrite=True. Past "
        "version 2.5 of PyTorch, `overwrite` will default to False. Set this variable to True to maintain this "
        "functionality or False to raise when an existing checkpoint is found.\n",
        "checkpoint_path",
    ),
    # another library's missing file in the same words (a config of its own), not a PEFT adapter folder
    ("ValueError: Can't find 'config.yaml' at 'runs/exp1'\n", "checkpoint_path"),
    # accelerate's info lines while it saves and loads FSDP checkpoints
    ("Loading Optimizer state from /out/step_500/optimizer_0\n", "checkpoint_path"),
    ("Merging FSDP weights from /out/step_500/pytorch_model_fsdp_0\n", "checkpoint_path"),
    # transformers' warning when it drops a tied duplicate itself: the save goes on
    (
        "Removed shared tensor {'lm_head.weight'} while saving. This should be OK, but check by verifying that you "
        "don't receive any warning while reloading\n",
        "safetensors_save_refused",
    ),
    # the Trainer from 4.16 on warns and resumes without the GPUs' random state
    (
        "Didn't manage to set back the RNG states of the GPU because of the following error:\n tuple index out of "
        "range\nThis won't yield the same results as if the training had not been interrupted.\n",
        "checkpoint_world_size",
    ),
    # an embedding's weight that is not 2-D in a run without FSDP (the Trainer's arguments name fsdp empty)
    (
        "fsdp=[],\nfsdp_config={'min_num_params': 0, 'xla': False},\nRuntimeError: 'weight' must be 2-D\n",
        "fsdp_params_outside_forward",
    ),
    # a ZeRO-3 partition (shape [0]) is not a model of another shape
    (
        'ValueError: Trying to set a tensor of shape torch.Size([4096, 4096]) in "weight" (which has shape '
        "torch.Size([0])), this looks incorrect.\n",
        "model_checkpoint_mismatch",
    ),
]


@pytest.mark.parametrize(("text", "kind"), NEAR_MISSES)
def test_near_miss_is_not_that_kind(text, kind):
    assert f"log.{kind}" not in [f.id for f in findings(text)]


def test_the_failing_rank_leads_over_its_peers_timeout():
    """Rank 0 refuses its meta-device model; rank 1, waiting in the first all-gather, times out: the refusal leads."""
    log = (
        "[rank1]:[E1130 02:41:07.512 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=3, OpType=_ALLGATHER_BASE, NumelIn=1048576, NumelOut=2097152, Timeout(ms)=600000) "
        "ran for 600013 milliseconds before timing out.\n"
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/workspace/train.py", line 88, in <module>\n'
        "[rank0]:     loss = model(batch).sum()\n"
        "[rank0]: RuntimeError: FSDP parameters should be materialized from meta device before training, but the "
        "following were still on meta device: ['output.weight']\n"
    )
    assert lead(log).id == "log.wrapper_usage"


def test_a_dtensor_mix_does_not_lead_over_the_mesh_it_came_from():
    """A mesh that does not fit the run is the cause; the op that later mixes meshes is its consequence."""
    log = (
        "RuntimeError: Mesh should not be bigger than default world size 4, but found 8 ranks!\n"
        "RuntimeError: DTensor does not support cross-mesh operation on aten.add.Tensor! Got meshes: "
        "DeviceMesh('cuda', [0, 1]) DeviceMesh('cuda', [0, 1, 2, 3]). Please make sure all the arguments have the "
        "same DeviceMesh.\n"
    )
    ids = [f.id for f in findings(log)]
    assert ids[0] == "log.device_mesh_config", ids


def test_torch_loads_own_error_leads_over_transformers_wrapper():
    """transformers' "Unable to load weights" wraps what torch.load raised: the torn archive above it leads."""
    log = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.8/site-packages/transformers/modeling_utils.py", line 1205, in from_pretrained\n'
        '    state_dict = torch.load(resolved_archive_file, map_location="cpu")\n'
        '  File "/usr/lib/python3.8/site-packages/torch/serialization.py", line 593, in load\n'
        "    with _open_zipfile_reader(opened_file) as opened_zipfile:\n"
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 10, in <module>\n'
        "    model = AutoModel.from_pretrained('bert-base-uncased')\n"
        "OSError: Unable to load weights from pytorch checkpoint file for '/root/.cache/huggingface/abc.bin' at "
        "'/root/.cache/huggingface/abc.bin'. If you tried to load a PyTorch model from a TF 2.0 checkpoint, please "
        "set from_tf=True.\n"
    )
    assert lead(log).id == "log.concurrent_checkpoint_write"


# nn.Module.load_state_dict listing FSDP1's flat parameters as unexpected (a LOCAL_STATE_DICT, or an FSDP model's
# state_dict() before torch 1.12) while the bare model's own names are missing
def test_flat_parameters_in_a_checkpoint_name_the_local_state_dict_and_the_full_one_to_save():
    found = lead(
        "RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:\n"
        '\tMissing key(s) in state_dict: "model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight".\n'
        '\tUnexpected key(s) in state_dict: "_fsdp_wrapped_module._flat_param", '
        '"_fsdp_wrapped_module.model.layers.0._fsdp_wrapped_module._flat_param".\n'
    )
    assert found.id == "log.state_dict_keys", found.summary
    assert (
        "FSDP's flattened parameters" in found.summary and "_fsdp_wrapped_module._flat_param" in found.summary
    )
    assert "LOCAL_STATE_DICT" in found.fix and "FULL_STATE_DICT" in found.fix


# torch 1.11-2.0's wordings of FSDP checks whose later wording is read (torch_native.tsv rows), and 2.0+'s
# _flat_param.py _p_assert on a flat parameter moved off the CPU: each read as the later wording's kind
@pytest.mark.parametrize(
    ("line", "kind", "words"),
    [
        (
            "AssertionError: Expected param to be on CPU when cpu_offloading is enabled. If CPU offloading is enabled "
            "correctly, you may be accidentally moving the model to CUDA after FSDP initialization.",
            "wrapper_usage",
            "moved off the CPU",
        ),
        (
            "AssertionError: Expects the `FlatParameter` to be on CPU when parameter CPU offloading is enabled, not "
            "cuda:0",
            "wrapper_usage",
            "moved off the CPU",
        ),
        (
            "ValueError: Expected LlamaDecoderLayer() to NOT be FullyShardedDataParallel if using an `auto_wrap_policy`",
            "wrapper_usage",
            "wrapped by FSDP twice",
        ),
        (
            "RuntimeError: FSDP only works with gradients that don't require gradients",
            "wrapper_usage",
            "gradients of gradients",
        ),
        ("ValueError: Integer parameters are unsupported", "fsdp_wrap_config", "integer tensors"),
        ("AssertionError: expects all parameters to have same dtype", "fsdp_wrap_config", "different dtypes"),
        (
            "AssertionError: expects all parameters to have same requires_grad",
            "fsdp_wrap_config",
            "requires_grad",
        ),
        (
            "ValueError: Module has CPU parameters, but sync_module_states=True is specified.This only works for GPU "
            "module, please specify `device_id` argument or move the module to GPU before init.",
            "fsdp_wrap_config",
            "sync_module_states",
        ),
    ],
)
def test_older_torch_wordings_of_fsdp_checks_read_as_their_later_kind(line, kind, words):
    found = lead(line + "\n")
    assert found.id == f"log.{kind}", found.summary
    assert words in found.summary, found.summary


# nn/modules/module.py load_state_dict's two lists, filled the way torch fills them ("Missing key(s)" the model's,
# "Unexpected key(s)" the state dict's), where the keys differ only by wrappers' names: torch.compile on a
# submodule ("encoder._orig_mod."), compile over DDP ("_orig_mod.module."), apply_activation_checkpointing
# ("_checkpoint_wrapped_module." in each wrapped layer), PEFT ("base_model.model." in front, "base_layer." in each
# LoRA layer). Paired once the names are taken out of both: certain, and the fix's renaming holds.
def _load_error(model: str, missing: list[str], unexpected: list[str]) -> str:
    return (
        f"RuntimeError: Error(s) in loading state_dict for {model}:\n"
        "\tMissing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". \n"
        "\tUnexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". \n"
    )


def _renamed(fix: str, keys: list[str]) -> list[str]:
    """The keys as the fix's own `bare` function maps them (the line it prints, run)."""
    line = next(line for line in fix.splitlines() if "bare = lambda k:" in line)
    scope: dict = {}
    exec(line, scope)  # the fix's one line of Python: import re; bare = lambda k: ...
    return [scope["bare"](k) for k in keys]


@pytest.mark.parametrize(
    ("missing", "unexpected", "said"),
    [
        (
            ["encoder.conv.weight", "encoder.conv.bias"],
            ["encoder._orig_mod.conv.weight", "encoder._orig_mod.conv.bias"],
            "the checkpoint's hold '_orig_mod.' (torch.compile)",
        ),
        (
            ["conv.weight", "fc.weight"],
            ["_orig_mod.module.conv.weight", "_orig_mod.module.fc.weight"],
            "the checkpoint's hold 'module.' (DistributedDataParallel / DataParallel) and '_orig_mod.'",
        ),
        (
            ["layers.0._checkpoint_wrapped_module.mlp.weight"],
            ["layers.0.mlp.weight"],
            "the model's hold '_checkpoint_wrapped_module.' (activation checkpointing)",
        ),
        (
            ["_orig_mod.layers.0.weight"],
            ["module.layers.0.weight"],
            "the checkpoint's hold 'module.' (DistributedDataParallel / DataParallel), the model's hold '_orig_mod.'",
        ),
    ],
)
def test_wrappers_names_inside_the_keys_are_paired_once_taken_out(missing, unexpected, said):
    found = lead(_load_error("Net", missing, unexpected))
    assert found.id == "log.state_dict_keys" and found.details["confidence"] == "certain", found.summary
    assert said in found.summary, found.summary
    assert _renamed(found.fix, missing) == _renamed(found.fix, unexpected)


def test_a_peft_checkpoint_loaded_into_the_bare_model_names_its_adapter_weights():
    found = lead(
        _load_error(
            "LlamaForCausalLM",
            ["model.layers.0.self_attn.q_proj.weight"],
            [
                "base_model.model.model.layers.0.self_attn.q_proj.base_layer.weight",
                "base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight",
            ],
        )
    )
    assert found.id == "log.state_dict_keys" and found.details["confidence"] == "certain", found.summary
    assert "'base_model.model.' (PEFT" in found.summary and "'base_layer.'" in found.summary
    assert "merge_and_unload" in found.fix and "lora_A" in found.fix
    assert _renamed(found.fix, ["base_model.model.model.layers.0.self_attn.q_proj.base_layer.weight"]) == [
        "model.layers.0.self_attn.q_proj.weight"
    ]


def test_a_submodule_of_the_models_own_named_module_is_no_wrapper():
    # "module." inside a key is a submodule's own name (torch_geometric's and Lightning users' models have them):
    # read only in front, so the keys are not paired and the reading stays likely
    found = lead(_load_error("Model", ["net.mlp.norms.0.module.weight"], ["net.mlp.norms.0.weight"]))
    assert found.id == "log.state_dict_keys" and found.details["confidence"] == "likely", found.summary
    assert "wrappers' names" not in found.summary


# torch/distributed/checkpoint/default_planner.py create_local_plan: "Missing key in checkpoint state_dict: {fqn}."
# where fqn is a key of the (flattened) dict given to dcp.load
def test_dcp_missing_optimizer_state_by_index_names_the_state_keyed_by_parameter_name():
    found = lead("RuntimeError: Missing key in checkpoint state_dict: optimizer.state.0.step.\n")
    assert found.id == "log.state_dict_keys" and found.details["confidence"] == "likely", found.summary
    assert "'optimizer.state.0.step'" in found.summary and "keyed by parameter index" in found.summary
    assert (
        "get_optimizer_state_dict(model, optimizer)" in found.fix and "set_optimizer_state_dict" in found.fix
    )
    assert "accelerate#3971" in found.fix


def test_dcp_missing_key_with_a_wrappers_name_names_get_model_state_dict():
    found = lead(
        "RuntimeError: Missing key in checkpoint state_dict: model._orig_mod.layers.0.attention.wq.weight.\n"
    )
    assert found.id == "log.state_dict_keys", found.summary
    assert "'_orig_mod.' (torch.compile)" in found.summary and "get_model_state_dict(model)" in found.fix


def test_dcp_missing_key_inside_its_checkpoint_exception_is_the_error_that_stopped_the_run():
    # dcp.load raises every rank's exception inside one CheckpointException (checkpoint/utils.py reduce_scatter),
    # each rank's traceback printed below it: that inner error is the one that stopped the run, not another one
    # to read first (a torchtitan-style resume, written for session 39 as torch 2.x prints it under torchrun)
    found = lead(
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/workspace/torchtitan/train.py", line 301, in <module>\n'
        "[rank0]:     checkpoint.load(step=args.resume_step)\n"
        '[rank0]:   File "/workspace/torchtitan/checkpoint.py", line 410, in load\n'
        "[rank0]:     dcp.load(states, checkpoint_id=checkpoint_id)\n"
        '[rank0]:   File "/usr/local/lib/python3.11/site-packages/torch/distributed/checkpoint/utils.py", line 449, in inner_func\n'
        "[rank0]:     return func(*args, **kwargs)\n"
        '[rank0]:   File "/usr/local/lib/python3.11/site-packages/torch/distributed/checkpoint/state_dict_loader.py", line 189, in load\n'
        "[rank0]:     _load_state_dict(\n"
        '[rank0]:   File "/usr/local/lib/python3.11/site-packages/torch/distributed/checkpoint/state_dict_loader.py", line 229, in _load_state_dict\n'
        '[rank0]:     central_plan: LoadPlan = distW.reduce_scatter("plan", local_step, global_step)\n'
        '[rank0]:   File "/usr/local/lib/python3.11/site-packages/torch/distributed/checkpoint/utils.py", line 192, in reduce_scatter\n'
        "[rank0]:     raise result\n"
        "[rank0]: torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([0, 1])\n"
        "[rank0]: Traceback (most recent call last): (RANK 0)\n"
        '[rank0]:   File "/usr/local/lib/python3.11/site-packages/torch/distributed/checkpoint/utils.py", line 165, in reduce_scatter\n'
        "[rank0]:     local_data = map_fun()\n"
        '[rank0]:   File "/usr/local/lib/python3.11/site-packages/torch/distributed/checkpoint/state_dict_loader.py", line 218, in local_step\n'
        "[rank0]:     local_plan = planner.create_local_plan()\n"
        '[rank0]:   File "/usr/local/lib/python3.11/site-packages/torch/distributed/checkpoint/default_planner.py", line 233, in create_local_plan\n'
        "[rank0]:     return create_default_local_load_plan(\n"
        '[rank0]:   File "/usr/local/lib/python3.11/site-packages/torch/distributed/checkpoint/default_planner.py", line 354, in create_default_local_load_plan\n'
        '[rank0]:     raise RuntimeError(f"Missing key in checkpoint state_dict: {fqn}.")\n'
        "[rank0]: RuntimeError: Missing key in checkpoint state_dict: model._orig_mod.layers.0.attention.wq.weight.\n"
    )
    assert found.id == "log.state_dict_keys", found.summary
    assert "'_orig_mod.' (torch.compile)" in found.summary
    assert "CheckpointException" not in found.summary + found.fix
    assert "initiating_error" not in found.details


def test_dcp_missing_key_names_how_to_list_the_checkpoints_keys_and_a_partial_load():
    found = lead("RuntimeError: Missing key in checkpoint state_dict: model.layers.0.attention.wq.weight.\n")
    assert found.id == "log.state_dict_keys", found.summary
    assert "read_metadata().state_dict_metadata" in found.fix and "allow_partial_load=True" in found.fix
    assert "keyed by parameter index" not in found.summary


# nn/modules/module.py _load_from_state_dict: the exception of one parameter's copy, appended to load_state_dict's
# list (torch_native:while-copying-the-parameter-named). The keys matched; the exception quoted is the cause.
def _copy_failed(name: str, exception: str) -> str:
    return (
        "RuntimeError: Error(s) in loading state_dict for FullyShardedDataParallel:\n"
        f'\tWhile copying the parameter named "{name}", whose dimensions in the model are torch.Size([16, 8]) and '
        f"whose dimensions in the checkpoint are torch.Size([16, 8]), an exception occurred : ('{exception}',).\n"
    )


def test_a_full_state_dict_copied_into_dtensor_parameters_names_set_model_state_dict():
    found = lead(
        _copy_failed(
            "net1.0.weight",
            "aten.copy_.default: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor "
            "before calling distributed operators!",
        )
    )
    assert found.id == "log.dtensor_mixed_operands" and found.details["confidence"] == "likely", found.summary
    assert 'load_state_dict could not copy "net1.0.weight"' in found.summary
    assert "broadcast_from_rank0=True" in found.fix and "distribute_tensor" in found.fix
    assert "full_tensor()" in found.fix  # the other way round: a sharded state dict into a plain model
    assert "gradient clipping" not in found.summary, (
        found.summary
    )  # the Trainer's clipping reading is not this


def test_a_copy_that_raised_is_read_by_its_exception_not_as_keys_that_differ():
    found = lead(_copy_failed("fc.weight", "Cannot copy out of meta tensor; no data!"))
    assert found.id == "log.meta_weights_not_loaded", found.summary
    # a list that also names keys the model misses is still a state dict of other keys
    found = lead(
        "RuntimeError: Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "head.weight". \n'
        + _copy_failed("fc.weight", "Cannot copy out of meta tensor; no data!").split("\n", 1)[1]
    )
    assert found.id == "log.state_dict_keys", found.summary


# accelerate/utils/fsdp_utils.py load_fsdp_model with FULL_STATE_DICT: torch.load of "pytorch_model_fsdp.bin" in the
# checkpoint folder, CPython's FileNotFoundError when the checkpoint was saved in another form (a
# SHARDED_STATE_DICT save writes the folder pytorch_model_fsdp_0/)
def test_accelerates_full_state_dict_file_missing_names_the_state_dict_type_it_was_saved_with():
    found = lead(
        "[INFO|fsdp_utils.py:92] Loading model from output/checkpoint-500/pytorch_model_fsdp.bin\n"
        "FileNotFoundError: [Errno 2] No such file or directory: 'output/checkpoint-500/pytorch_model_fsdp.bin'\n"
    )
    assert found.id == "log.checkpoint_path" and found.details["confidence"] == "likely", found.summary
    assert (
        "output/checkpoint-500/pytorch_model_fsdp.bin" in found.summary and "FULL_STATE_DICT" in found.summary
    )
    assert "SHARDED_STATE_DICT" in found.fix and "accelerate merge-weights" in found.fix
    assert "DeepSpeed" not in found.summary
    # accelerate's own log line naming the file, with nothing failing, is no finding
    quiet = lead("[INFO|fsdp_utils.py:92] Saving model to output/checkpoint-500/pytorch_model_fsdp.bin\n")
    assert quiet.id == "log.unrecognised", quiet.summary


# the other way round: accelerate's SHARDED_STATE_DICT loader reads <checkpoint>/pytorch_model_fsdp_0 with dcp.load
# (FileSystemReader.read_metadata opens its .metadata), and the checkpoint holds a FULL_STATE_DICT save's one file
def test_accelerates_sharded_folder_without_metadata_names_the_full_state_dict_save():
    found = lead(
        "FileNotFoundError: [Errno 2] No such file or directory: 'output/checkpoint-500/pytorch_model_fsdp_0/.metadata'\n"
    )
    assert found.id == "log.checkpoint_path", found.summary
    assert "SHARDED_STATE_DICT loader" in found.summary and "pytorch_model_fsdp.bin" in found.summary
    assert "FULL_STATE_DICT" in found.fix and "DeepSpeed" not in found.summary
    # any other folder without .metadata keeps dcp's own reading
    found = lead("FileNotFoundError: [Errno 2] No such file or directory: 'ckpt/step_10/.metadata'\n")
    assert "torch.distributed.checkpoint found no .metadata in ckpt/step_10" in found.summary


# CPython's EISDIR (system:is-a-directory-errno-21) raised by torch.load's open() (torch/serialization.py
# _open_file.__init__, below load and _open_file_like): a folder where torch.load reads one file; the same error
# from another open() (a script writing to a folder's path, a data loader) is not a checkpoint's
TORCH_LOAD_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "test.py", line 76, in <module>\n'
    "    model.load_state_dict(torch.load(args.model_file))\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 791, in load\n'
    "    with _open_file_like(f, 'rb') as opened_file:\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 271, in _open_file_like\n'
    "    return _open_file(name_or_buffer, mode)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 252, in __init__\n'
    "    super().__init__(open(name, mode))\n"
)


def test_torch_load_of_a_folder_names_the_folder_checkpoints_and_an_unzipped_file():
    found = lead(
        TORCH_LOAD_FRAMES + "IsADirectoryError: [Errno 21] Is a directory: 'checkpoints/best_seen.pth'\n"
    )
    assert found.id == "log.checkpoint_path" and found.details["confidence"] == "likely", found.summary
    assert "torch.load was given a folder, checkpoints/best_seen.pth" in found.summary
    assert "dcp_to_torch_save" in found.fix and "unzipped" in found.fix and "zero_to_fp32" in found.fix
    assert "DeepSpeed state" not in found.summary


def test_a_folder_opened_by_other_code_is_no_checkpoint_path():
    found = lead(
        "Traceback (most recent call last):\n"
        '  File "eval.py", line 76, in <module>\n'
        "    with open(args.answers_file, 'w') as f:\n"
        "IsADirectoryError: [Errno 21] Is a directory: '/home/u/LLaGA/checkpoints'\n"
    )
    assert found.id != "log.checkpoint_path", found.summary


# nn/modules/module.py's size mismatch where the checkpoint's first dimension is 0 and the rest the model's: a rank's
# empty shard of a tensor split on dim 0 over more ranks than it has rows (pytorch/pytorch#136228's shapes)
def test_an_empty_first_dimension_in_the_checkpoint_is_a_ranks_empty_shard():
    found = lead(
        "RuntimeError: Error(s) in loading state_dict for Linear:\n"
        "\tsize mismatch for weight: copying a param with shape torch.Size([0, 17]) from checkpoint, the shape in "
        "current model is torch.Size([1, 17]).\n"
    )
    assert found.id == "log.model_checkpoint_mismatch" and found.details["confidence"] == "likely", (
        found.summary
    )
    assert "empty shard" in found.summary and "full_state_dict=True" in found.fix
    assert "log.library_version_bug" in found.details["alternatives"], found.details
    # another second dimension is another model's shape
    found = lead(
        "RuntimeError: Error(s) in loading state_dict for Linear:\n"
        "\tsize mismatch for weight: copying a param with shape torch.Size([0, 17]) from checkpoint, the shape in "
        "current model is torch.Size([1, 18]).\n"
    )
    assert "empty shard" not in found.summary, found.summary


# the keys one list holds that are all a LoRA layer's own (peft/tuners/lora/layer.py: lora_A / lora_B under the
# adapter's name): an adapter's weights where the model has no LoRA layers, or a base checkpoint after get_peft_model
def test_lora_keys_alone_on_one_side_name_the_adapter_or_the_base_model():
    found = lead(
        _load_error(
            "LlamaForCausalLM",
            ["model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight"],
            [
                "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight",
                "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight",
            ],
        )
    )
    assert found.id == "log.state_dict_keys", found.summary
    assert "all LoRA layers'" in found.summary and "PeftModel.from_pretrained" in found.fix
    found = lead(
        "RuntimeError: Error(s) in loading state_dict for PeftModelForCausalLM:\n"
        '\tMissing key(s) in state_dict: "base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight", '
        '"base_model.model.model.layers.0.self_attn.q_proj.lora_B.default.weight". \n'
    )
    assert "get_peft_model added them" in found.summary and "before get_peft_model" in found.fix


# torch/distributed/tensor/_dispatch.py's refusal names the op: the foreach norm is clip_grad_norm_'s
# (torch/nn/utils/clip_grad.py), the foreach in-place arithmetic an optimizer's foreach step (torch/optim)
@pytest.mark.parametrize(
    ("op", "said", "fix"),
    [
        ("aten._foreach_norm.Scalar", "gradient clipping (clip_grad_norm_)", "max_grad_norm"),
        ("aten._foreach_mul_.Scalar", "optimizer's foreach step", "set_optimizer_state_dict"),
    ],
)
def test_a_mixed_dtensor_op_names_clipping_or_the_optimizer_step(op, said, fix):
    found = lead(
        f"RuntimeError: {op}: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor "
        "before calling distributed operators!\n"
    )
    assert found.id == "log.dtensor_mixed_operands", found.summary
    assert said in found.summary and fix in found.fix, found.summary
    other = lead(
        "RuntimeError: aten.mm.default: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to "
        "DTensor before calling distributed operators!\n"
    )
    assert "; here" not in other.summary, other.summary
