"""More releases that changed what a training script calls, each read from the message its source prints.

api_changes.py's companion (versions.py's ``dependency_version`` leads with either):

- OpenMMLab's packages pin the MMCV they run with: ``mmdet/__init__.py`` (and ``mmseg``, ``mmdet3d``,
  ``mmocr``... the same lines) asserts ``mmcv_minimum_version <= mmcv_version <= mmcv_maximum_version`` (``<`` in
  the 3.x releases) with "MMCV=={mmcv.__version__} is used but incompatible. Please install
  mmcv>={mmcv_minimum_version}, <={mmcv_maximum_version}." (the bounds as strings, or as ``digit_version``
  tuples in some releases: "[1, 1, 4]", "(1, 3, 13, 0, 0, 0)"; mmseg 1.x prints only the lower one). Nothing
  else prints it: certain;
- Pillow 9.2 deprecated ``FreeTypeFont.getsize``/``getsize_multiline``/``getoffset`` and ``ImageDraw.textsize``/
  ``multiline_textsize`` (``PIL/ImageFont.py``: ``deprecate("getsize", 10, "getbbox or getlength")``), and
  Pillow 10.0.0 removed them: "'FreeTypeFont' object has no attribute 'getsize'" is code (YOLOv5's
  ``utils/plots.py`` before its fix) written for Pillow 9; the same release removed ``Image.ANTIALIAS``,
  ``Image.LINEAR`` and ``Image.CUBIC`` (deprecated in 9.1; aliases of LANCZOS, BILINEAR and BICUBIC): "module
  'PIL.Image' has no attribute 'ANTIALIAS'" is code (a dataset's resize) written for Pillow 9 as well;
- librosa 0.10 made the arguments of its filters and features keyword-only (``librosa/filters.py``: ``def mel(*,
  sr, n_fft, ...)``; ``feature.melspectrogram(*, y=None, sr=...)``; ``util.pad_center(data, *, size, ...)``): a
  positional call prints CPython's "mel() takes 0 positional arguments but 5 were given". Another function named
  so that takes keyword arguments only prints the same, so the reading is certain only with librosa in the log;
- ``torch.onnx`` refuses an opset newer than its release knows (``torch/onnx/symbolic_helper.py``
  ``_set_opset_version``, later ``torch/onnx/_globals.py``: "Unsupported ONNX opset version: {}"; the newest
  opset is ``_onnx_main_opset``, then ``_constants.ONNX_MAX_OPSET``: 15 in torch 1.11, 16 in 1.12, 17 in 1.13,
  18 in 2.0, 19 in 2.1, 20 in 2.4). Other converters print the same words for their own limits, so
  it is certain only beside torch.onnx's frames;
- PyTorch Geometric 2.0 moved its loaders from ``torch_geometric/data/dataloader.py`` to the new
  ``torch_geometric/loader/`` package: "No module named 'torch_geometric.loader'" is code written for PyG 2 run
  with a PyG 1.x (a folder named torch_geometric shadowing the package prints it too: versions.py names that);
- PyTorch 0.4 made reductions (a loss, ``x.sum()``) return 0-dim tensors where 0.3 returned one-element ones, so
  the 0.3 idiom ``loss.data[0]`` indexes a 0-dim tensor: 0.4 warned ("invalid index of a 0-dim tensor. This will
  be an error in PyTorch 0.5"), 0.5 on raise IndexError (``torch/csrc/autograd/python_variable_indexing.cpp``
  applySelect, later ``aten/src/ATen/TensorIndexing.h``: "invalid index of a 0-dim tensor. Use tensor.item() to
  convert a 0-dim tensor to a number"). Indexing a script's own scalar (a metric already reduced) prints the
  same, so it is certain only with the 0.3 idiom ``.data[0]`` quoted in the log;
- ...and the same idiom through NumPy, ``loss.data.cpu().numpy()[0]``: under 0.3 the array had one element, since 0.4
  it is 0-dimensional and NumPy refuses the index (``numpy/_core/src/multiarray/mapping.c`` prepare_index: "too many
  indices for array: array is 0-dimensional, but 1 were indexed", "too many indices for array" before NumPy 1.19).
  Read only with the traceback's source line ``.numpy()[0]`` right above the refusal; a script's own array indexed
  once too often prints the same, so likely;
- PyTorch 1.5's type promotion refuses to store an in-place or ``out=`` result in a tensor of a dtype it cannot be
  cast to (``aten/src/ATen/TensorIterator.cpp`` compute_types: "result type Float can't be cast to the desired
  output type Long"), where older releases truncated silently, and 1.12's type-promoting ``clamp`` does the same
  for an integer tensor clamped in place with floating bounds (``native/TensorCompare.cpp`` clamp's meta function,
  "disallow type promoting inplace op"): YOLOv5's ``build_targets`` and its many copies. A script's own new
  in-place op mixing dtypes prints the same, so it is certain only with ``clamp_(`` quoted in the log;
- torch's MPS backend takes ``cumsum`` of int64 (``attention_mask.long().cumsum(-1)``, how transformers' models make
  position ids) from macOS 13.3's MPSGraph: ``aten/src/ATen/native/mps/operations/UnaryOps.mm`` checks
  ``TORCH_CHECK(macOS13_3_plus || input.scalar_type() != ScalarType::Long, "MPS does not support cumsum op with
  int64 input. Support has been added in macOS 13.3")``; torch 2.0.0 printed the first sentence alone and its macOS
  check was broken (pytorch#96610, fixed by pytorch#96733, first in the nightlies). An older macOS or that torch:
  both releases, certain;
- torch's own operators, whose rules a release changed under code written before it: ``torch.stft`` on a real
  input without ``return_complex`` warned from 1.8 and is an error from 2.0 (``aten/src/ATen/native/
  SpectralOps.cpp``: "stft requires the return_complex parameter be given for real inputs, and will further
  require that return_complex=True in a future PyTorch release."; the older warning says "will soon require"):
  only that call prints it, certain; ``/`` and ``torch.div`` on two integer tensors raised in torch 1.6 only
  (``BinaryOps.cpp``: "Integer division of tensors using div or / is no longer supported, and in a future release
  div will perform true division ..."; 1.5 warned, 1.7 divides truly): certain; ``-`` with a bool tensor
  (``1 - mask``), refused since 1.2, when comparisons began to return bool instead of uint8 (``BinaryOps.cpp``
  sub_check: "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a
  mask, use the `~` or `bitwise_not()` (later `logical_not()`) operator instead."): code written for torch 1.1
  or older, or a script's own new mask arithmetic, so likely;
- torch 1.9 gave ``nn.MultiheadAttention`` (``torch/nn/modules/activation.py``) and ``nn.Transformer``,
  ``TransformerEncoderLayer``, ``TransformerDecoderLayer`` (``transformer.py``) a ``batch_first=False`` argument
  that 1.8 and older do not take: CPython's bare "__init__() got an unexpected keyword argument 'batch_first'"
  (torch before 1.9 runs on Pythons that do not name the class) is code written for torch 1.9+ under an older
  torch. A class of the code's own may refuse the name too: certain only with one of those classes called on a
  line of the log;
- torch 1.11's ``nn.Upsample.forward`` (``torch/nn/modules/upsampling.py``) passes
  ``recompute_scale_factor=self.recompute_scale_factor``, an attribute its ``__init__`` sets from the same
  release on: an Upsample unpickled from a model saved whole under an older torch (YOLOv5's and YOLOv3's released
  weights, saved with torch 1.7-1.10) has none, and "'Upsample' object has no attribute 'recompute_scale_factor'" follows. Nothing else reads that
  attribute of an Upsample: certain.

(Lightning 1.5's removed ``pytorch_lightning.metrics`` is a row of catalog/api_history.tsv, with torchmetrics as
its replacement from the package's own deprecation text: kinds/api_history.py reads it.)

`change(facts)` says which of them a line is; `decisive(facts, ctx)` whether the log makes it certain.
- pytorch-ignite 0.3.0 (2020-01-21) added ``Checkpoint`` and ``DiskSaver`` to ``ignite.handlers`` (0.2.1's
  ``handlers/__init__.py`` exports ``ModelCheckpoint``, ``Timer``, ``EarlyStopping`` and ``TerminateOnNan`` only) and
  made events callable to filter them (``engine/engine.py``: ``class Events(CallableEvents, Enum)``,
  ``CallableEvents.__call__(event_filter=None, every=None, once=None)``; before it ``class Events(Enum)``). So
  CPython's "cannot import name 'Checkpoint'" on a ``from ignite.handlers import`` line, and "'Events' object is
  not callable" under a source line calling ``Events.ITERATION_COMPLETED(every=...)``, are code (often ignite's own
  examples from its master branch) run with an ignite before 0.3.0. Read only with ignite's import or the event's
  call in the log; a module of the user's own shadowing the name prints the same, so likely;
- MMCV 1.x's data pipeline hands batches over wrapped in ``mmcv.parallel.DataContainer`` (``data_container.py``;
  ``collate`` builds them), which only MMCV's own scatter unwraps (``mmcv/parallel/scatter_gather.py``
  ``scatter``: a DataContainer's ``.data`` is scattered; torch's scatter passes it on as an opaque object), called
  by ``MMDataParallel``/``MMDistributedDataParallel``. A DataContainer that reaches a torch op is refused by
  torch's argument parser (``torch/csrc/utils/python_arg_parser.cpp``: "conv2d(): argument 'input' (position 1)
  must be Tensor, not DataContainer", and "expected Tensor as element 0 in argument 0, but got DataContainer" for
  a list of tensors): the model was not wrapped in MMCV's wrappers (torch's DataParallel/DDP, or a model called on
  the batch directly), or the mmcv and mmdet (mmseg, ...) installed are releases that do not go together. The
  message says neither which: likely;
"""

