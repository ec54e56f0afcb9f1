"""Where tensors and models are: on different devices, on the CPU for NCCL, spread over GPUs.

Kinds of failure about where tensors and models are: on different devices, a CPU tensor handed to NCCL, a
model spread over GPUs in a multi-process run, SyncBatchNorm and DataParallel used where they cannot work, and
pack_padded_sequence given its lengths on the GPU.

The message texts are ATen's device checks (and ``PackedSequence.cpp``'s; torch 1.x's ``TensorUtils.cpp``
checkSameGPU, "Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU"; the MPS kernels'
``OperationUtils.mm``, "Placeholder storage has not been allocated on MPS device!", a CPU tensor given to an MPS
op: both say where a tensor is, not whose code put it there, a library's as often as the script's, so they are
likely, a library's bug named), torch's (``ProcessGroupNCCL.cpp``, ``nn/parallel``,
``nn/modules/batchnorm.py``, ``distributed_c10d.py``) and accelerate's / transformers' (``device_map``), as the
catalog holds them.
"""

from __future__ import annotations

import re
from dataclasses import replace

from torchdoctor.explain.kinds import cuda_errors, data_loader_releases, layer_types, torchtitan_dims
from torchdoctor.explain.kinds.tensor_misuse import OPERATOR_CALLER
from torchdoctor.explain.recognisers import (
    Alternative,
    Context,
    Hit,
    Pattern,
    Recogniser,
    called_from_own_code,
    first,
    library_call,
    merged,
    on_ranks,
)

FAMILY = "DDP, FSDP and where tensors are"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# torch/nn/parallel/distributed.py (DDP's device_ids check) and torch/distributed/tensor/_dispatch.py
DDP_DEVICE_IDS = "device_ids and output_device arguments only work with single-device"
NO_MESH = "found no DeviceMesh from dtensor args"


# torch 0.x's legacy nn functions (THNN on the CPU, "Cuda" + the THNN name on the GPU) refusing their arguments;
# the got list names each argument's type, torch.cuda.FloatTensor on the GPU and torch.FloatTensor on the CPU,
# a refused one between "!" marks: a list shown whole with no CPU tensor beside a CUDA one (or none beside a CPU
# one) is a wrong dtype, not a device
THNN_STEPS = ("updateOutput", "updateGradInput", "accGradParameters")
_CUDA_TYPE = r"torch\.cuda\.\w{1,20}Tensor"
_CPU_TYPE = r"torch\.(?!cuda\.)\w{1,20}Tensor"
THNN_WRONG_TYPE = R(
    r"_(?:" + "|".join(THNN_STEPS) + r") received an invalid combination of arguments - got \("
    rf"(?![^)\n]*{_CUDA_TYPE}[^)\n]*{_CPU_TYPE})(?![^)\n]*{_CPU_TYPE}[^)\n]*{_CUDA_TYPE})[^)\n]*\)"
)


# The device checks' pairs with the meta device in them (the dispatcher's two wordings, FakeTensor's and
# _prims_common's): a tensor with a shape and no data, a weight never loaded, not one left on the wrong device
META_PAIR = (
    r"found at least two devices,\s*(?:meta and|[\w:]{1,20} and meta\b)|same device, but got \w{1,60} is on "
    r"(?:meta,|[\w:]{1,20}, different from other tensors on meta\b)|found two different devices (?:meta, |"
    r"[\w:]{1,20}, meta\b)|Tensor on device (?:meta is not|[\w:]{1,20} is not on the expected device meta\b)"
)

# the checks that say a tensor is on the CPU without saying whose code left it there
_CPU_OR_MPS = ("cpu_arg", "gpu_arg", "mps_placeholder", "indexed_device", "cpu_device")

# torch 0.4's checked_cast_tensor types: "torch.cuda.FloatTensor", "Variable[torch.FloatTensor]"
_TYPE_0_4 = r"(?:Variable\[)?torch\."
# both types on one side (two CUDA types, or two CPU ones): the dtypes differ, not the devices
SAME_SIDE_TYPES = (
    rf"Expected object of type {_TYPE_0_4}cuda\.\w{{1,20}}\]? but found type {_TYPE_0_4}cuda\.|"
    rf"Expected object of type {_TYPE_0_4}(?!cuda\.)\w{{1,20}}\]? but found type {_TYPE_0_4}(?!cuda\.)"
)

# The dispatcher's "found at least two devices, cuda:0 and cpu" (aten's TensorIterator compute_types) and
# torch.cat's "Received cpu and cuda:0" name the devices, not whose code put a tensor on the CPU: the script's, or
# an installed library's own (ai-toolkit's loader leaving its VAE on the CPU, ai-toolkit#742; an optimizer that
# restores its state on the CPU when a run resumes, prodigy-plus-schedule-free#11, fixed in its v1.9.0). The
# script's is certain only where the traceback is there and runs through no installed package but torch.
# explain/traceback_frames.py reads the frames of the traceback that holds each hit's line: traceback_frame (it has
# frames) and installed_frame (its innermost frame in an installed package other than torch and torchvision)


def _script_left_it_on_cpu(hits: list[Hit], ctx: Context) -> bool:
    """A CPU device in the dispatcher's or torch.cat's message, with the script's own traceback around it."""
    on_cpu = any("cpu" in (h.facts.get("device_a", "") + h.facts.get("device_b", "")).lower() for h in hits)
    return (
        on_cpu
        and any("traceback_frame" in h.facts for h in hits)
        and not any("installed_frame" in h.facts for h in hits)
    )


def _dataparallel_placed(hit: Hit) -> bool:
    """DataParallel's device_ids[0] check naming a real device for the stray parameter: "meta" is a weight never
    loaded (an offloaded or empty-initialised model), which the check is only the first to reach."""
    return "device_ids" in hit.facts and hit.facts.get("device_b") != "meta"


def _layer_devices(facts: dict) -> tuple[str, str]:
    """ATen's convolution check: the layer's input and its weight (or bias) as tensor types on two devices."""
    given, param, held = facts["layer_input"], facts.get("layer_param", "weight"), facts["layer_weight"]
    on_input, on_param = layer_types.device_of(given), layer_types.device_of(held)
    summary = (
        f"a layer's input and its {param} are on different devices: the input is {given} ({on_input}), the "
        f"{param} {held} ({on_param})"
    )
    dtypes = layer_types.dtype_of(given), layer_types.dtype_of(held)
    if dtypes[0] != dtypes[1]:
        summary += f"; their dtypes differ too ({dtypes[0]} and {dtypes[1]})"
    if on_input == "cpu":
        where = (
            "Here the input is still on the CPU while the model is on the GPU: the batch was not moved (or "
            "x.to(device) was called without keeping its result), or forward made a tensor without "
            "device=x.device."
        )
    else:
        where = (
            f"Here the model (or this layer) is still on the {on_param.upper()}: call model.to(device) before "
            "the first forward; a layer created or replaced after that call, or kept in a plain Python list "
            "instead of nn.ModuleList, is not moved with the model."
        )
    return summary, (
        f"{where} Put the model and every batch on one device:\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model.to(device)      # in place, before building the optimizer\n"
        "x = x.to(device)      # a copy: keep it; for each input, in training and in evaluation"
    )


# DGL names both devices itself: the feature's and the graph's (one process, one op: certain)
DGL_FEATURE = R(
    r"Cannot assign (?P<dgl_what>node|edge) feature \"(?P<dgl_feature>[^\"\n]{1,60})\" on device "
    r"(?P<dgl_feature_device>[\w:/]{1,20}) to a graph on device (?P<dgl_graph_device>[\w:/]{1,20})"
)


def _dgl_devices(facts: dict) -> tuple[str, str]:
    feature, graph = facts["dgl_feature_device"].rstrip("."), facts["dgl_graph_device"].rstrip(".")
    summary = (
        f"a {facts['dgl_what']} feature ('{facts['dgl_feature']}') on {feature} was assigned to a DGL graph on "
        f"{graph}: DGL keeps a graph and its features on one device"
    )
    fix = (
        "Move the graph to the device of the model and its features once the graph is built: g = g.to(device) "
        "(DGLGraph.to returns a copy, keep it), and the features with it (g.ndata['feat'] = feats.to(device)); "
        "with a DataLoader, move each batched graph in the training loop (bg = bg.to(device)). A layer that "
        "writes g.ndata / g.edata inside forward sees the graph the loop passed it, so the graph, not the "
        "layer, is what was left behind."
    )
    return summary, fix


def _library_frame(hits: list[Hit], ctx: Context) -> str:
    """The installed package (not torch's own) whose code the traceback runs through below the user's: the
    innermost of the parsed traceback's, else the innermost installed frame of the traceback that holds the error
    line, pasted above or below it ("" where there is none)."""
    for hit in hits:
        below = [p for p in hit.facts.get("frame_packages", ()) if p not in ("torch", "torchvision")]
        if below:
            return below[-1]
    return next((h.facts["installed_frame"] for h in hits if "installed_frame" in h.facts), "")


def _devices(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    """What the device check says, and, where the traceback runs through an installed package, that package."""
    summary, fix = _devices_read(hits, ctx)
    facts = merged(hits)
    where = facts.get("device_method")
    if where and facts.get("device_arg"):
        summary += f" (argument {facts['device_arg']} of {where})"
    elif where:
        summary += f" (in {where})"
    package = _library_frame(hits, ctx)
    if package and not facts.get("dgl_graph_device") and not facts.get("metric_devices"):
        summary += (
            f"; the traceback runs through {package}'s code (an installed package), which may have made it"
        )
        fix = (
            f"The traceback runs through {package} (site-packages): if the tensor on the other device is one "
            f"{package} made, moved or restored itself (not one your code handed it), that is a bug of the "
            f"installed {package}: search its issues for this message and upgrade it (pip install -U {package}), "
            "or pin the release its examples use. Otherwise:\n" + fix
        )
    return summary, fix


def _metric_devices(facts: dict, hits: list[Hit]) -> tuple[str, str]:
    """torchmetrics' own words for a Metric whose state is on another device than the inputs of its update()."""
    metric = facts.get("metric_class") or "the metric"
    summary = (
        f"torchmetrics' {metric} was updated with tensors on another device than its own state (the metric was "
        "never moved to the inputs' device, or the inputs were moved off it)" + on_ranks(hits)
    )
    fix = (
        f"Put {metric} on the device of the tensors given to update(): metric = {metric}(...).to(device). In a "
        "LightningModule create it in __init__ as an attribute (self.acc = ...), or keep several in "
        "nn.ModuleDict / MetricCollection, not a plain dict or list, so that Lightning moves them with the model; "
        "and hand update() the predictions and targets as the model gives them (no .cpu() on one of them)."
    )
    return summary, fix


def _rnn_devices(facts: dict, ctx: Context) -> tuple[str, str]:
    """RNN.h's check of an LSTM/GRU/RNN's input against its hidden state or its weights."""
    given, held = facts.get("device_a", "?"), facts.get("device_b", "?")
    replica = facts.get("replica") or ctx.facts.get("replica")
    if facts["rnn_what"] == "hidden":
        summary = f"an RNN's input is on {given} and the hidden state it was given on {held}"
        fix = (
            "The initial hidden (and cell) state handed to the LSTM/GRU was made without a device: "
            "torch.zeros(num_layers, batch, hidden_size) is on the CPU. Make it on the input's device, "
            "torch.zeros(..., device=x.device) or x.new_zeros(...), or pass none (the RNN starts from zeros on the "
            "input's device). A state kept from the last batch as a model attribute stays where it was made: "
            "under DataParallel each replica needs its own, made in forward."
        )
    else:
        summary = f"an RNN's input is on {given} and its weights on {held}"
        fix = (
            "Move the model and every input to one device before the first forward: model.to(device), "
            "x = x.to(device) (keep the result); an RNN created or replaced after model.to() is not moved with it."
        )
    if replica:
        summary += f" (in DataParallel replica {replica})"
    return summary, fix


def _devices_read(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("metric_devices"):
        return _metric_devices(facts, hits)
    if facts.get("dgl_graph_device"):
        summary, fix = _dgl_devices(facts)
        return summary + on_ranks(hits), fix
    if facts.get("layer_input"):
        summary, fix = _layer_devices(facts)
        return summary + on_ranks(hits), fix
    if facts.get("rnn_what"):
        return _rnn_devices(facts, ctx)
    if facts.get("thnn_call"):
        summary = f"torch's {facts['thnn_call']} was given a CPU tensor among CUDA ones (or a tensor of another type)"
        fix = (
            "The got list names each argument's type, the refused one between '!' marks: a torch.FloatTensor "
            "among torch.cuda ones is still on the CPU: move it with .cuda(), a loss's weight= tensor and the "
            "targets too (nn.CrossEntropyLoss(weight=w.cuda())); an IntTensor where a LongTensor is expected "
            "needs .long()."
        )
        return summary + on_ranks(hits), fix
    a, b = facts.get("device_a", ""), facts.get("device_b", "")
    summary = "tensors on different devices" + (f": {a} and {b}" if a and b else "")
    if facts.get("thc_gpus"):
        summary = "a CUDA operation got arguments on different GPUs (torch's THC check)"
    if facts.get("cpu_arg"):
        summary = f"tensors on different devices: {facts['cpu_arg']} is on the CPU, the operation on the GPU"
    if facts.get("gpu_arg"):
        summary = (
            f"tensors on different devices: {facts['gpu_arg']} is on the GPU, the operation on the CPU (its first "
            "tensor, most often the input, was not moved)"
        )
    replica = facts.get("replica") or ctx.facts.get("replica")
    if replica:
        summary += f" (in DataParallel replica {replica})"
    both_gpus = (a.startswith("cuda") and b.startswith("cuda")) or bool(facts.get("thc_gpus"))
    if facts.get("ddp_cpu"):
        summary = "DDP was given device_ids for a model with parameters still on the CPU" + on_ranks(hits)
        if facts.get("ddp_types"):
            summary = (
                f"DDP was given a model with parameters on the CPU and on the GPU ({facts['ddp_types']})"
                + on_ranks(hits)
            )
        fix = (
            "Move the model to the rank's GPU before wrapping it: model.to(torch.device('cuda', LOCAL_RANK)) "
            "(after torch.cuda.set_device(LOCAL_RANK)), then DistributedDataParallel(model, "
            "device_ids=[LOCAL_RANK]). A layer created after .to() (or converted, e.g. SyncBatchNorm built "
            "on the CPU) must be moved too; wrap a CPU model without device_ids."
        )
        return summary, fix
    if facts.get("device_ids"):  # DataParallel's check before it scatters: the model is not on device_ids[0]
        summary = f"nn.DataParallel runs on {a} (device_ids[0]) but the model has parameters on {b}"
        if b in ("cpu", "meta"):
            fix = f"The model is not on {a} when DataParallel wraps it: " + (
                f"move it there first, model.to('{a}'), then nn.DataParallel(model); a layer created or "
                "replaced after that call must be moved too."
                if b == "cpu"
                else "a parameter on 'meta' has no data, so the weights were never loaded (a model loaded "
                "with a device_map that offloads to CPU or disk, or built under init_empty_weights). Load it "
                "with real weights (device_map={'': 0} or none, then .to(device)); do not wrap a model that "
                "accelerate placed with a device_map in DataParallel."
            )
            return summary + on_ranks(hits), fix
        fix = (
            "DataParallel gathers on the first GPU of device_ids, and the model must be there before it is "
            f"wrapped: model.to('{a}') then nn.DataParallel(model, device_ids=[...]) with {a} first; to use "
            f"other GPUs, list the one the model is on first (device_ids=[{b.split(':')[-1]}, ...]) or choose "
            "them with CUDA_VISIBLE_DEVICES so device_ids count from 0. Where the script takes its list of GPUs "
            "from an option, move the model to the first GPU of that same list."
        )
        return summary + on_ranks(hits), fix
    if facts.get("indexed_device"):
        summary = (
            f"an indexing x[idx] got its indices on another device than the tensor it indexes "
            f"({facts['indexed_device']})"
        )
        fix = (
            "Indices must be on the CPU or on the indexed tensor's device: move them, x[idx.to(x.device)], or "
            "move the indexed tensor to theirs. A tensor built without a device (torch.zeros_like(...) of a CPU "
            "value, torch.arange(n), a mask from a NumPy array) stays on the CPU while the model's outputs are "
            "on the GPU."
        )
        return summary + on_ranks(hits), fix
    if facts.get("mps_placeholder"):
        summary = (
            "a tensor given to an operation on Apple's MPS device is not on that device (still on the CPU)"
        )
        fix = (
            "Move every input of the model to the device the model is on: model.to('mps') moves the parameters "
            "only, so batches, labels and the tokenizer's outputs need .to('mps') too ({k: v.to(device) for k, "
            "v in batch.items()}), and a tensor made in forward needs device=x.device (torch.zeros(..., "
            "device=x.device)). A hidden state or mask built without a device stays on the CPU."
        )
        return summary + on_ranks(hits), fix
    if replica:
        fix = (
            "Under nn.DataParallel every replica runs forward on its own GPU, and a tensor the model makes or "
            "keeps on a fixed device (torch.zeros(..., device='cuda:0'), a plain attribute rather than a "
            "registered buffer) stays on cuda:0. Create tensors on the input's device (x.device), register "
            "state with register_buffer; better, use DistributedDataParallel (one process per GPU), or train "
            "on one device (CUDA_VISIBLE_DEVICES=0)."
        )
    elif facts.get("thc_gpus"):
        fix = (
            "The releases that print this ran several GPUs with nn.DataParallel: each replica runs forward on its "
            "own GPU, and a tensor the model makes or keeps on a fixed device (x.cuda(), torch.zeros(...).cuda(0), "
            "a plain attribute rather than a registered buffer) stays on the first GPU. Create tensors on the "
            "input's device (x.new_zeros(...), device=x.device), register state with register_buffer; or train on "
            "one GPU (CUDA_VISIBLE_DEVICES=0), as code written for one GPU needs; in one process using another GPU "
            "than 0, call torch.cuda.set_device(N) before building the model."
        )
    elif both_gpus:
        fix = (
            "One process uses two GPUs: the model is spread over them (device_map='auto', a split meant for "
            "one big model) or a tensor is created on a fixed cuda:N. With one process per GPU (DDP/torchrun), "
            "keep everything on the rank's device: device = torch.device('cuda', LOCAL_RANK), "
            "device_map={'': LOCAL_RANK}; or let the process see one GPU only: CUDA_VISIBLE_DEVICES=0."
        )
    else:
        fix = (
            "A tensor is still on the CPU (or on another GPU) while the model is on the GPU: move inputs, "
            "labels and any tensor created in forward to the model's device (x.to(device), "
            "torch.zeros(..., device=x.device)), and move the model before building the optimizer."
        )
    return summary + on_ranks(hits), fix


DEVICE_MISMATCH = Recogniser(
    kind="device_mismatch",
    title="tensors on different devices",
    anchors=(
        "tensors to be on the same device",
        # torch.cat's check (aten/src/ATen/native/TensorShape.cpp): "(torch.cat(): a|A)ll input tensors must be
        # on the same device. Received cuda:0 and cuda:1" (torch.stack and gathers of a list go through it too)
        "must be on the same device. Received ",
        "module must have its parameters and buffers on device",
        "should be the same or input should be a MKLDNN tensor",
        ") and weight type (",
        ") and bias type (",
        "Expected object of backend",
        "Expected object of device type",
        # torch 0.4's aten/src/ATen/Utils.h checked_cast_tensor, "Expected object of type torch.cuda.FloatTensor but
        # found type torch.FloatTensor for argument #2 'weight'" (Variable[...] around the types in 0.4.0): a
        # device only where one type is a torch.cuda one and the other not (else a dtype: SAME_SIDE_TYPES)
        "Expected object of type ",
        "tensors are located on different GPUs",
        # THC's check of a CUDA op's arguments (THCAssertSameGPU / THCTensor_checkGPU, torch 0.1-1.x: "arguments are
        # located on different GPUs at .../THC/generic/THCTensorMathPointwise.cu:314"), most often in a
        # DataParallel replica
        "arguments are located on different GPUs",
        # aten/src/ATen/native/RNN.h check_attributes: an RNN's input against its hidden state or its parameters,
        # "Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu"
        "tensors are not at the same device, found input tensor at ",
        # aten/src/ATen/TensorUtils.cpp checkSameGPU (torch 0.4-1.x): "Expected tensor for argument #1 'input' to
        # have the same device as tensor for argument #2 'weight'; but device 1 does not equal 0 (while checking
        # arguments for ...)", the first argument named 'out' where an op writes one (addmm)
        "to have the same device as tensor for ",
        DDP_DEVICE_IDS,
        "input module must be on the same type of devices",
        "is on CPU, but expected it to be on GPU",
        "is on CPU, but expected them to be on GPU",
        "Placeholder storage has not been allocated on MPS device",
        # aten/src/ATen/native/TensorAdvancedIndexing.cpp (the check before index's meta function)
        "or on the same device as the indexed tensor (",
        # dgl/heterograph.py (DGL 0.5+: _set_n_repr / _set_e_repr): a feature assigned to a graph on another
        # device, "Cannot assign node feature "h" on device cuda:0 to a graph on device cpu. Call DGLGraph.to() ..."
        " to a graph on device ",
        # aten/src/ATen/native/TensorIterator.cpp (TensorIterator::compute_types, torch 1.3-1.5): an operand of an
        # elementwise op on another device than the op's, "expected device cuda:0 but got device cuda:1"; the same
        # words, with " for value tensor", in TensorAdvancedIndexing.cpp's index_put_ (x[idx] = value) to this day;
        # anchored on the device it names, as "expected device " alone is inside RPC's "unexpected device type"
        "expected device cuda",
        "expected device cpu",
        "expected device mps",
        # torch 0.1-0.3's THNN/THCUNN bindings (torch/csrc/utils/invalid_arguments.cpp, THPUtils_invalidArguments,
        # on the legacy nn functions: "CudaClassNLLCriterion_updateOutput received an invalid combination of
        # arguments - got (int, torch.cuda.FloatTensor, ..., !torch.FloatTensor!, ...)"): a CPU tensor among CUDA
        # ones, or an argument of the wrong dtype (an IntTensor target), so likely; a got list shown on one
        # device is the dtype's (THNN_WRONG_TYPE)
        *(f"_{step} received an invalid combination of arguments" for step in THNN_STEPS),
        # torch.compile's spellings of the same refusal, met while tracing with fake tensors: torch/_subclasses/
        # fake_tensor.py (FakeTensor's common device, 2.0+) and torch/_prims_common/__init__.py (check_same_device)
        "Unhandled FakeTensor Device Propagation for ",
        " is not on the expected device ",
        # torchmetrics/metric.py re-raises the check above from a Metric's update() in its own words
        "Encountered different devices in metric calculation",
        # first sentences, read where a message is cut after them (benchmarks/first_sentence_anchors.py)
        "input tensors must be on the same device",
    ),
    # a pair with the meta device in it is a weight never loaded (checkpoint.py's meta_weights_not_loaded reads it)
    reject=R(THNN_WRONG_TYPE.pattern + "|" + META_PAIR + "|" + SAME_SIDE_TYPES),
    templates=(
        "torch_native:expected-all-tensors-same-device",
        "torch_native:expected-all-tensors-same-device-got",
        "torch_native:cat-all-input-tensors-same-device",
        "torch_native:cat-all-input-tensors-same-device-2",
        "torch:module-must-have-its-parameters-and",
        "torch_native:input-type-and-weight-type",
        "aten:input-type-and-weight-type-same",
        "aten:input-type-and-bias-type-mkldnn",
        "torch_native:expected-object-of-backend",
        "torch_native:expected-object-of-device-type",
        "torch_native:expected-object-of-type-found-type",  # Utils.h checked_cast_tensor (torch 0.4)
        "torch_native:tensors-located-on-different-gpus",  # THCUNN common.h (torch 0.x)
        "torch_native:arguments-located-on-different-gpus",  # THC's THCAssertSameGPU (torch 0.1-1.x)
        "torch_native:rnn-input-and-tensors-not-same-device",  # RNN.h check_attributes
        "torch_native:expected-tensor-same-device-as-argument",  # TensorUtils.cpp checkSameGPU (torch 0.4-1.x)
        "torch:distributeddataparallel-device-ids-and-output-device",  # with a CPU parameter in the set
        # torch/nn/parallel/distributed.py: parameters on the CPU and a GPU in one module
        "torch:distributeddataparallel-input-module-must-be-on",
        "torch_native:tensor-on-cpu-expected-gpu",
        "torch_native:mps-placeholder-not-allocated",
        "torch_native:indices-on-cpu-or-indexed-device",
        "third_party:dgl-assign-node-feature-device",
        "third_party:dgl-assign-edge-feature-device",
        "torch_native:expected-device-but-got-device",
        "torch_native:expected-device-but-got-device-value",
        *(f"torch_native:thnn-{step.lower()}-invalid-combination-of-arguments" for step in THNN_STEPS),
        "torch_native:fake-tensor-device-propagation",
        "torch_native:prims-tensor-not-on-expected-device",
        "third_party:torchmetrics-different-devices-in-metric",
    ),
    # DDP's device_ids message is this kind only when a parameter is still on the CPU; the convolution's type
    # check only when the two types are on two devices (one device: the dtypes differ, dtype_mismatch)
    match=R(
        rf"(?s)^(?!.*{DDP_DEVICE_IDS})(?!.*Input type \().|{DDP_DEVICE_IDS}.*device\(type='cpu'\)|"
        + layer_types.ON_TWO_DEVICES
    ),
    span=3,
    facts=(
        R(
            r"(?P<metric_devices>Encountered different devices in metric calculation)(?:[^\n]*?metric=(?P<metric_class>\w{1,80}))?"
        ),
        R(r"found at least two devices,\s*(?P<device_a>[\w:]{1,20}) and (?P<device_b>[\w:]{1,20})"),
        # the dispatcher's wording of later releases (ATen/core/op_registration/adaption.cpp): the odd argument's
        # device first, the others' second; torch.compile's two (FakeTensor's, _prims_common's)
        R(
            r"same device, but got (?P<device_arg>\w{1,60}) is on (?P<device_b>[\w:]{1,20}), different from other "
            r"tensors on (?P<device_a>[\w:]{1,20})"
        ),
        R(
            r"Device Propagation for [\w.]{1,80}, found two different devices (?P<device_a>[\w:]{1,20}), (?P<device_b>[\w:]{1,20})"
        ),
        R(
            r"Tensor on device (?P<device_b>[\w:]{1,20}) is not on the expected device (?P<device_a>[\w:]{1,20})"
        ),
        R(
            r"(?P<cpu_device>same device, but got \w{1,60} is on (?:cpu,|[\w:]{1,20}, different from other tensors on cpu\b)|"
            r"found two different devices (?:cpu, |[\w:]{1,20}, cpu\b)|Tensor on device (?:cpu is not|[\w:]{1,20} is not on "
            r"the expected device cpu\b))"
        ),
        # the argument and the operator the dispatcher names ("arugment": the typo of its first releases)
        R(
            r"when checking ar(?:gu|ug)ment for argument (?P<device_arg>\w{1,60}) in method (?P<device_method>\w{1,80})"
        ),
        R(r"when checking argument in method (?P<device_method>\w{1,80})"),
        R(r"same device\. Received (?P<device_a>[\w:]{1,20}) and (?P<device_b>[\w:]{1,20})"),
        R(
            r"(?:found at least two devices,\s*|same device\. Received )(?P<cpu_device>cpu and|[\w:]{1,20} and cpu\b)"
        ),
        R(
            r"on device (?P<device_a>[\w:]{1,20}) \((?P<device_ids>device_ids)\[0\]\) but found one of them on device: "
            r"(?P<device_b>[\w:]{1,20})"
        ),
        R(r"\(device_ids\[0\]\) but found one of them on device: (?P<dp_meta>meta)\b"),
        layer_types.TYPES,
        R(r"module\s+parameters \{(?P<ddp_cpu>[^}]{0,600}type='cpu'[^}]{0,600})\}"),
        R(
            r"input module parameters locate in (?P<ddp_types>\{(?P<ddp_cpu>[^}\n]{0,200}'cpu'[^}\n]{0,200})\})"
        ),
        R(
            r"Expected object of (?:backend|device type) (?P<device_a>\w{1,20}) but got (?:backend|device type) "
            r"(?P<device_b>\w{1,20})"
        ),
        # which tensor, not whose code: never read as the CPU devices that make the other messages certain
        R(r"Tensor for (?P<cpu_arg>argument #\d+ '\w{1,40}'|'\w{1,40}') is on CPU, but expected"),
        R(
            rf"Expected object of type {_TYPE_0_4}cuda\.\w{{1,20}}\]? but found type {_TYPE_0_4}\w{{1,20}}\]? for (?P<cpu_arg>argument #\d+ '\w{{1,40}}')"
        ),
        R(
            rf"Expected object of type {_TYPE_0_4}\w{{1,20}}\]? but found type {_TYPE_0_4}cuda\.\w{{1,20}}\]? for (?P<gpu_arg>argument #\d+ '\w{{1,40}}')"
        ),
        R(r"(?P<mps_placeholder>Placeholder storage has not been allocated on MPS device)"),
        R(r"(?P<thc_gpus>arguments are located on different GPUs)"),
        R(
            r"Input and (?P<rnn_what>hidden|parameter) tensors are not at the same device, found input tensor at "
            r"(?P<device_a>[\w:]{1,20}) and (?:hidden|parameter) tensor at (?P<device_b>[\w:]{1,20})"
        ),
        R(
            r"(?P<cpu_device>found input tensor at (?:(?i:cpu) and|[\w:]{1,20} and (?:hidden|parameter) tensor at (?i:cpu)\b))"
        ),
        R(r"or on the same device as the indexed tensor \((?P<indexed_device>[\w:]{1,20}) ?\)"),
        R(r"expected device (?P<device_a>[\w:]{1,20}) but got device (?P<device_b>[\w:]{1,20})"),
        DGL_FEATURE,
        R(
            r"(?P<thnn_call>\w{1,60}_(?:"
            + "|".join(THNN_STEPS)
            + r")) received an invalid combination of arguments"
        ),
    ),
    # two GPUs in one process has several causes (device_map, DataParallel, a launcher's GPU split): which
    # one is certain only with DataParallel's "in replica N" or its own device_ids[0] check
    # (torch/nn/parallel/data_parallel.py), or a CPU tensor in it. Each of those only where no installed package's frame (other than torch's) is in the
    # traceback: a library's own model code run in DataParallel's replicas, or a trainer that wrapped and placed
    # the model itself (Lightning 1.0-1.2's overrides/data_parallel.py prints the same device_ids[0] check), is
    # the library's doing as often as the script's (its reading is named: OPERATOR_CALLER)
    confirm=lambda hits, ctx: (
        any("dgl_graph_device" in h.facts for h in hits)
        or _script_left_it_on_cpu(hits, ctx)
        or (
            not any("installed_frame" in h.facts for h in hits)
            and (
                "replica" in ctx.facts
                or any(
                    _dataparallel_placed(h) or "ddp_cpu" in h.facts or "layer_input" in h.facts for h in hits
                )
            )
        )
    ),
    also=(
        Alternative(
            "device_map_distributed",
            "a model spread over the GPUs (device_map='auto') in a run of several processes",
            "Under a multi-process launcher each process keeps the whole model on its own GPU: load it with "
            "device_map={'': int(os.environ['LOCAL_RANK'])} (or no device_map), or run one process "
            "(--num_processes=1) and let device_map spread the model.",
            # DDP naming one CPU module: no GPU in it; THC's check: releases from before device_map
            unless=(*_CPU_OR_MPS, "ddp_cpu", "thnn_call", "thc_gpus"),
        ),
        Alternative(
            "gpu_selection",
            "ranks that picked their GPUs wrongly",
            "Each rank uses the GPU of its LOCAL_RANK (torch.cuda.set_device(LOCAL_RANK)); check how the "
            "launcher or the cluster (SLURM_NTASKS_PER_NODE, CUDA_VISIBLE_DEVICES) maps ranks to GPUs.",
            unless=(
                *_CPU_OR_MPS,
                "ddp_cpu",
                "dp_meta",
                "thnn_call",
            ),  # one CPU module, a weight with no data, or torch 0.x's refusal: no GPU choice
        ),
        # torch/nn/parallel/data_parallel.py checks every parameter against device_ids[0]; one on "meta" has no
        # data at all (device_map offload, init_empty_weights, low_cpu_mem_usage loading that left it unfilled)
        Alternative(
            "meta_weights_not_loaded",
            "a weight left on the meta device, never loaded (an offloaded or empty-initialised model)",
            "Load the model with its weights on a real device (from_pretrained without a device_map that "
            "offloads to CPU or disk, or device_map={'': 0}); do not wrap a device_map'd model in DataParallel.",
            when=("dp_meta",),
        ),
        # torch 0.x's legacy nn functions print the same refusal for an argument of another dtype
        Alternative(
            "dtype_mismatch",
            "an argument of another dtype (a target of ints where the loss takes a LongTensor, a DoubleTensor "
            "among FloatTensors)",
            "Read the got list: the argument between '!' marks is the refused one; cast it to the type the "
            "expected signature names (target.long(), x.float()).",
            when=("thnn_call",),
        ),
        # a library's own code placing the tensor: wherever the traceback runs through an installed package; the
        # likelier reading where the frame that raised is that package's own code and not a forward running on what
        # the script handed it (an optimizer's step restoring its state, a trainer's loop placing its batches: the
        # script's frame above it hands no tensor)
        replace(
            OPERATOR_CALLER,
            title="a tensor an installed package made, moved or restored itself, a bug of its release",
            fix="If the traceback's innermost frames are in an installed package (site-packages), not your script, and "
            "the tensor on the other device is one that package made, moved or restored itself (its optimizer "
            "state, a trainer's batches, a layer it created): search its issues for this message and update it to "
            "a release that fixed it (pip install --upgrade <package>), or pin the release its examples use.",
            when=(*_CPU_OR_MPS, "installed_frame"),
            first_when=("library_raised",),
            because="the traceback's innermost frame is {library_raised}'s own code, in {library_raised_in}()",
            told_by="the traceback's frames: raised in an installed package's own method (an optimizer's step, a "
            "trainer's loop) it is that package's tensor; in a forward called with the script's batch, the script's.",
        ),
    ),
    describe=_devices,
)

# "Caught RuntimeError in replica 1 on device 1." before the error it wraps: read as a fact of the log
REPLICA = ("in replica", R(r"Caught \w+ in replica (?P<replica>\d+) on device (?P<replica_device>\d+)"))


def _cpu_tensor(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    summary = "a CPU tensor was handed to an NCCL collective (NCCL takes CUDA tensors only)" + on_ranks(hits)
    operation = first(hits, "accelerate_op")
    if operation:
        summary = (
            f"a tensor not on the GPU was passed to accelerate's {operation} (its collectives take tensors on "
            "the process's device)" + on_ranks(hits)
        )
    fix = (
        "Move the tensor to the rank's GPU before the collective: t = t.to(torch.device('cuda', LOCAL_RANK)) "
        "(after torch.cuda.set_device(LOCAL_RANK)); metrics and Python numbers gathered at the end of an "
        "epoch are the usual culprits (a torchmetrics Metric created outside the LightningModule's __init__, in a "
        "hook such as on_validation_start, is never moved to the GPU: create it in __init__). For CPU tensors use a gloo group "
        "(dist.new_group(backend='gloo')) or init_process_group(backend='cpu:gloo,cuda:nccl')."
    )
    return summary, fix


CPU_TENSOR_NCCL = Recogniser(
    kind="cpu_tensor_nccl",
    title="CPU tensor in an NCCL collective",
    # torch 1.x ProcessGroupNCCL's check; torch 2.x's dispatcher says it as "No backend type associated with
    # device type cpu" when the group has only NCCL
    anchors=(
        "Tensors must be CUDA and dense",
        "No backend type associated with device type cpu",
        "while the `Accelerator` is configured for",
    ),
    templates=(
        "torch_native:tensors-must-be-cuda-and-dense",
        "torch_cpp:no-backend-type-associated-with-device",
        "accelerate:one-or-more-of-the-tensors",  # accelerate/utils/operations.py verify_operation
    ),
    facts=(R(r"One or more of the tensors passed to (?P<accelerate_op>[\w.]{1,80}) were not on the"),),
    # the refusal on a line that names the DataLoader's seed sharing for DataPipes is torch's own broadcast of
    # that seed, a release's bug (kinds/data_loader_releases.py, read by versions.py)
    reject=R(data_loader_releases.DATAPIPE_WORDS),
    # ProcessGroupNCCL refuses the tensor whoever calls the collective: the script (through accelerate's own
    # operations too: certain when its traceback shows so), or a library syncing its own state (a metric's)
    confirm=called_from_own_code("torch", "accelerate"),
    also=(
        library_call(
            "a library's code running the collective on tensors it keeps on the CPU (a metric's state, a "
            "logger's value)",
            "move what you hand it to the rank's GPU first, or give it its CPU/gloo option (a metric's "
            "compute_on_cpu / process_group), or update it if its own state is on the CPU.",
        ),
    ),
    describe=_cpu_tensor,
)


def _gpus_in(params: str) -> int:
    """How many distinct CUDA devices a DDP message's ``module parameters {...}`` set names."""
    return len(set(re.findall(r"type='cuda', index=(\d+)", params)))


def _device_map(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    fix = (
        "device_map='auto' is model parallelism inside one process; a multi-process launch (torchrun, "
        "accelerate launch --multi_gpu, deepspeed) already gives each process its own GPU. Either run one "
        "process (accelerate launch --num_processes=1, or plain python) and keep device_map='auto', or drop "
        "device_map for data parallel training (device_map={'': PartialState().process_index} per process)."
    )
    if facts.get("zero3_device_map"):
        return (
            "from_pretrained was given a device_map (or low_cpu_mem_usage=True) in a DeepSpeed ZeRO-3 run"
            + on_ranks(hits),
            "ZeRO-3 partitions the weights itself while the model loads (deepspeed.zero.Init, which transformers "
            "turns on when the TrainingArguments or the accelerate config use stage 3): drop device_map and "
            "low_cpu_mem_usage from from_pretrained in that run (build TrainingArguments before from_pretrained), "
            "or use ZeRO stage 2 (or no DeepSpeed) to keep a device_map.",
        )
    if facts.get("no_mesh"):
        summary = (
            f"a plain collective ({facts.get('mesh_op', 'c10d')}) got DTensor parameters: the model was built "
            "tensor-parallel (from_pretrained with device_map / tp_plan under torchrun) and then handed to "
            "DDP or a plain process group" + on_ranks(hits)
        )
        fix = (
            "Under torchrun, transformers' from_pretrained(device_map='auto' or tp_plan='auto') shards the model "
            "with tensor parallelism (DTensors over a DeviceMesh); DDP's broadcast of its parameters then finds "
            "no mesh. For data parallel training load it whole on the rank's GPU: "
            "from_pretrained(..., device_map={'': LOCAL_RANK}) (or device_map='cuda' after "
            "torch.cuda.set_device(LOCAL_RANK)); for tensor parallelism keep the DTensors and wrap with the "
            "same DeviceMesh (FSDP/fully_shard(device_mesh=...)), not with DDP."
        )
        return summary, fix
    if facts.get("ddp_device_ids"):
        params = facts.get("ddp_params", "")
        gpus = _gpus_in(params)
        summary = (
            f"DDP was given device_ids for a model whose parameters are on {gpus} GPUs"
            if gpus > 1
            else "DDP was given device_ids for a model that is not on one GPU"
        ) + on_ranks(hits)
        fix = (
            "DistributedDataParallel(model, device_ids=[LOCAL_RANK]) needs the whole model on that one GPU. A "
            "model spread over GPUs (from_pretrained(device_map='auto'), a manual split) is model parallelism: "
            "load it on the rank's GPU for data parallel training (device_map={'': LOCAL_RANK}), or keep it "
            "spread in one process and wrap it without device_ids. Under accelerate, a one-process run "
            "(--num_processes 1) must not be wrapped in DDP at all: an accelerate that still chooses multi-GPU "
            "there is a bug of that version: upgrade accelerate."
        )
        return summary, fix
    if facts.get("quantized_other_device"):
        return (
            "a 4-bit or 8-bit model sits whole on another GPU than the one this process trains on"
            + on_ranks(hits),
            "accelerate trains a bitsandbytes model where it was loaded, and this process's device (its "
            "LOCAL_RANK's GPU under a launcher) is another one: load it on the process's own GPU, "
            "from_pretrained(..., device_map={'': PartialState().process_index}) (or "
            "{'': torch.cuda.current_device()} after torch.cuda.set_device(LOCAL_RANK)), not device_map='auto' or "
            "'cuda:0' in every process.",
        )
    # accelerate/accelerator.py prepare_model: hf_device_map with more than one entry (several GPUs, or a GPU and
    # the CPU or disk) and any distributed_type but NO: several processes, and also one process under DeepSpeed,
    # FSDP or a torchrun launch (LOCAL_RANK set)
    summary = (
        "a model loaded with device_map='auto' (spread over GPUs, or a GPU and the CPU) is prepared in a "
        "distributed mode (several processes, or DeepSpeed / FSDP / torchrun even with one)" + on_ranks(hits)
    )
    fix += (
        " Under DeepSpeed or FSDP one process is a distributed mode too: load the model without device_map there "
        "(they place the weights themselves)."
    )
    return summary, fix


def _device_map_sure(hits: list[Hit], ctx: Context) -> bool:
    """accelerate's own checks are certain; DDP's device_ids check only when its message names parameters on
    two GPUs or more; a DTensor without a mesh never alone (tensor parallelism has other ways to get there)."""
    for hit in hits:
        if hit.facts.get("no_mesh") or hit.facts.get("device_map_warning"):
            continue
        if hit.facts.get("ddp_device_ids"):
            if _gpus_in(hit.facts.get("ddp_params", "")) > 1:
                return True
            continue
        return True
    return False


DEVICE_MAP_DISTRIBUTED = Recogniser(
    kind="device_map_distributed",
    title="device_map model in a multi-process run",
    anchors=(
        "has been loaded with `device_map='auto'` in any distributed mode",
        "contains `DTensor` parameters",
        "on a different device than the one you're training on",
        "precision on multiple devices in any distributed mode",
        "You've set device_map=`auto` while triggering a distributed run with torchrun",
        DDP_DEVICE_IDS,
        NO_MESH,
        # transformers' from_pretrained under ZeRO-3 (integrations/accelerate.py; 4.x modeling_utils.py adds
        # "`low_cpu_mem_usage=True` or"): ZeRO-3 places the weights itself
        "DeepSpeed Zero-3 is not compatible with",
    ),
    templates=(
        "accelerate:you-can-train-model-that-has",
        "accelerate:your-model-contains-dtensor-parameters-which",
        # accelerate/accelerator.py prepare_model: a 4/8-bit model placed on another GPU than this process's
        "accelerate:you-can-train-model-that-has-4",
        # accelerate/accelerator.py prepare_model: a 4/8-bit model spread over GPUs (device_map) in a DDP run
        "accelerate:you-can-train-model-that-has-2",
        # transformers/modeling_utils.py: its warning when from_pretrained(device_map="auto") runs under torchrun
        "transformers:you-ve-set-device-map-auto",
        # torch/nn/parallel/distributed.py: DDP's check of device_ids against the module's devices
        "torch:distributeddataparallel-device-ids-and-output-device",
        # torch/distributed/tensor/_dispatch.py: a DTensor reaching an op without a mesh (DDP's broadcast)
        "torch:found-no-devicemesh-from-dtensor-args",
        "transformers:deepspeed-zero-is-not-compatible-with",
    ),
    # DDP's device_ids message with a CPU parameter in it is a model not moved to the GPU (device_mismatch)
    match=R(rf"(?s)^(?!.*{DDP_DEVICE_IDS}).|{DDP_DEVICE_IDS}(?:(?!device\(type='cpu'\)).)*$"),
    span=3,
    facts=(
        R(rf"(?P<ddp_device_ids>{DDP_DEVICE_IDS})"),
        R(r"module\s+parameters \{(?P<ddp_params>[^}]{0,600})\}"),
        R(r"(?P<device_map_warning>You've set device_map=`auto` while triggering a distributed run)"),
        R(rf"(?P<no_mesh>{NO_MESH})(?: for (?P<mesh_op>[\w.]{{1,80}}?)!?(?:\s|$))?"),
        R(r"(?P<zero3_device_map>DeepSpeed Zero-3 is not compatible with [^\n]{0,80})"),
        R(r"(?P<quantized_other_device>on a different device than the one you're training on)"),
    ),
    confirm=_device_map_sure,
    also=(
        Alternative(
            "device_mesh_config",
            "tensor-parallel (DTensor) parameters wrapped with a process group instead of their DeviceMesh",
            "Give FSDP / fully_shard the DeviceMesh the tensor parallelism uses (device_mesh=mesh['dp'], a "
            "2-D mesh for TP + FSDP), not a process_group, and do not wrap DTensor parameters in DDP.",
            when=("no_mesh",),
        ),
        Alternative(
            "library_version_bug",
            "a one-process accelerate run still wrapped in DDP (an accelerate bug)",
            "With accelerate launch --num_processes 1 and a model spread by device_map, upgrade accelerate "
            "(pip install -U accelerate): the run must not be wrapped in DDP.",
            when=("ddp_device_ids",),
        ),
    ),
    describe=_device_map,
)


def _syncbn(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("syncbn_device"):
        return (
            "SyncBatchNorm runs on GPUs only, and it got a CPU input or a model still on the CPU"
            + on_ranks(hits),
            "Move the model and inputs to the GPU (model.cuda(LOCAL_RANK)) before wrapping it in DDP and before "
            "the forward pass, or convert SyncBatchNorm back to BatchNorm (norm_cfg type='BN') to run on the CPU.",
        )
    return (
        "SyncBatchNorm (SyncBN) is used, but no process group was initialised: it only works in a "
        "distributed run" + on_ranks(hits),
        SYNCBN_FIX,
    )


SYNCBN_FIX = (
    "SyncBatchNorm synchronises statistics across processes, so it needs init_process_group: in a "
    "single-process run (a notebook, python train.py) use plain BatchNorm (SyncBN -> BN, e.g. "
    "norm_cfg=dict(type='BN')); or start the run with torchrun --nproc_per_node=N so the script "
    "initialises the process group before building the model."
)
NO_GROUP = (
    "Default process group has not been initialized",
    "Default process group is not initialized",
)


# CPython os.py (_Environ.__getitem__): a script reading a variable that only a distributed launcher sets
ENV_KEYS = ("KeyError: 'LOCAL_RANK'", "KeyError: 'RANK'", "KeyError: 'WORLD_SIZE'")
# mmcv 1.x's mmcv/parallel/data_parallel.py: MMDataParallel.train_step and val_step assert
# len(self.device_ids) == 1. OpenMMLab's tools/train.py (mmdet, mmseg, mmaction2, mmpose 0.x/2.x) wraps the model
# in MMDataParallel(device_ids=cfg.gpu_ids) only when it is not launched distributed (--launcher none), so the
# refusal is a plain `python tools/train.py --gpus N` (or --gpu-ids 0 1) asking for several GPUs; older mmcv
# joined its two strings without a space ("MMDistributedDataParallelinstead.")
MM_DATA_PARALLEL = "MMDataParallel only supports single GPU training"
MM_DATA_PARALLEL_FIX = (
    "OpenMMLab's tools/train.py trains on several GPUs only when started distributed, one process per GPU: "
    "./tools/dist_train.sh <config> <GPUs> (it runs python -m torch.distributed.launch --nproc_per_node=<GPUs> "
    "tools/train.py <config> --launcher pytorch; under SLURM, tools/slurm_train.sh). Run without a launcher it "
    "wraps the model in mmcv's MMDataParallel, which takes one GPU only (--gpus 1, --gpu-ids 0, or "
    "CUDA_VISIBLE_DEVICES=0); --launcher pytorch in a plain python run has no RANK to read."
)


def _not_launched(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    key = facts.get("env_key")
    if facts.get("mm_data_parallel"):
        also = f", and with --launcher pytorch it read {key}, which only a launcher sets" if key else ""
        return (
            "OpenMMLab's tools/train.py was asked for several GPUs without a distributed launcher: its "
            f"non-distributed path wraps the model in mmcv's MMDataParallel, which trains on one GPU only{also}"
            + on_ranks(hits),
            MM_DATA_PARALLEL_FIX,
        )
    if key:
        return (
            f"the script reads {key} from the environment (os.environ['{key}']), which only a distributed "
            "launcher sets: it was started as a plain python process" + on_ranks(hits),
            f"Start it with a launcher that sets {key} for every process, one per GPU:\n"
            "torchrun --nproc_per_node=<GPUs> train.py   # or: python -m torch.distributed.launch --use_env, "
            "deepspeed, accelerate launch (the project's run script shows which)\n"
            f"To run one process without a launcher, read it with a default: int(os.environ.get('{key}', 0)) "
            "and skip the distributed setup.",
        )
    return (
        "the default process group is not initialised: a distributed call (a collective, DistributedSampler, "
        "DDP, get_rank) ran in a process that never called init_process_group — most often the script was "
        "started as one plain python process instead of by a distributed launcher" + on_ranks(hits),
        "Start it with the launcher the code expects, one process per GPU, e.g.\n"
        "torchrun --nproc_per_node=<GPUs> train.py   # or: accelerate launch / deepspeed / srun\n"
        "and make sure the script calls torch.distributed.init_process_group() (directly or through its "
        "framework's distributed option) before the first distributed call. To run on one GPU without a "
        "launcher, take the single-process path (no DistributedSampler, no DDP, no dist.* calls).",
    )


NOT_LAUNCHED_DISTRIBUTED = Recogniser(
    kind="not_launched_distributed",
    title="distributed code in a process that was not started distributed",
    anchors=(*NO_GROUP, *ENV_KEYS, MM_DATA_PARALLEL),
    templates=(
        "torch:default-process-group-has-not-been",
        "system:environ-keyerror-local-rank",
        "system:environ-keyerror-rank",
        "system:environ-keyerror-world-size",
        "third_party:mmcv-mmdataparallel-single-gpu-training",
    ),
    facts=(
        R(r"KeyError: '(?P<env_key>LOCAL_RANK|RANK|WORLD_SIZE)'"),
        R(rf"(?P<mm_data_parallel>{MM_DATA_PARALLEL})"),
    ),
    # the message says no process group exists, not why: a plain `python train.py`, an init the code skipped,
    # or SyncBatchNorm in a single-process run — only likely, with the SyncBN reading named beside it; mmcv's
    # MMDataParallel refusing several GPUs is only ever the non-distributed path of tools/train.py: certain
    confirm=lambda hits, ctx: any("mm_data_parallel" in h.facts for h in hits),
    also=(
        Alternative(
            "syncbn_misuse",
            "SyncBatchNorm in a single-process run",
            SYNCBN_FIX,
            unless=("env_key", "mm_data_parallel"),
        ),
        # mpirun and srun start the processes but set their own variables (OMPI_COMM_WORLD_*, SLURM_*)
        Alternative(
            "rank_env_missing",
            "a launcher that sets its own variables instead (mpirun, srun)",
            "Under mpirun or srun export the torch names from the scheduler's before the script reads them: "
            "LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK (mpirun) or LOCAL_RANK=$SLURM_LOCALID, RANK=$SLURM_PROCID, "
            "WORLD_SIZE=$SLURM_NTASKS (srun); or run one torchrun per node.",
            when=("env_key",),
            unless=("mm_data_parallel",),
        ),
        # deepspeed/comm/comm.py: DeepSpeed code (MoE groups, zero.Init, its comm) calling torch.distributed
        # before deepspeed.init_distributed() ran
        Alternative(
            "deepspeed_init_order",
            "DeepSpeed used before deepspeed.init_distributed()",
            "Call deepspeed.init_distributed() in every process before building the model (MoE layers, "
            "zero.Init) or calling dist.*; deepspeed.initialize(...) does it only when it runs first.",
            when=("saw_deepspeed",),
            unless=("env_key",),
        ),
    ),
    describe=_not_launched,
)


SYNCBN_MISUSE = Recogniser(
    kind="syncbn_misuse",
    title="SyncBatchNorm where it cannot run (no process group, or tensors off the GPU)",
    anchors=(
        *NO_GROUP,
        "SyncBatchNorm expected input tensor to be on GPU",
        "SyncBatchNorm layers only work with GPU modules",
    ),
    templates=(
        "torch:default-process-group-has-not-been",
        "torch:syncbatchnorm-expected-input-tensor-to-be",
        "torch:syncbatchnorm-layers-only-work-with-gpu",  # torch/nn/parallel/distributed.py, DDP's check
    ),
    facts=(
        R(
            r"(?P<syncbn_device>SyncBatchNorm expected input tensor to be on GPU|"
            r"SyncBatchNorm layers only work with GPU modules)"
        ),
    ),
    # "Default process group ..." is any distributed call without init: SyncBN only when the log shows it
    requires=("saw_syncbn", "syncbn_forward"),
    absorbs=("not_launched_distributed",),
    # and even then the call may be another's: SyncBatchNorm.forward asks for the world size without a process
    # group only in torch 1.x (torch/nn/modules/batchnorm.py: 2.x checks torch.distributed.is_initialized() first
    # and runs as plain BatchNorm), so a SyncBN named anywhere in the log beside it is likely, the script's own
    # distributed call (DistributedSampler, get_rank, DDP) without a launcher named; certain with SyncBN's forward
    # in the traceback, or on its GPU-only refusals
    confirm=lambda hits, ctx: "syncbn_forward" in ctx.facts or any("syncbn_device" in h.facts for h in hits),
    also=(
        Alternative(
            "not_launched_distributed",
            "another distributed call of the script (a DistributedSampler, dist.get_rank(), DDP) in a run no "
            "launcher started",
            "If the traceback ends in the script's own call rather than in SyncBatchNorm.forward (torch 2.x runs "
            "SyncBN as BatchNorm without a process group), start the run with torchrun --nproc_per_node=N, or guard "
            "the call with torch.distributed.is_initialized().",
            # SyncBN's own device checks name it: only "Default process group ..." is also another call's
            unless=("syncbn_device",),
        ),
    ),
    describe=_syncbn,
)


def _contiguous(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a non-contiguous tensor was handed to a collective (NCCL and gloo take contiguous tensors only)"
        + on_ranks(hits),
        "Make the tensor contiguous before the collective: dist.broadcast(t.contiguous(), src) (and copy back "
        "with t.copy_(...) when the result must land in a view), or build it contiguous (no .t(), .expand(), "
        "slicing of the last dimension). In a custom autograd Function, call grad.contiguous() in backward.",
    )


NONCONTIGUOUS_TENSOR = Recogniser(
    kind="noncontiguous_tensor",
    title="non-contiguous tensor in a collective",
    anchors=("Tensors must be contiguous", "input tensor has to be contiguous"),
    templates=(
        "torch_native:tensors-must-be-contiguous",
        "torch_cpp:input-tensor-has-to-be-contiguous",  # torch/csrc/distributed/c10d (gloo's collectives)
    ),
    # the process group refuses the tensor whoever runs the collective: the script or DDP on its model (certain
    # when the traceback shows so), or a library gathering a transposed or sliced tensor of its own
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's code running the collective on a tensor it transposed or sliced",
            "search its issues for the message and update it; a tensor your code hands it can be made "
            "contiguous first (x.contiguous()).",
        ),
    ),
    describe=_contiguous,
)


# the launchers that start a notebook's workers by forking its process (lightning/pytorch/strategies: the
# 'ddp_notebook' and 'ddp_fork' strategies, start method fork; accelerate/launchers.py: notebook_launcher)
FORK_LAUNCHERS = {
    "ddp_notebook": "Lightning's strategy 'ddp_notebook'",
    "ddp_fork": "Lightning's strategy 'ddp_fork'",
    "notebook_launcher": "accelerate's notebook_launcher",
}
FORK_LAUNCHER = tuple((name, R(rf"(?P<fork_launcher>\b{name}\b)")) for name in FORK_LAUNCHERS)

# vLLM in the log, whose workers are the forked subprocess: the prefix its worker processes print
# (executor/multiproc_worker_utils.py, 0.4.2+: "(VllmWorkerProcess pid=N)"; the V1 engine's multiproc_executor:
# VllmWorker), its V1 engine core process (EngineCore, "EngineCore_0"), or its package's frames
VLLM_SEEN = (
    ("VllmWorker", R(r"(?P<saw_vllm>\bVllmWorker(?:Process)?\b)")),
    ("EngineCore", R(r"(?P<saw_vllm>\bEngineCore(?:_\d+|Proc)?\b)")),
    ("vllm", R(r"(?P<saw_vllm>[\\/]vllm[\\/](?:executor|worker|engine|v1|entrypoints|model_executor)[\\/])")),
)
# vllm/envs.py: VLLM_WORKER_MULTIPROC_METHOD picks the start method of vLLM's worker processes (and, in the V1
# engine, of its engine core) from 0.4.2 on, "spawn" by default until 0.5.0 and "fork" from 0.5.1; `vllm serve`
# sets spawn itself from 0.6.3 (vllm-project/vllm#8823), and V1 switches to spawn only where
# torch.cuda.is_initialized(), which torch.cuda.device_count() / is_available() in the parent leave False while
# already making a forked child fail
VLLM_SPAWN = (
    "vLLM starts its worker processes (and in its V1 engine the engine core) with the start method "
    "VLLM_WORKER_MULTIPROC_METHOD names (vLLM 0.4.2+; fork by default from 0.5.1): set "
    "VLLM_WORKER_MULTIPROC_METHOD=spawn in the environment before vLLM starts (export it, or os.environ before "
    "importing vllm), and keep the script's top-level code under if __name__ == '__main__': (spawn imports the "
    "main module again). Any CUDA call in the parent before the LLM is built, torch.cuda.is_available() and "
    "device_count() included, is what makes a forked worker fail"
)


def _cuda_fork(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if all("init_error" in h.facts for h in hits):
        return (
            "CUDA could not be initialised in this process (CUDA error: initialization error): most often CUDA "
            "was already initialised in a parent that then forked it" + on_ranks(hits),
            "A forked child (DataLoader workers, multiprocessing's default start on Linux) cannot use CUDA its "
            "parent initialised: start them with spawn (torch.multiprocessing.set_start_method('spawn'), "
            "DataLoader(multiprocessing_context='spawn')) or keep CUDA out of the parent until they exist. If no "
            "fork is involved, the driver is in a bad state: nvidia-smi, and a reboot after a driver update.",
        )
    launcher = FORK_LAUNCHERS.get(ctx.facts.get("fork_launcher", ""), "")
    notebook = (
        f"{launcher} forks this process to start its workers, so nothing may initialise CUDA before it runs"
        if launcher
        else "A notebook launcher (Lightning's strategy='ddp_notebook', accelerate's notebook_launcher) forks the "
        "notebook's own process, so nothing may initialise CUDA before it runs"
    )
    torch_fix = (
        "A forked child cannot use the parent's CUDA context. Start the workers with spawn: "
        "torch.multiprocessing.set_start_method('spawn') (or mp.spawn / DataLoader(multiprocessing_context="
        "'spawn')), or keep CUDA out of the parent until the workers exist: no .cuda(), .to('cuda') or "
        "torch.cuda calls at import time, in a model's constructor or in the Dataset's __init__; DataLoader "
        "workers should return CPU tensors."
    )
    if "saw_vllm" in ctx.facts and not launcher:
        # vLLM forks its own workers: torch's start method does not reach them, its variable does
        return (
            "CUDA was initialised in the parent and then used in a process vLLM forked from it (a worker or "
            "its engine core)" + on_ranks(hits),
            f"{VLLM_SPAWN}. {torch_fix}",
        )
    return (
        "CUDA was initialised in the parent and then used in a forked subprocess" + on_ranks(hits),
        f"{torch_fix} {notebook}: keep the model on the CPU until the launch (the "
        "workers move it to their GPUs), do any other GPU work inside the launched function, and restart the "
        "kernel after a cell that touched CUDA.",
    )


CUDA_FORK = Recogniser(
    kind="cuda_fork",
    title="CUDA used in a forked subprocess",
    # and the CUDA runtime's "initialization error", as torch or NCCL report it (kinds/cuda_errors.py): a fork
    # after CUDA was initialised, or a driver in a bad state: only likely
    anchors=(
        "Cannot re-initialize CUDA in forked subprocess",
        # the notebook launchers' own words for it: accelerate's notebook_launcher re-raises torch's message as
        # this; Lightning checks torch.cuda.is_initialized() before a fork or forkserver start and raises
        "CUDA has been initialized before the `notebook_launcher` could create a forked subprocess",
        "Lightning can't create new processes if CUDA is already initialized",
        *cuda_errors.INITIALIZATION,
    ),
    templates=(
        "torch:cannot-re-initialize-cuda-in-forked",
        "third_party:accelerate-cuda-initialized-before-notebook-launcher",
        "third_party:lightning-cuda-already-initialized-fork",
        cuda_errors.INITIALIZATION_TEMPLATE,
    ),
    generic=cuda_errors.INITIALIZATION,
    facts=(R(r"(?P<init_error>initialization error)"),),
    also=(
        Alternative(
            "driver_mismatch",
            "an NVIDIA driver in a bad state (updated without a reboot, its kernel module and libraries apart)",
            "nvidia-smi shows whether the driver answers; after a driver update reboot (or reload the nvidia "
            "kernel modules) so the module and the libraries are one version.",
            when=("init_error",),
        ),
    ),
    describe=_cuda_fork,
)


def _nonscalar(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    dp = "saw_dataparallel" in ctx.facts
    return (
        (
            "DataParallel returned one loss per GPU (a vector), and backward() needs a scalar"
            if dp
            else "backward() was called on a tensor that is not a scalar (one loss per GPU under DataParallel?)"
        )
        + on_ranks(hits),
        "nn.DataParallel gathers the loss each replica returns into a vector of one value per GPU: reduce it "
        "before backward, loss = loss.mean() (or .sum()); with your own non-scalar output pass its gradient: "
        "out.backward(torch.ones_like(out)). DistributedDataParallel keeps one scalar loss per process.",
    )


DP_NONSCALAR_LOSS = Recogniser(
    kind="dp_nonscalar_loss",
    title="backward on a per-GPU loss vector",
    anchors=("grad can be implicitly created only for scalar outputs",),
    templates=("torch:grad-can-be-implicitly-created-only-2",),
    # any non-scalar backward prints it; DataParallel in the log makes the per-GPU loss the cause
    confirm=lambda hits, ctx: "saw_dataparallel" in ctx.facts,
    describe=_nonscalar,
)


def _no_grad(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "DistributedDataParallel wraps a module with no parameter that requires a gradient" + on_ranks(hits),
        "DDP synchronises gradients, so a frozen module (a teacher, a reference or EMA model, an encoder with "
        "requires_grad=False) must not be wrapped: use it as it is (under torch.no_grad()), wrap only the "
        "trained module, or unfreeze what should train before wrapping. Where a training stage's config chooses "
        "what trains (LoRA or adapter targets, modules a stage adds), check that the config leaves this module "
        "some trainable parameters. accelerate's prepare() before 0.14.0 wraps every module it is given (0.14.0, "
        "huggingface/accelerate#761, leaves one without trainable parameters unwrapped): upgrade accelerate, or "
        "move a frozen module with .to(accelerator.device) instead of preparing it.",
    )


DDP_NO_GRAD_PARAMS = Recogniser(
    kind="ddp_no_grad_params",
    title="DDP around a module without trainable parameters",
    anchors=("doesn't have any parameter that requires a gradient",),
    templates=("torch:distributeddataparallel-is-not-needed-when-module",),
    describe=_no_grad,
)


def _mpi(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    argument = merged(hits).get("hydra_argument")
    if merged(hits).get("mpi_versions_differ"):
        return (
            "mpirun met an MPI process or daemon of another Open MPI release on another host"
            + on_ranks(hits),
            "Every host must run the same Open MPI: the mpirun you start and the orted/prted it starts over ssh "
            "come from the PATH a non-interactive ssh login gets there (ssh <host> which orted mpirun). Install "
            "the same release everywhere, and point mpirun at it: mpirun --prefix <its install folder> (or set "
            "PATH and LD_LIBRARY_PATH in ~/.bashrc above its interactive-only part).",
        )
    if argument:
        return (
            f"MPICH's mpiexec (Hydra) does not know the argument {argument}: the command, or the program it "
            "starts, was written for another MPI (Open MPI's options, a program built against Open MPI)"
            + on_ranks(hits),
            "Use one MPI throughout: check which one runs (mpiexec --version; `which mpirun mpiexec`) and which "
            "one mpi4py / torch were built against (python -c 'import mpi4py; print(mpi4py.get_config())'). "
            "Open MPI options (--allow-run-as-root, -x VAR, --oversubscribe, --mca) are MPICH's -genv VAR / "
            "-f hostfile; or put Open MPI's mpirun first on PATH.",
        )
    return (
        "the MPI backend got a CUDA tensor, and this MPI is not CUDA-aware" + on_ranks(hits),
        "Use the NCCL backend for GPU tensors (RCCL on ROCm: backend='nccl' there too), keeping MPI only to "
        "start the processes; or move tensors to the CPU for MPI collectives; or build torch against a "
        "CUDA-aware Open MPI (ompi_info --parsable --all | grep mpi_built_with_cuda_support:value).",
    )


# Open MPI's own options and its PMI's argument: MPICH's Hydra not knowing one of them names the mix-up
_OPEN_MPI_ARGUMENTS = {
    "pmi_args",
    "allow-run-as-root",
    "oversubscribe",
    "mca",
    "map-by",
    "bind-to",
    "x",
    "npernode",
}

MPI_IMPLEMENTATION = Recogniser(
    kind="mpi_implementation",
    title="MPI implementation that lacks what the job needs",
    anchors=(
        "doesn't have CUDA-aware MPI support",
        "): unrecognized argument ",
        # Open MPI's (oob/tcp) and PRRTE's (errmgr) help text: an mpirun of one release met a daemon of another
        "detected a mismatch in versions between two processes",
    ),
    templates=(
        "torch_native:mpi-not-cuda-aware",
        "system:mpich-hydra-unrecognized-argument",
        "schedulers:ompi-version-mismatch",
        "schedulers:prte-version-mismatch",
    ),
    match=R(
        r"doesn't have CUDA-aware MPI support|\[mpiexec@[^\]\s]{1,255}\] match_arg \([^)\n]{1,100}\): unrecognized|"
        r"(?P<mpi_versions_differ>detected a mismatch in versions between two processes)"
    ),
    facts=(R(r"match_arg \([^)\n]{1,100}\): unrecognized argument (?P<hydra_argument>[\w-]{1,60})"),),
    # Hydra refusing an argument is also a typo in the command: certain only for another MPI's argument
    confirm=lambda hits, ctx: any(
        h.facts.get("hydra_argument", "pmi_args").lstrip("-") in _OPEN_MPI_ARGUMENTS for h in hits
    ),
    describe=_mpi,
)


def _dp_output(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "nn.DataParallel could not gather the replicas' outputs: forward returned something its gather does "
        "not combine (a torch.distributions object, a custom class, a None or a number inside a dict)"
        + on_ranks(hits),
        "DataParallel's gather (torch/nn/parallel/scatter_gather.py) concatenates tensors and goes into "
        "tuples, lists and dicts of tensors only. Return tensors from forward (a distribution's parameters "
        "rather than the distribution; the loss computed inside forward), or use DistributedDataParallel "
        "(one process per GPU), which never gathers outputs; on one GPU, do not wrap the model.",
    )


DATAPARALLEL_OUTPUT = Recogniser(
    # CPython's zip() raising inside scatter_gather.py's gather_map (`type(out)(map(gather_map,
    # zip(*outputs)))`) when an output is neither a tensor nor a container of tensors; any zip over a
    # non-iterable prints it, so only with DataParallel (or its gather_map) in the log, and only likely: a
    # framework's own DataParallel wrapper returning such outputs is that framework's bug
    kind="dataparallel_output",
    title="DataParallel output that cannot be gathered",
    anchors=("must support iteration",),
    templates=("system:zip-argument-must-support-iteration",),
    match=R(r"zip argument (?:#\d+ )?must support iteration"),
    requires=("saw_dataparallel",),
    generic=("must support iteration",),
    also=(
        Alternative(
            "library_version_bug",
            "a training framework's own DataParallel wrapper (a dp strategy) returning such outputs",
            "If a framework runs the DataParallel for you (e.g. PyTorch Lightning's 'dp' strategy), this is a "
            "bug of some of its releases: upgrade it (pip install -U pytorch-lightning) or use its ddp strategy.",
        ),
    ),
    describe=_dp_output,
)


def _dp_custom_batch(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    holder, attribute = first(hits, "pyg_holder") or "tuple", first(hits, "pyg_attribute") or "num_nodes"
    return (
        f"a graph batch reached the model as a plain {holder} ('{attribute}' is an attribute of PyTorch "
        "Geometric's Data/Batch): most often torch.nn.DataParallel, which cannot split a PyG batch and hands the "
        "replicas copies in tuples, or a multi-GPU path of the training script built on it" + on_ranks(hits),
        "torch.nn.DataParallel scatters tensors (and lists, tuples, dicts of them) only; a PyG Batch is none of "
        "these. For several GPUs use PyG's own torch_geometric.nn.DataParallel with its DataListLoader (it splits "
        "a list of Data objects between the GPUs), or better DistributedDataParallel with one process per GPU "
        "and torch_geometric.loader.DataLoader in each; on one GPU, do not wrap the model. Check too that the "
        "loader is PyG's (torch_geometric.loader.DataLoader), whose collate builds a Batch: torch's own "
        "DataLoader turns Data objects into lists.",
    )


DATAPARALLEL_CUSTOM_BATCH = Recogniser(
    # CPython's AttributeError when a PyTorch Geometric model reads an attribute of its Data/Batch (num_nodes,
    # num_graphs, edge_index) from a tuple or list: a batch nn.DataParallel could not scatter, or a loader that did
    # not collate PyG data. The attribute is PyG's, the cause only likely (a project's own broken multi-GPU path,
    # or the wrong loader, print the same)
    kind="dataparallel_custom_batch",
    title="a library's batch object DataParallel cannot split",
    anchors=(
        "' object has no attribute 'num_nodes'",
        "' object has no attribute 'num_graphs'",
        "' object has no attribute 'edge_index'",
    ),
    templates=("third_party:pyg-batch-attribute-on-tuple", "system:object-has-no-attribute"),
    match=R(r"'(?:tuple|list)' object has no attribute '(?:num_nodes|num_graphs|edge_index)'"),
    facts=(
        R(
            r"'(?P<pyg_holder>tuple|list)' object has no attribute '(?P<pyg_attribute>num_nodes|num_graphs|edge_index)'"
        ),
    ),
    generic=(
        "' object has no attribute 'num_nodes'",
        "' object has no attribute 'num_graphs'",
        "' object has no attribute 'edge_index'",
    ),
    also=(
        Alternative(
            "library_version_bug",
            "the training project's own multi-GPU code path, broken in the release installed",
            "When the project's script wraps the model for several GPUs itself (a --multi_gpus or --parallel "
            "flag), update the project to a version that fixed its multi-GPU training, or train on one GPU "
            "(CUDA_VISIBLE_DEVICES=0) until it does.",
        ),
    ),
    describe=_dp_custom_batch,
)


def _mesh(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    said = torchtitan_dims.explain(facts)
    if said:
        return said[0] + on_ranks(hits), said[1]
    if facts.get("placements_len"):
        return (
            f"a DTensor was given another number of placements than its DeviceMesh has dimensions "
            f"({' '.join(facts['placements_len'].split())[:160]})" + on_ranks(hits),
            "distribute_tensor / DTensor.from_local / redistribute and the DTensor factories (torch.distributed.tensor."
            "zeros / ones / empty / full / rand / randn) take one placement per mesh dimension: on a 2-D "
            "mesh (dp, tp) pass two, e.g. [Replicate(), Shard(0)]; to place along one dimension only, use that "
            "dimension's 1-D mesh (mesh['tp']) with one placement. A parallelize_plan or FSDP2 applied with the whole "
            "2-D mesh where the 1-D slice was meant (fully_shard(..., mesh=mesh['dp']), parallelize_module(..., "
            "mesh['tp'], plan)) prints it too.",
        )
    if facts.get("mesh_ranks"):
        summary = f"the DeviceMesh asks for {facts['mesh_ranks']} ranks but the run has {facts['world_size']} processes"
    elif facts.get("hetero_ranks"):
        summary = (
            f"the DeviceMesh needs the same number of GPUs on every node: {facts['hetero_ranks']} ranks do not "
            f"split into nodes of {facts['hetero_gpus']} GPUs"
        )
    elif facts.get("tp_size"):
        summary = (
            f"Lightning's ModelParallelStrategy sizes do not make the world size: data_parallel_size="
            f"{facts['dp_size']} x tensor_parallel_size={facts['tp_size']} != {facts['world_size']} processes"
        )
    elif facts.get("mesh_names") or facts.get("mesh_ndim"):
        said = " ".join((facts.get("mesh_names") or facts["mesh_ndim"]).split())
        summary = f"the DeviceMesh's dimensions or their names do not fit how it is used: {said}"
    else:
        summary = "HSDP's 2-D DeviceMesh was built without mesh_dim_names"
    fix = (
        "Name every dimension once, as many names as dimensions (init_device_mesh('cuda', (2, 4), "
        "mesh_dim_names=('dp', 'tp'))), and index the mesh by those names (mesh['dp']); FSDP2's fully_shard "
        "takes a 1-D mesh, or a 2-D one for HSDP, and FSDP1's HYBRID_SHARD a 2-D one.\n"
        if facts.get("mesh_names") or facts.get("mesh_ndim")
        else ""
    ) + (
        "The mesh's shape must multiply to the world size the launcher started (nnodes x nproc_per_node), with "
        "the inner (tensor-parallel) dimension within one node: init_device_mesh('cuda', (dp, tp), "
        "mesh_dim_names=('dp', 'tp')) with dp * tp == WORLD_SIZE and tp dividing the GPUs per node (every node "
        "with the same number of GPUs); compute dp from int(os.environ['WORLD_SIZE']) rather than a constant. "
        "HSDP (fully_shard / FSDP HYBRID_SHARD) takes a 2-D mesh named ('replicate', 'shard'), and FSDP combined "
        "with tensor parallelism takes the mesh's data-parallel slice (device_mesh=mesh['dp']), not a process group."
    )
    return summary + on_ranks(hits), fix


DEVICE_MESH_CONFIG = Recogniser(
    kind="device_mesh_config",
    title="DeviceMesh that does not fit the run",
    anchors=(
        "Mesh should not be bigger than default world size",
        "DeviceMesh only support homogeneous hardware",
        "Please init the 2D mesh for HSDP with mesh_dim_names specified",
        "mesh_shape and mesh_dim_names should have same length",
        "Each mesh_dim_name must be unique",
        "specified. Valid mesh_dim_names are",
        "Mesh dimension '",
        "DeviceMesh without mesh_dim_names",
        "No `mesh_dim_names` found.",
        "not found in mesh.mesh_dim_names",
        "fully_shard expects a 1D or 2D DeviceMesh but got",
        "Expected device_mesh to have ndim=2 but got",
        "Expects mesh with ndim equal to number of ProcessGroups",
        "` multiplied should equal the world size (",
        "`placements` must have the same length as `device_mesh.ndim`",
        "mesh dimension does not match the length of placements",
        *torchtitan_dims.ANCHORS,  # torchtitan's ParallelDims: the job config's degrees, a mesh left off
    ),
    templates=(
        # torch/distributed/device_mesh.py: the mesh against the processes started and the GPUs per node
        "torch:mesh-should-not-be-bigger-than",
        "torch:devicemesh-only-support-homogeneous-hardware-but",
        # torch/distributed/fsdp/_fully_shard/_fsdp_init.py: HSDP's mesh
        "torch:please-init-the-mesh-for-hsdp",
        # device_mesh.py: the dimension names against the shape, and a mesh indexed by names it lacks
        "torch:mesh-shape-and-mesh-dim-names",
        "torch:each-mesh-dim-name-must-be",
        "torch:invalid-mesh-dim-names-specified-valid",
        "torch:mesh-dimension-does-not-exist",
        "torch:cannot-slice-devicemesh-without-mesh-dim",
        "torch:cannot-flatten-devicemesh-without-mesh-dim",
        "torch:no-mesh-dim-names-found",
        "torch:expects-mesh-with-ndim-equal-to",
        # FSDP2's fully_shard (_fsdp_init.py) and FSDP1's HYBRID_SHARD (_init_utils.py): the mesh's dimensions
        "torch:mesh-dim-name-not-found-in",
        "torch:fully-shard-expects-or-devicemesh-but",
        "torch:expected-device-mesh-to-have-ndim",
        # lightning/fabric/strategies/model_parallel.py _setup_device_mesh: ModelParallelStrategy's two sizes
        "lightning:the-sizes-data-parallel-size-and",
        # torch/distributed/tensor/_api.py distribute_tensor / from_local: placements against the mesh's dimensions
        "torch:placements-must-have-the-same-length",
        # the same check in _dtensor_init_helper, under the DTensor factories (zeros, ones, empty, full, rand...)
        "torch:mesh-dimension-does-not-match-the",
        *torchtitan_dims.TEMPLATES,  # torchtitan/distributed/parallel_dims.py (torchtitan_dims.py)
    ),
    facts=(
        R(r"bigger than default world size (?P<world_size>\d+), but found (?P<mesh_ranks>\d+) ranks"),
        R(
            r"data_parallel_size=(?P<dp_size>\d+)` and `tensor_parallel_size=(?P<tp_size>\d+)` multiplied should "
            r"equal the world size \((?P<world_size>\d+)\)"
        ),
        R(
            r"homogeneous hardware, but found (?P<hetero_ranks>\d+) ranks and (?P<hetero_gpus>\d+) \w+ devices"
        ),
        R(
            r"(?P<mesh_names>mesh_shape and mesh_dim_names should have same length[^\n]{0,120}|Each mesh_dim_name must "
            r"be unique[^\n]{0,120}|Invalid mesh_dim_names [^\n]{1,160}|Mesh dimension '[^'\n]{1,60}' does not exist|"
            r"Cannot (?:slice|flatten) a DeviceMesh without mesh_dim_names|No `mesh_dim_names` found|Mesh dim name "
            r"'[^'\n]{1,60}' not found in mesh\.mesh_dim_names[^\n]{0,80})"
        ),
        R(
            r"(?P<mesh_ndim>fully_shard expects a 1D or 2D DeviceMesh but got[^\n]{0,120}|Expected device_mesh to have "
            r"ndim=2 but got[^\n]{0,40}|Expects mesh with ndim equal to number of ProcessGroups[^\n]{0,120})"
        ),
        R(r"`placements` must have the same length as `device_mesh\.ndim`! (?P<placements_len>[^\n]{1,120})"),
        R(r"(?P<placements_len>mesh dimension does not match the length of placements)"),
        *torchtitan_dims.FACTS,
    ),
    # torchtitan's mesh refusal is also its own parallelize code asking without checking (torchtitan_dims.py)
    also=(torchtitan_dims.ALTERNATIVE,),
    generic=(torchtitan_dims.MESH_OFF,),
    # "Mesh dimension '...'" only as device_mesh.py's lookup of a name the mesh lacks
    reject=R(r"Mesh dimension '[^'\n]{0,60}'(?! does not exist)"),
    describe=_mesh,
)


def _pack_lengths(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    got = (first(hits, "lengths_got") or "").strip()
    summary = (
        "pack_padded_sequence was given its lengths as a GPU tensor"
        + (f" ({got})" if got else "")
        + "; they must be a CPU int64 tensor or a list"
        + on_ranks(hits)
    )
    fix = (
        "torch.nn.utils.rnn.pack_padded_sequence reads the lengths on the host, so `lengths` must be a 1-D CPU "
        "int64 tensor or a Python list, even when the input is on the GPU: pass lengths.cpu() (or "
        "lengths.to('cpu', torch.int64), or lengths.tolist()). Code written for torch before 1.7 often breaks "
        "here because lengths derived from a CUDA tensor now stay on its device; inside DataParallel keep the "
        "lengths a CPU tensor or list so each replica gets its own slice."
    )
    return summary, fix


PACK_LENGTHS_ON_GPU = Recogniser(
    # aten/src/ATen/native/PackedSequence.cpp _pack_padded_sequence: TORCH_CHECK(lengths.is_cpu() ...)
    kind="pack_lengths_on_gpu",
    title="pack_padded_sequence lengths on the GPU",
    anchors=("'lengths' argument should be a 1D CPU int64 tensor",),
    templates=("torch_native:pack-lengths-1d-cpu-int64",),
    facts=(R(r"'lengths' argument should be a 1D CPU int64 tensor, but got (?P<lengths_got>[^\n]{1,80})"),),
    # the check refuses whoever calls pack_padded_sequence: the script (certain when its traceback shows so), or
    # a library's RNN code written for torch before 1.7
    confirm=called_from_own_code("torch"),
    also=(
        library_call(
            "a library's RNN code written for torch before 1.7 passing the lengths on the GPU",
            "update the library to a release made for torch 1.7 or later, or pin torch below 1.7 for it.",
        ),
    ),
    describe=_pack_lengths,
)


def _offloaded_moved(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "a model loaded with a device_map that left some of its modules on the CPU or the disk (offloaded: the "
        "GPU had no room for them) was then moved with .to() / .cuda(), which accelerate refuses"
        + on_ranks(hits),
        "from_pretrained(..., device_map='auto') already placed the model, and what did not fit on the GPU sits "
        "on the CPU or the disk ('Some parameters are on the meta device because they were offloaded'): drop the "
        ".to(device) / .cuda() after loading. To have it whole on one GPU, load it there (device_map={'': 0}) and "
        "make it fit: a GPU with more memory, 8-bit or 4-bit quantization (BitsAndBytesConfig), or max_memory "
        "for the other GPUs. Under DeepSpeed or FSDP (they move the model to the rank's GPU themselves) load it "
        "without a device_map.",
    )


OFFLOADED_MODEL_MOVED = Recogniser(
    # accelerate/big_modeling.py dispatch_model: the wrapper it puts on the model's .to / .cuda / .npu when the
    # device_map offloaded modules (a parameter left on the meta device)
    kind="offloaded_model_moved",
    title="a model partly offloaded by its device_map, then moved",
    anchors=("You can't move a model that has some modules offloaded to cpu or disk",),
    templates=("third_party:accelerate-move-offloaded-model",),
    # the wrapper refuses whoever moves the model: the script (certain when its traceback shows so), or a
    # library's code that moves what it is given (deepspeed.initialize's engine, a UI's model loader)
    confirm=called_from_own_code("torch", "accelerate", "transformers"),
    also=(
        library_call(
            "a library's code moving the model it was given (DeepSpeed's engine, a node or pipeline's loader)",
            "load the model without a device_map for it (DeepSpeed and FSDP place the model themselves), or "
            "update the library to a release that keeps a dispatched model where it is.",
        ),
    ),
    describe=_offloaded_moved,
)


RECOGNISERS = (
    OFFLOADED_MODEL_MOVED,
    PACK_LENGTHS_ON_GPU,
    DATAPARALLEL_OUTPUT,
    DATAPARALLEL_CUSTOM_BATCH,
    CUDA_FORK,
    DP_NONSCALAR_LOSS,
    DDP_NO_GRAD_PARAMS,
    MPI_IMPLEMENTATION,
    DEVICE_MAP_DISTRIBUTED,
    DEVICE_MESH_CONFIG,
    CPU_TENSOR_NCCL,
    NONCONTIGUOUS_TENSOR,
    DEVICE_MISMATCH,
    NOT_LAUNCHED_DISTRIBUTED,
    SYNCBN_MISUSE,
)