from __future__ import annotations

import re

from torchdoctor.explain.first_failure import Raised
from torchdoctor.explain.recognisers import Pattern

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# a version as the assertion prints it: a string, or digit_version's list or tuple
_VERSION = r"(?:\[[\d, ]{1,40}\]|\([\d, ]{1,40}\)|\d[\w.]{0,30}\w|\d)"
# librosa 0.10's functions whose arguments became keyword-only, and how many positional ones each kept
LIBROSA_KEYWORD_ONLY = {
    "mel": 0,
    "melspectrogram": 0,
    "mfcc": 0,
    "chroma": 0,
    "chroma_stft": 0,
    "spectral_centroid": 0,
    "pad_center": 1,
    "resample": 1,
}
# torch.onnx's newest opset per torch release (the first release that exports it)
ONNX_OPSET_FROM = {15: "1.11", 16: "1.12", 17: "1.13", 18: "2.0", 19: "2.1", 20: "2.4"}
PILLOW_REMOVED = {
    "getsize": "font.getbbox(text) (width = right - left, height = bottom - top) or font.getlength(text)",
    "getsize_multiline": "draw.multiline_textbbox((0, 0), text, font=font)",
    "getoffset": "font.getbbox(text)[:2]",
    "textsize": "draw.textbbox((0, 0), text, font=font)",
    "multiline_textsize": "draw.multiline_textbbox((0, 0), text, font=font)",
}
# Pillow 9.1 deprecated Image.ANTIALIAS, Image.LINEAR and Image.CUBIC (PIL/Image.py: deprecate(name, 10, ...)),
# 10.0.0 removed them: the filter each was an alias of, a name every Pillow from 2.7 (LANCZOS) still has
PILLOW_CONSTANTS = {
    "ANTIALIAS": "Image.LANCZOS (or Image.Resampling.LANCZOS)",
    "LINEAR": "Image.BILINEAR (or Image.Resampling.BILINEAR)",
    "CUBIC": "Image.BICUBIC (or Image.Resampling.BICUBIC)",
}

# CPython's TypeError for a positional call of one of them: "mel() takes 0 positional arguments but 5 were given"
LIBROSA_ANCHORS = tuple(
    f"{name}() takes {kept} positional argument{'' if kept == 1 else 's'} but"
    for name, kept in LIBROSA_KEYWORD_ONLY.items()
)
ZERO_DIM_INDEX = "invalid index of a 0-dim tensor"
# the 0.3 idiom through NumPy: the traceback's source line, and NumPy's refusal on the line after it
NUMPY_INDEX_LINE = ".numpy()[0]"
NUMPY_TOO_MANY = "too many indices"
STFT_COMPLEX = "stft requires the return_complex parameter be given for real inputs"
INT_DIVISION = "Integer division of tensors using div or / is no longer supported"
BOOL_SUBTRACTION = "Subtraction, the `-` operator, with a bool tensor is not supported"
NO_CAST = "can't be cast to the desired output type "
BATCH_FIRST = "__init__() got an unexpected keyword argument 'batch_first'"
UPSAMPLE_PICKLE = "'Upsample' object has no attribute 'recompute_scale_factor'"
# torch's argument parser given MMCV's DataContainer where a tensor (or a list of tensors) is taken
DATA_CONTAINER = ("must be Tensor, not DataContainer", "but got DataContainer")
# pytorch-ignite 0.3.0's names: the handlers it added and its callable events
IGNITE_HANDLERS = ("Checkpoint", "DiskSaver")
IGNITE_EVENTS = "'Events' object is not callable"
# the traceback's source line that calls an event (ignite's Events members), with CPython's TypeError on the next
IGNITE_EVENT_CALLS = tuple(
    f"Events.{name}("
    for name in (
        "STARTED",
        "COMPLETED",
        "EPOCH_STARTED",
        "EPOCH_COMPLETED",
        "ITERATION_STARTED",
        "ITERATION_COMPLETED",
        "GET_BATCH_STARTED",
        "GET_BATCH_COMPLETED",
        "EXCEPTION_RAISED",
    )
)
# torchvision 0.13's multi-weight builders take weights= / weights_backbone=; the builders before it
# (fasterrcnn_resnet50_fpn(pretrained=False, ..., **kwargs), resnet50(pretrained=False, progress=True, **kwargs))
# pass what they do not name to the model class (FasterRCNN(backbone, num_classes, **kwargs), ResNet(...)), whose
# __init__ refuses it
TV_WEIGHTS = ("weights", "weights_backbone")
# torch's attention and transformer layers, which took batch_first from 1.9
BATCH_FIRST_CLASSES = (
    "MultiheadAttention",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "Transformer",
)
ANCHORS = (
    "is used but incompatible. Please install mmcv>=",
    "is used but incompatible. Please install mmengine>=",
    *(f"object has no attribute '{name}'" for name in PILLOW_REMOVED),
    *(f"module 'PIL.Image' has no attribute '{name}'" for name in PILLOW_CONSTANTS),
    *LIBROSA_ANCHORS,
    "Unsupported ONNX opset version: ",
    ZERO_DIM_INDEX,
    NUMPY_INDEX_LINE,
    NUMPY_TOO_MANY,
    NO_CAST,
    "MPS does not support cumsum op with int64 input",
    STFT_COMPLEX,
    INT_DIVISION,
    BOOL_SUBTRACTION,
    BATCH_FIRST,
    UPSAMPLE_PICKLE,
    *(f"__init__() got an unexpected keyword argument '{name}'" for name in TV_WEIGHTS),
    *(f"cannot import name '{name}' from 'ignite.handlers" for name in IGNITE_HANDLERS),
    *IGNITE_EVENT_CALLS,
    *DATA_CONTAINER,
)
# printed for other causes too: a function of one's own that takes keyword arguments only, another converter's
# opset limit, a script's own scalar indexed or its own in-place op (decisive() makes them certain with librosa,
# torch.onnx, torch 0.3's loss.data[0], or an in-place clamp_ in the log)
GENERIC = (
    *LIBROSA_ANCHORS,
    "Unsupported ONNX opset version: ",
    ZERO_DIM_INDEX,
    NUMPY_INDEX_LINE,
    NUMPY_TOO_MANY,
    NO_CAST,
    BOOL_SUBTRACTION,
    BATCH_FIRST,
    *(f"__init__() got an unexpected keyword argument '{name}'" for name in TV_WEIGHTS),
    # a file or folder of the user's own named ignite prints the same, and an Events class of the code's own
    *(f"cannot import name '{name}' from 'ignite.handlers" for name in IGNITE_HANDLERS),
    *IGNITE_EVENT_CALLS,
    # a model not wrapped in MMCV's wrappers, or mmcv and mmdet releases that do not go together
    *DATA_CONTAINER,
)
TEMPLATES = (
    "third_party:mmdet-mmcv-version-incompatible",
    "third_party:mmdet-mmengine-version-incompatible",
    "third_party:pillow-10-removed-font-metrics",
    "third_party:pillow-10-removed-image-constants",
    "third_party:onnx-unsupported-opset-version",
    "torch_native:invalid-index-zero-dim-tensor",
    "torch_native:invalid-index-zero-dim-tensor-warning",
    "third_party:numpy-too-many-indices-for-array",
    "torch_native:result-type-cannot-be-cast-to-output",
    "third_party:mps-cumsum-int64-before-macos-13-3",
    "third_party:torch-stft-requires-return-complex",
    "third_party:torch-integer-division-no-longer-supported",
    "third_party:torch-bool-tensor-subtraction",
    "third_party:torch-1-9-batch-first-attention",
    "third_party:torch-1-11-upsample-old-pickle",
    "third_party:torchvision-0-13-builder-weights",
    "third_party:ignite-before-0-3-handler-import",
    "third_party:ignite-before-0-3-events-not-callable",
    "third_party:mmcv-data-container-reached-torch-op",
    "third_party:mmcv-data-container-in-tensor-list",
)
_Q = "'"
CHANGE = R(
    rf"MMCV==(?P<mmcv_found>[\w.+-]{{1,30}}) is used but incompatible\. Please install "
    rf"mmcv>=(?P<mmcv_min>{_VERSION})(?:, (?P<mmcv_op><=?)(?P<mmcv_max>{_VERSION}))?\.|"
    rf"MMEngine==(?P<mmengine_found>[\w.+-]{{1,30}}) is used but incompatible\. Please install "
    rf"mmengine>=(?P<mmengine_min>{_VERSION}), <(?P<mmengine_max>{_VERSION})\.|"
    rf"{_Q}(?P<pillow_class>FreeTypeFont|TransposedFont|ImageFont|ImageDraw){_Q} object has no attribute "
    rf"{_Q}(?P<pillow_removed>{'|'.join(PILLOW_REMOVED)}){_Q}|"
    rf"module {_Q}PIL\.Image{_Q} has no attribute {_Q}(?P<pillow_constant>{'|'.join(PILLOW_CONSTANTS)}){_Q}|"
    rf"\b(?P<librosa_call>{'|'.join(LIBROSA_KEYWORD_ONLY)})\(\) takes (?P<librosa_kept>[01]) positional "
    rf"arguments? but \d+ (?:positional arguments? )?(?:\(and \d+ keyword-only arguments?\) )?w(?:as|ere) given|"
    r"Unsupported ONNX opset version: (?P<onnx_opset>\d{1,3})|"
    rf"No module named {_Q}(?P<pyg_loader>torch_geometric\.loader){_Q}|"
    rf"(?P<zero_dim_index>{ZERO_DIM_INDEX})|"
    r"\.numpy\(\s*\)\[0\][^\n]*\n[^\n]*(?P<numpy_zero_dim>too many indices)|"
    rf"result type (?P<cast_from>\w{{1,20}}) {NO_CAST}(?P<cast_to>\w{{1,20}})|"
    r"(?P<mps_cumsum_int64>MPS does not support cumsum op with int64 input)|"
    rf"(?P<stft_complex>{STFT_COMPLEX})|(?P<int_division>{INT_DIVISION})|(?P<bool_subtraction>{BOOL_SUBTRACTION})|"
    rf"(?<![\w.])(?P<batch_first_kw>__init__\(\) got an unexpected keyword argument {_Q}batch_first{_Q})|"
    rf"(?P<upsample_pickle>{UPSAMPLE_PICKLE})|"
    rf"(?<![\w.])__init__\(\) got an unexpected keyword argument {_Q}(?P<tv_weights_kw>{'|'.join(TV_WEIGHTS)}){_Q}|"
    rf"cannot import name {_Q}(?P<ignite_handler>{'|'.join(IGNITE_HANDLERS)}){_Q} from {_Q}ignite\.handlers|"
    rf"(?<![\w.])Events\.[A-Z_]{{2,40}}\((?!\))[^\n]*\n[^\n]*?(?P<ignite_events>{IGNITE_EVENTS})|"
    rf"\b(?P<dc_op>\w{{1,60}})\(\): argument {_Q}(?P<dc_argument>\w{{1,60}}){_Q} (?:\(position \d{{1,2}}\) )?"
    rf"must be Tensor, not DataContainer|"
    rf"expected Tensor as element \d{{1,6}} in argument \d{{1,2}}, but got (?P<dc_list>DataContainer)"
)
# what makes a generic line certain, wherever the log says it
CONTEXT = (
    ("librosa", R(r"(?P<saw_librosa>\blibrosa\b)")),
    ("onnx", R(r"(?P<saw_torch_onnx>torch[/\\.]onnx\b)")),
    # torch 0.3's way to read a loss, quoted on a warning's or a traceback's source line
    (".data[0]", R(r"(?P<saw_data_index>\.data\[0\])")),
    # an integer tensor clamped in place, on a traceback's source line (YOLOv5's gj.clamp_(0, gain[3] - 1))
    ("clamp_(", R(r"(?P<saw_clamp_inplace>\.clamp_\()")),
    # torch's attention layer built on a traceback's source line (nn.MultiheadAttention(dim, num_heads=1, ...))
    *((f"{c}(", R(rf"(?P<saw_batch_first_class>\b{c}\()")) for c in BATCH_FIRST_CLASSES),
    # a torchvision model builder's own frame (torchvision/models/detection/faster_rcnn.py, models/resnet.py)
    ("torchvision", R(r"(?P<saw_torchvision_models>torchvision[/\\]models[/\\]\S*\.py)")),
)


def decisive(facts: dict, ctx_facts: dict) -> bool:
    """Whether the log makes a generic line of this module certain: librosa in it, or torch.onnx's frames."""
    return bool(
        (facts.get("librosa_call") and "saw_librosa" in ctx_facts)
        or (facts.get("onnx_opset") and "saw_torch_onnx" in ctx_facts)
        or (facts.get("zero_dim_index") and "saw_data_index" in ctx_facts)
        or (facts.get("cast_to") and "saw_clamp_inplace" in ctx_facts)
        or (facts.get("batch_first_kw") and "saw_batch_first_class" in ctx_facts)
        or (facts.get("tv_weights_kw") and "saw_torchvision_models" in ctx_facts)
    )


def _release(text: str) -> str:
    """'1.3.17' as it is; digit_version's '[1, 1, 4]' or '(1, 3, 13, 0, 0, 0)' as '1.1.4', '1.3.13'."""
    if text[0] not in "[(":
        return text
    parts = [p.strip() for p in text.strip("[]()").split(",")][:3]
    return ".".join(parts)


def _mmcv(facts: dict) -> tuple[str, str]:
    found, low = facts["mmcv_found"], _release(facts["mmcv_min"])
    high = _release(facts["mmcv_max"]) if facts.get("mmcv_max") else ""
    op = facts.get("mmcv_op") or "<="
    wanted = f"mmcv>={low}" + (f",{op}{high}" if high else "")
    package = "mmcv-full" if high and int(high.split(".")[0]) < 2 else "mmcv"
    return (
        f"MMCV {found} is installed, and the OpenMMLab package importing it (mmdet, mmseg, ...) accepts only "
        f"{wanted}: the two were installed for different releases",
        f"Install the MMCV this mmdet/mmseg release asks for, built for your torch and CUDA: pip install -U "
        f"openmim; mim install '{wanted.replace('mmcv', package, 1)}'"
        + (
            " (for an MMCV 1.x range the package is mmcv-full: mim install -U mmcv-full takes the newest 1.x)"
            if package == "mmcv-full"
            else ""
        )
        + ". Or install the mmdet/mmseg release made for the MMCV you have (their install guides list the pairs: "
        "mmdet 3.x wants mmcv 2.0-2.1, mmdet 2.x mmcv-full 1.x); pip uninstall mmcv mmcv-full first when both "
        "are installed.",
    )


def _mmengine(facts: dict) -> tuple[str, str]:
    found, low, high = (
        facts["mmengine_found"],
        _release(facts["mmengine_min"]),
        _release(facts["mmengine_max"]),
    )
    return (
        f"MMEngine {found} is installed, and the OpenMMLab 2.0 package importing it (mmdet 3.x, mmseg 1.x, ...) "
        f"accepts only mmengine>={low},<{high}: the two were installed for different releases",
        f"Install the MMEngine this release asks for: pip install 'mmengine>={low},<{high}' (or mim install "
        f"'mmengine>={low},<{high}'), or upgrade the package that printed it to the release made for MMEngine "
        f"{found} (pip install -U mmdet). MMEngine is pure Python: no rebuild is needed, unlike MMCV.",
    )


def _data_container(facts: dict) -> tuple[str, str]:
    op = f"{facts['dc_op']}()" if facts.get("dc_op") else "a torch op taking a list of tensors"
    return (
        f"{op} was given MMCV's DataContainer instead of a tensor: the batch reached the model still wrapped, "
        "because MMCV's scatter never ran on it (a model not wrapped in MMDataParallel/MMDistributedDataParallel) "
        "or because the mmcv and mmdet (mmseg, ...) installed are releases that do not go together",
        "Only MMCV's wrappers unwrap a DataContainer (mmcv.parallel's scatter, run by their forward/train_step): "
        "wrap the model in MMDistributedDataParallel(model.cuda(), device_ids=[torch.cuda.current_device()], "
        "broadcast_buffers=False) under the launcher, MMDataParallel(model.cuda(), device_ids=[0]) on one GPU, "
        "not in torch's DataParallel/DistributedDataParallel, or unwrap the batch yourself "
        "(mmcv.parallel.scatter(batch, [device])[0]) before calling the model. If the project's own "
        "train script (tools/train.py, dist_train.sh) does that already, the releases disagree: compare python -c "
        "'import mmcv, mmdet; print(mmcv.__version__, mmdet.__version__)' with the mmcv_minimum_version and "
        "mmcv_maximum_version in mmdet/__init__.py (mmseg/__init__.py, ...) and the project's requirements, and "
        "install the MMCV that release asks for, built for your torch and CUDA: pip install -U openmim; mim "
        "install 'mmcv-full>=<minimum>,<=<maximum>' (pip uninstall mmcv mmcv-full first when both are installed).",
    )


def ignite_handler(name: str) -> tuple[str, str]:
    """(summary, fix) for ignite.handlers without Checkpoint or DiskSaver: an ignite before 0.3.0."""
    return (
        f"ignite.handlers has no {name}: pytorch-ignite added Checkpoint and DiskSaver in 0.3.0 (January 2020), "
        "so the installed ignite is older than the code (or a file or package of your own named ignite shadows "
        "it)",
        "Upgrade ignite to 0.3.0 or newer: pip install -U pytorch-ignite (the release the code or its example was "
        "written for, e.g. pip install 'pytorch-ignite==0.4.13'); python -c 'import ignite; "
        "print(ignite.__version__, ignite.__file__)' shows which one is imported. With the old ignite, "
        "ModelCheckpoint(dirname, filename_prefix, ...) is the checkpoint handler it has.",
    )


def ignite_import(raised: Raised) -> tuple[str, str, bool] | None:
    """(summary, fix, certain) for CPython 3.6's bare "cannot import name 'Checkpoint'" (or 'DiskSaver') raised on
    a ``from ignite.handlers import`` line (the traceback's source line, or the statement typed at ``>>>``); the
    3.7+ line names ignite.handlers itself (`CHANGE`). None for anything else."""
    found = re.fullmatch(rf"cannot import name {_Q}({'|'.join(IGNITE_HANDLERS)}){_Q}", raised.message.strip())
    code = raised.raised_code or raised.code
    if raised.type != "ImportError" or found is None:
        return None
    if not re.match(rf"\s*from ignite\.handlers[\w.]* import [^\n]*\b{found[1]}\b", code):
        return None
    summary, fix = ignite_handler(found[1])
    return summary, fix, False


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for the release change among ``facts`` (the named groups of `CHANGE`), else None."""
    if facts.get("mmcv_found"):
        return _mmcv(facts)
    if facts.get("mmengine_found"):
        return _mmengine(facts)
    if facts.get("pillow_removed"):
        name, owner = facts["pillow_removed"], facts.get("pillow_class", "FreeTypeFont")
        return (
            f"the code calls {owner}.{name}, which Pillow 9.2 deprecated and Pillow 10 removed: the installed "
            "Pillow is newer than the code",
            f"Use {PILLOW_REMOVED[name]} instead of {name}, or upgrade the package whose code calls it (YOLOv5 and "
            "its forks fixed utils/plots.py: git pull); or pin Pillow 9.5, the last release with it: pip install "
            "'Pillow==9.5.0'.",
        )
    if facts.get("pillow_constant"):
        name = facts["pillow_constant"]
        return (
            f"the code uses Image.{name}, which Pillow 9.1 deprecated and Pillow 10 removed: the installed Pillow "
            "is newer than the code",
            f"Use {PILLOW_CONSTANTS[name]} instead of Image.{name} (the same filter, in every Pillow since 2.7), or "
            "upgrade the package whose code uses it; or pin Pillow 9.5, the last release with it: pip install "
            "'Pillow==9.5.0'.",
        )
    if facts.get("librosa_call"):
        call = facts["librosa_call"]
        return (
            f"{call}() got positional arguments where librosa 0.10 takes keyword arguments only (likely librosa's "
            f"{call}, or a function of the code's own that takes keyword arguments only): the installed librosa "
            "is newer than the code",
            "Name the arguments in the call (librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, "
            "fmax=fmax); pad_center(data, size=n)), or install the librosa the code was written for, before "
            "0.10: pip install librosa==0.9.1 (or 0.9.2).",
        )
    if facts.get("onnx_opset"):
        opset = int(facts["onnx_opset"])
        since = ONNX_OPSET_FROM.get(opset)
        return (
            f"the export asks for ONNX opset {opset}, which the installed torch.onnx does not support"
            + (f" (torch exports it from {since})" if since else "")
            + ": the torch installed is older than the export script expects (or the opset is another "
            "converter's limit)",
            "Pass an opset this torch supports (opset_version=<lower>, e.g. 13 or the export script's --opset), "
            "or upgrade torch"
            + (f" to {since} or newer" if since else "")
            + " (pip install -U torch with the "
            "--index-url of your CUDA).",
        )
    if facts.get("zero_dim_index"):
        return (
            "the code indexes a 0-dim tensor (loss.data[0], x.sum()[0]): likely code written for PyTorch 0.3, "
            "whose reductions returned one-element tensors; since 0.4 they are 0-dim and since 0.5 indexing one "
            "is an error",
            "Read the number with .item() where the traceback points: loss.data[0] -> loss.item(), "
            "correct.sum()[0] -> correct.sum().item(); or run the code with the PyTorch it was written for "
            "(0.3.x). If the value is your own scalar, not an old idiom, drop the [0].",
        )
    if facts.get("numpy_zero_dim"):
        return (
            "the code reads a value with .numpy()[0], and NumPy refuses the index: the array is 0-dimensional, "
            "as code written for PyTorch 0.3 (loss.data.cpu().numpy()[0]) finds it since 0.4, whose reductions "
            "return 0-dim tensors where 0.3's returned one-element ones",
            "Drop the [0] where the traceback points, or read the number with .item(): "
            "loss.data.cpu().numpy()[0] -> loss.item(); or run the code with the PyTorch it was written for "
            "(0.3.x). If the array is your own, check how many dimensions it has before indexing it.",
        )
    if facts.get("cast_to"):
        got, want = facts["cast_from"], facts["cast_to"]
        return (
            f"an in-place op (x += y, x.clamp_(...), out=) would store a {got} result in a {want} tensor, which "
            "PyTorch refuses since 1.5 (and for clamp_ with floating bounds since 1.12): likely code written for "
            "an older PyTorch that truncated silently",
            f"Keep the in-place op in the tensor's dtype: cast the other operand (y.long() for a {want} tensor, "
            "as YOLOv5's build_targets fix casts its gain: gain = ... .long() before gj.clamp_(0, gain[3] - 1)), "
            "or write it out of place (x = x + y), which promotes (cast back where an integer is needed); copies "
            "of YOLOv5's utils/loss.py: git pull the upstream fix. Or run the PyTorch the code was written for.",
        )
    if facts.get("pyg_loader"):
        return (
            "torch_geometric is installed but has no torch_geometric.loader, the package PyTorch Geometric 2.0 "
            "moved its loaders to: the code was written for PyG 2, the PyG installed is 1.x",
            "Upgrade PyTorch Geometric to 2.0 or newer, with the torch-scatter/torch-sparse wheels of your torch "
            "and CUDA (pip install -U torch_geometric); or, to stay on PyG 1.x, import the loader from its old "
            "place: from torch_geometric.data import DataLoader (torch_geometric.data.DataLoader).",
        )
    if facts.get("stft_complex"):
        return (
            "torch.stft was called on a real signal without return_complex, which torch 2.0 made an error (1.8 to "
            "1.13 only warned): the code was written for an older torch",
            "Pass it and take the real view the old call returned: spec = torch.view_as_real(torch.stft(x, n_fft, "
            "hop_length, win_length, window, return_complex=True)) (or keep the complex result: "
            "return_complex=True and .abs() for a magnitude); or run the torch the code was written for (< 2.0).",
        )
    if facts.get("int_division"):
        return (
            "/ or torch.div divided two integer tensors, which torch 1.6 refuses (1.5 warned; 1.7 and later "
            "divide truly and return floats): the code was written for an older torch",
            "Say which division is meant where the traceback points: a // b (torch.floor_divide(a, b), or torch.div(a, b, "
            "rounding_mode='floor'), the old result for non-negative values) for an index or a count, "
            "torch.true_divide(a, b) or a.float() / b for a fraction; or run the torch the code was written for "
            "(1.4 or 1.5).",
        )
    if facts.get("bool_subtraction"):
        return (
            "the code subtracts with a bool tensor (1 - mask): likely written for torch 1.1 or older, whose "
            "comparisons returned uint8 masks; since 1.2 they return bool and - refuses it",
            "Invert a mask with ~mask (or mask.logical_not()); where arithmetic is meant, convert first: "
            "1 - mask.int() (or .float()), mask.int() - other; or run the torch the code was written for (<= 1.1).",
        )
    if facts.get("batch_first_kw"):
        return (
            "a layer was built with batch_first=..., which torch's nn.MultiheadAttention and Transformer layers "
            "take only from torch 1.9: the installed torch is older than the code (unless the class refusing it "
            "is the code's own)",
            "Upgrade torch to 1.9.0 or newer, with the torchvision and CUDA that go with it (pip install -U torch "
            "--index-url https://download.pytorch.org/whl/cu1xx), or, to stay on the old torch, drop batch_first "
            "and feed those layers (sequence, batch, features): x.transpose(0, 1) before and after them.",
        )
    if facts.get("upsample_pickle"):
        return (
            "an nn.Upsample unpickled from a model saved whole under an older torch has no "
            "recompute_scale_factor, which torch 1.11's Upsample.forward reads: the model file (or the code that "
            "loads it) is older than the installed torch",
            "Set the attribute after loading the model: for m in model.modules(): if isinstance(m, nn.Upsample): "
            "m.recompute_scale_factor = None (YOLOv5's attempt_load does this since its torch 1.11 update: git "
            "pull the repository); or re-save the weights as a state_dict; or run a torch older than 1.11.",
        )
    if facts.get("tv_weights_kw"):
        name = facts["tv_weights_kw"]
        return (
            f"a torchvision model builder was given {name}=, which torchvision takes from 0.13 (the multi-weight "
            "API); the builders before it pass what they do not name on to the model class, whose __init__ refuses "
            "it: the installed torchvision is older than the code",
            "Upgrade torchvision to 0.13 or newer with the torch it pairs with (torch 1.12.0 or newer: pip install -U "
            "torch torchvision --index-url https://download.pytorch.org/whl/cu1xx), or, to stay on the old "
            f"torchvision, call the builder with pretrained=True (pretrained_backbone=True) instead of {name}=.",
        )
    if facts.get("ignite_handler"):
        return ignite_handler(facts["ignite_handler"])
    if facts.get("ignite_events"):
        return (
            "the code calls an event to filter it (Events.ITERATION_COMPLETED(every=...)), which pytorch-ignite "
            "supports from 0.3.0; before it Events is a plain Enum, not callable: the installed ignite is older than "
            "the code (ignite's examples on its master branch need the master's release)",
            "Upgrade ignite: pip install -U pytorch-ignite (0.3.0 or newer; an example newer than the last release "
            "needs the nightly: pip install --pre pytorch-ignite). Or, with the old ignite, filter by hand: "
            "@trainer.on(Events.ITERATION_COMPLETED) and, inside, if engine.state.iteration % log_interval == 0.",
        )
    if facts.get("dc_op") or facts.get("dc_list"):
        return _data_container(facts)
    if facts.get("mps_cumsum_int64"):
        return (
            "cumsum on an int64 tensor on Apple's MPS device, which torch supports there only on macOS 13.3 or "
            "newer (and not with torch 2.0.0, whose macOS check was broken): the macOS or torch is too old",
            "Update macOS to 13.3 or newer and torch to 2.0.1 or newer (pip install -U torch; the fix of "
            "pytorch#96610 came first in the nightly build). Until then cast before the cumsum (attention_mask.int()."
            "cumsum(-1), then .long()) or run that model on the CPU.",
        )
    return None
