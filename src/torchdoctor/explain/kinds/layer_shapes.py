"""A model's layer meeting a tensor of another size than it was built for: the shape checks of torch's ops.

Each message names the sizes it compared, and the fix is written with them:

- a Linear layer whose ``in_features`` is not the input's last dimension (``aten/src/ATen/native/
  LinearAlgebra.cpp``, addmm's check: "mat1 and mat2 shapes cannot be multiplied (64x1568 and 6272x10)"; "mat1
  dim 1 must match mat2 dim 0" in 1.7-1.9; ``TH/generic/THTensorMath.cpp`` before: "size mismatch, m1: [64 x
  1568], m2: [6272 x 10]"), a LayerNorm's ``normalized_shape`` (``native/layer_norm.h``) or an RNN's
  ``input_size`` (``torch/nn/modules/rnn.py`` check_input). addmm is every matrix product, so without
  ``nn.Linear`` in the traceback the reading is likely, a matrix product of the script's own named beside it;
- a BatchNorm layer whose ``num_features`` is not the input's dimension 1 (``native/Normalization.cpp``
  _batch_norm_impl_index, check_dims_match_num_input_features: "running_mean should contain 19193 elements not
  32", the input's channels first, the layer's size second): a layer built for another size, an input laid out
  (N, L, C) or flattened where BatchNorm1d wants (N, C, L). A size baked into the model from the batch or the
  resolution (a view with the batch size) prints the same when the loader delivers other sizes (the train half's
  1030.txt: the validation loader's batch size), so it is likely, that reading named beside it;
- two operands of an elementwise op that do not broadcast (``aten/src/ATen/ExpandUtils.cpp`` infer_size_impl:
  "The size of tensor a (64) must match the size of tensor b (32) at non-singleton dimension 1"; expand and an
  assignment into a slice: "The expanded size of the tensor (5) must match the existing size (8) ...");
- a convolution given another number of channels than its ``in_channels`` (``native/Convolution.cpp``
  check_input_shape_forward: "Given groups=1, weight of size [64, 3, 7, 7], expected input[8, 1, 224, 224] to
  have 3 channels, but got 1 channels instead");
- torch.cat of maps whose other dimensions differ (``native/TensorShape.cpp`` check_cat_shape_except_dim,
  worded three ways since 0.4): most often an encoder-decoder's skip connection given an input whose height or
  width is not a multiple of 2**depth. The DataLoader's default collate stacked through the same check before
  1.5, and two branches of a model can differ for other reasons, so it is only likely, with both named.

The elementwise check whose two sizes are one apart in a dimension after the first two (193 against 192 in
dimension 3: an (N, C, H, W) map's height or width) is the same skip connection added instead of joined: a side
that is odd at some down-sampling is floored when halved and comes back one short. It leads as that (likely:
two tensors of the script's own can be one apart for other reasons, named beside it).
"""

from __future__ import annotations

import re

from torchdoctor.explain.kinds import fp8_shapes
from torchdoctor.explain.kinds.tensor_misuse import OPERATOR_REFUSAL
from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "a script's own mistakes"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

_MATMUL = R(
    r"mat1 and mat2 shapes cannot be multiplied \((?P<rows>\d+)x(?P<got>\d+) and (?P<built>\d+)x(?P<out>\d+)\)|"
    r"size mismatch, m1: \[(?P<rows_th>\d+) x (?P<got_th>\d+)\], m2: \[(?P<built_th>\d+) x (?P<out_th>\d+)\]|"
    r"Given normalized_shape=\[?(?P<norm>[\d, ]{1,40})\]?, expected input with shape \[\*, (?P<norm_expected>[\d, ]{1,40})\], "
    r"but got input of size\s?(?P<norm_got>\[[^\]\n]{0,60}\]|torch\.Size\(\[[^\]\n]{0,60}\]\))|"
    r"input\.size\(-1\) must be equal to input_size\. Expected (?P<rnn_built>\d+), got (?P<rnn_got>\d+)|"
    r"(?P<bare>mat1 dim 1 must match mat2 dim 0)|"
    r"(?P<bn_param>running_mean|running_var) should contain (?P<bn_input>\d+) elements not (?P<bn_built>\d+)"
)
# the traceback going through nn.Linear: the matrix product that failed is a Linear layer's
LINEAR_IN_TRACEBACK = R(r"(?P<linear_layer>modules[/\\]linear\.py|\bF\.linear\(|torch\._C\._nn\.linear\()")


def _channels_first(norm: str, got: str) -> bool:
    """Whether a LayerNorm's one normalized size is dimension 1 of a 3-D or 4-D input whose last dimension differs:
    a (N, C, ...) map given to a LayerNorm of C."""
    sizes = [s for s in re.findall(r"\d+", got or "")]
    return "," not in norm and len(sizes) in (3, 4) and sizes[1] == norm.strip() and sizes[-1] != norm.strip()


def _layer(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    got = first(hits, "got") or first(hits, "got_th")
    built = first(hits, "built") or first(hits, "built_th")
    out = first(hits, "out") or first(hits, "out_th")
    if first(hits, "rnn_built"):
        got, built = first(hits, "rnn_got"), first(hits, "rnn_built")
        return (
            f"an RNN layer built for input_size={built} got inputs with {got} features" + on_ranks(hits),
            f"Build the LSTM/GRU/RNN with input_size={got} (the size of the last dimension of what it is given: "
            "the embedding dimension or the number of features per time step), or project the inputs to "
            f"{built} first; with batch_first=False the input is (seq_len, batch, {built}).",
        )
    if first(hits, "bn_built"):
        channels, built = first(hits, "bn_input"), first(hits, "bn_built")
        return (
            f"a BatchNorm layer built for num_features={built} got an input with {channels} in dimension 1 (its "
            f"{first(hits, 'bn_param')} has {built} entries)" + on_ranks(hits),
            f"BatchNorm normalises dimension 1 of its input, which must equal num_features: build it as "
            f"BatchNorm1d/2d({channels}) if the input is right, or give it the layout it takes: (N, C) or (N, C, L) "
            "for BatchNorm1d, (N, C, H, W) for BatchNorm2d; a sequence laid out (N, L, C) needs "
            "x.transpose(1, 2) around it, and a tensor flattened to (N, C * L) must keep its channel axis. Print "
            "the input's shape before the layer the traceback names.",
        )
    if first(hits, "norm"):
        channels_first = _channels_first(first(hits, "norm"), first(hits, "norm_got"))
        if channels_first:
            return (
                f"a LayerNorm built for normalized_shape=[{first(hits, 'norm')}] got a channel-first map of size "
                f"{first(hits, 'norm_got')}: it normalises the last dimension, the channels are dimension 1"
                + on_ranks(hits),
                "A norm over the channels of an (N, C, H, W) map is BatchNorm2d/SyncBatchNorm or nn.GroupNorm(1, C), "
                "not nn.LayerNorm(C): use one of those (an mmcv/mmseg config: norm_cfg=dict(type='SyncBN') or "
                "'BN' where the model's conv modules expect it, not 'LN'), or permute the map around the LayerNorm "
                "(x.permute(0, 2, 3, 1), then back).",
            )
        return (
            f"a LayerNorm built for normalized_shape=[{first(hits, 'norm')}] got an input of size "
            f"{first(hits, 'norm_got')}" + on_ranks(hits),
            "nn.LayerNorm(d) normalises the last dimension, which must be d: build it with the size of the "
            "input's last dimension (the model's hidden size), or permute the input so that the features come "
            "last (a (N, C, H, W) map needs x.permute(0, 2, 3, 1) before it, or nn.GroupNorm(1, C)).",
        )
    if got and built:
        layer = "nn.Linear(" + f"{got}, {out})" if out else f"in_features={got}"
        return (
            f"a matrix product (a Linear layer) got {got} features per row where it is built for {built} "
            f"(shapes {first(hits, 'rows') or first(hits, 'rows_th')}x{got} and {built}x{out})"
            + on_ranks(hits),
            f"The layer's in_features ({built}) must equal the size of the input's last dimension ({got}). "
            f"Build it as {layer}, or feed it what it expects: after convolutions the flattened size depends "
            "on the image size, so resize the inputs to the size the model was designed for, or compute it "
            "(run one dummy batch through the layers before the Linear and read x.flatten(1).shape[1]; "
            "nn.LazyLinear infers it). A checkpoint or adapter for another model variant gives the same message "
            "(an SD1.5 ControlNet on an SDXL model): use the one made for this model.",
        )
    return (
        "a matrix product (a Linear layer) got an input whose last dimension is not the layer's in_features"
        + on_ranks(hits),
        "Print the input's shape before the Linear the traceback names and build the layer with in_features "
        "equal to its last dimension (nn.LazyLinear infers it).",
    )


LAYER_INPUT_SIZE = Recogniser(
    kind="layer_input_size",
    templates=(
        "aten:mat1-and-mat2-shapes-cannot-be-multiplied",
        "aten:mat1-dim-must-match-mat2-dim",
        "aten:size-mismatch-m1-m2",
        "aten:layer-norm-normalized-shape-expected-input",
        "torch_cpp:input-size-must-be-equal-to",
        "torch_native:batch-norm-should-contain-elements",
    ),
    title="a layer built for another input size",
    anchors=(
        "mat1 and mat2 shapes cannot be multiplied (",
        "mat1 dim 1 must match mat2 dim 0",
        "size mismatch, m1: [",
        ", expected input with shape [*, ",
        "must be equal to input_size. Expected",
        "running_mean should contain ",
        "running_var should contain ",
    ),
    match=_MATMUL,
    # addmm is every matrix product: a Linear layer's only where the traceback shows one (or the layer is
    # named by its own check: LayerNorm, RNN); BatchNorm's sizes are also a batch size baked into the model
    confirm=lambda hits, ctx: (
        not any("bn_built" in h.facts for h in hits)
        and ("linear_layer" in ctx.facts or any("norm" in h.facts or "rnn_built" in h.facts for h in hits))
    ),
    also=(
        Alternative(
            "matmul_operands",
            "a matrix product of the script's own (torch.mm, @, torch.matmul) with operands that do not align",
            "Print both operands' shapes on the line the traceback names: the last dimension of the first must "
            "equal the first (or second-to-last) of the second; transpose one (.T, .transpose(-1, -2)) or "
            "reshape it.",
            unless=("bn_built",),
        ),
        Alternative(
            "hardcoded_shape",
            "a size written into the model (a batch size or a resolution used to reshape) that the data loader "
            "does not deliver",
            "Look for a view/reshape in the model that uses a fixed batch size or image size (the config's "
            "batch_size, a hard-coded 32 or 256): derive it from the input (x.size(0), x.view(x.size(0), -1)), "
            "or give every loader the same batch_size (the validation loader's too) and the data the "
            "resolution the model was built for.",
            when=("bn_built",),
        ),
    ),
    describe=_layer,
)

_BROADCAST = R(
    r"The size of tensor a \((?P<a>\d+)\) must match the size of tensor b \((?P<b>\d+)\) at non-singleton "
    r"dimension (?P<dim>\d+)|"
    r"The expanded size of the tensor \((?P<expanded>-?\d+)\) must match the existing size \((?P<existing>\d+)\) "
    r"at non-singleton dimension (?P<expand_dim>\d+)"
)


# a rotary position embedding's frame in the traceback (Megatron's and NeMo's rope_utils.py / rotary_pos_embedding.py,
# transformers' apply_rotary_pos_emb): the elementwise product of the hidden states and the rotary table
ROTARY_FRAME = R(
    r"(?P<rotary_frame>rotary_pos_embedding\.py|rope_utils\.py|line \d+, in _?apply_rotary_pos_emb\w{0,20})"
)


def _sequence_split(hits: list[Hit], ctx: Context) -> int:
    """How many times one operand's size holds the other's (2 or more) when a rotary embedding's product failed:
    the rotary table and the hidden states counting the sequence over different numbers of ranks; else 0."""
    a, b = first(hits, "a"), first(hits, "b")
    if "rotary_frame" not in ctx.facts or not a or not b:
        return 0
    big, small = max(int(a), int(b)), min(int(a), int(b))
    return big // small if small > 1 and big % small == 0 and big // small > 1 else 0


def _broadcast(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    split = _sequence_split(hits, ctx)
    if split:
        return (
            f"a rotary position embedding multiplied hidden states and a rotary table that disagree in dimension "
            f"{first(hits, 'dim')} ({first(hits, 'a')} against {first(hits, 'b')}, {split} times): one counts the "
            "whole sequence and the other one rank's share of it, as when sequence or context parallelism splits "
            "the sequence across ranks and the rotary embedding does not split its table (NeMo's before "
            "NVIDIA/NeMo#6178 under sequence_parallel)" + on_ranks(hits),
            "Run a release of the library whose rotary embedding supports the parallelism you turned on (NeMo: "
            "one with NVIDIA/NeMo#6178 for model.sequence_parallel=True), or turn it off (sequence_parallel=False, "
            "a context-parallel size of 1) until then. A rotary embedding of your own under sequence or context "
            "parallelism must slice cos/sin (or the position ids) to the rank's part of the sequence, at the "
            "rank's offset, where the hidden states are split.",
        )
    if first(hits, "a"):
        what = (
            f"two tensors combined elementwise differ in dimension {first(hits, 'dim')} ({first(hits, 'a')} "
            f"against {first(hits, 'b')}) and neither is 1, so they do not broadcast"
        )
    else:
        what = (
            f"a tensor of size {first(hits, 'existing')} in dimension {first(hits, 'expand_dim')} was expanded "
            f"or assigned into a place of size {first(hits, 'expanded')}"
        )
    return (
        what + on_ranks(hits),
        "Print the shapes of both operands on the line the traceback names and make them agree: a loss between "
        "an (N, C) output and an (N,) target (use CrossEntropyLoss with class indices, or one-hot the target), "
        "a residual or skip connection adding maps with different channels or sizes (a 1x1 convolution or a "
        "stride on the shortcut), an attention mask or position table built for another sequence length, a "
        "last batch smaller than the batch size a buffer was made for (drop_last=True, or size it from the "
        "batch); an assignment x[a:b] = y needs y of the slice's size.",
    )


# the optimizer's own update where the size check failed, read on the frame the exception was raised in (not on any
# line of the log: a printed state_dict's "exp_avg" keys, a model's own running average): an optimizer module's update
# function (torch 2's _single_tensor_adam, _multi_tensor_sgd, _fused_adamw; timm's), torch.optim's own code (torch 1's step,
# _functional.py's adam; not its schedulers or swa_utils), or a project's own optimizer's step or update function
# on a state tensor (Adam's exp_avg and exp_avg_sq, SGD's buf.mul_(momentum), momentum_buffer). Not the step
# wrapper's call of a closure: the closure's frame is then the innermost. An elementwise size check failing there is
# a state tensor whose size is not its parameter's: the state was loaded for another model or parameter order
_UPDATE_FUNCTION = R(r"_(?:single_tensor|multi_tensor|fused)_\w{1,20}$")
_TORCH_OPTIM = R(r"torch[/\\]optim[/\\](?!lr_scheduler|swa_utils)")
_STATE_TENSOR = R(r"\b(?:max_)?exp_avg(?:_sq)?s?\b|\bmomentum_buffer\b|\bbuf\.mul_\(momentum\)")
_UPDATING = R(r"step|update", re.IGNORECASE)


def optimizer_update(raised) -> dict:
    """``optimizer_update`` (the frame) where ``raised`` (first_failure.Raised) was raised in an optimizer's
    update of its state."""
    frame, code = raised.raised_in, raised.raised_code
    function = frame.function or ""
    if (
        (_UPDATE_FUNCTION.match(function) and "optim" in frame.file.lower())
        or _TORCH_OPTIM.search(frame.file)
        or (_STATE_TENSOR.search(code) and _UPDATING.search(function))
    ):
        return {"optimizer_update": str(frame)}
    return {}


# torch/optim/optimizer.py's load_state_dict maps the saved state to the parameters by position, group by group; it
# checks the groups' sizes, not each tensor's, so a state loaded for parameters in another order (or another model
# with as many) loads silently and fails at the first update, on the elementwise check of the state and the gradient
OPTIMIZER_STATE = Alternative(
    "optimizer_group_mismatch",
    "optimizer state loaded for other parameters (another model, or the same parameters in another order)",
    "The update combined a parameter's gradient with a state tensor of another size: the optimizer state came "
    "from a checkpoint whose parameters do not line up with this optimizer's, which load_state_dict matches by "
    "position only. Build the model and the optimizer exactly as when the checkpoint was saved (the same "
    "architecture and config, the same parameters in the same order and groups, the same frozen layers, "
    "resize_token_embeddings or added heads before the optimizer is built), or resume from the weights alone "
    "and leave the optimizer fresh (do not load the checkpoint's optimizer state).",
    when=("optimizer_update",),
    first_when=("optimizer_update",),
    because="the size check failed inside the optimizer's update of its state",
)

BROADCAST_SIZE_MISMATCH = Recogniser(
    kind="broadcast_size_mismatch",
    templates=("aten:size-of-tensor-a-must-match-tensor-b", "aten:expanded-size-must-match-existing-size"),
    title="tensors whose sizes do not broadcast",
    anchors=(") must match the size of tensor b (", ") must match the existing size ("),
    match=_BROADCAST,
    describe=_broadcast,
    confirm=OPERATOR_REFUSAL["confirm"],
    also=(OPTIMIZER_STATE, *OPERATOR_REFUSAL["also"]),
    raised_facts=optimizer_update,
)

_CHANNELS = R(
    r"Given (?:groups|transposed)=\w{1,8}, weight of size (?P<weight>\[[^\]\n]{0,40}\]|torch\.Size\(\[[^\]\n]{0,40}\]\)|"
    r"[\d ,]{1,40}), expected input(?P<input>\[[^\]\n]{0,40}\]|[\d ,]{0,40}) to have (?P<expected>\d+) channels, "
    r"but got (?P<got>\d+) channels instead"
)


def _channels(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    expected, got = first(hits, "expected", "?"), first(hits, "got", "?")
    sizes = re.findall(r"\d+", first(hits, "input", ""))
    hint = {
        ("3", "1"): "a grayscale image for an RGB model: load it with Image.open(p).convert('RGB') or "
        "x.repeat(1, 3, 1, 1)",
        ("1", "3"): "an RGB image for a one-channel model: convert('L'), or build the first conv with "
        "in_channels=3",
        ("3", "4"): "an RGBA or PNG image with alpha: load it with .convert('RGB')",
    }.get((expected, got), "")
    if not hint and len(sizes) == 4 and sizes[3] == expected:
        hint = "the batch is channels-last (N, H, W, C): x.permute(0, 3, 1, 2) before the model"
    return (
        f"a convolution built for {expected} input channels got {got} (input {first(hits, 'input', '?')}, "
        f"weight {first(hits, 'weight', '?')})" + on_ranks(hits),
        (f"Likely {hint}. " if hint else "")
        + f"The conv layer's in_channels ({expected}) must equal the input's dimension 1 ({got}): build it with "
        f"in_channels={got}, or give it {expected}-channel input (images in the layout (N, C, H, W), the "
        "previous layer's out_channels equal to this one's in_channels).",
    )


CONV_INPUT_CHANNELS = Recogniser(
    kind="conv_input_channels",
    templates=("aten:conv-groups-expected-input-channels", "aten:conv-transposed-expected-input-channels"),
    title="a convolution given another number of channels",
    anchors=(" channels, but got ",),
    match=_CHANNELS,
    describe=_channels,
    **OPERATOR_REFUSAL,
)

_CAT = R(
    r"Sizes of tensors must match except in dimension (?P<dim>\d+)\. (?:Expected size (?P<expected>\d+) but got "
    r"size (?P<got>\d+) for tensor number (?P<tensor>\d+)|Got (?P<a>\d+) and (?P<b>\d+) in dimension (?P<at>\d+))"
)


def _one_apart() -> str:
    """The elementwise check's line (ExpandUtils.cpp infer_size_impl) where the two sizes are one apart, either
    larger, in a dimension from 2 on: "(193) must match the size of tensor b (192) at non-singleton dimension 3".
    A regular expression cannot subtract, so each last digit and its successor is spelled out, with up to two
    nines a carry turns into zeros (19/20, 199/200); sizes one apart across three nines (999/1000) are missed."""
    pairs, n = [], 0
    for nines in range(3):
        for digit in range(9):
            low, high = f"{digit}{'9' * nines}", f"{digit + 1}{'0' * nines}"
            for a, b in ((low, high), (high, low)):
                n += 1
                pairs.append(
                    rf"(?P<one_apart{n}>\d*){a}\) must match the size of tensor b \((?P=one_apart{n}){b}"
                )
    sizes = r"(?P<odd_a>\d+)\) must match the size of tensor b \((?P<odd_b>\d+)\) at non-singleton dimension "
    return rf"The size of tensor a \((?={sizes}(?P<odd_dim>[2-9])\b)(?:{'|'.join(pairs)})\)"


class _SharedDigits:
    """A match of `_one_apart`'s pattern whose ``groupdict`` leaves out the digits the two sizes share (the
    groups its backreferences need): they are no fact of the log."""

    def __init__(self, found: re.Match) -> None:
        self._found = found

    def groupdict(self) -> dict:
        return {k: v for k, v in self._found.groupdict().items() if not k.startswith("one_apart")}

    def __getattr__(self, name: str):
        return getattr(self._found, name)


class _WithOneApart(Pattern):
    """A `Pattern` whose matches are `_SharedDigits`."""

    def search(self, *args):
        found = super().search(*args)
        return None if found is None else _SharedDigits(found)


_ONE_APART = R(_one_apart())
# the DataLoader's collate in the traceback: torch.stack of samples of different sizes (before 1.5 it went
# through cat's check)
IN_COLLATE = R(r"(?P<in_collate>collate\.py|default_collate)")


def _cat(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if any(first(hits, key) for key in fp8_shapes.FACTS):
        return fp8_shapes.explain(hits)
    if first(hits, "odd_a"):
        a, b, dim = int(first(hits, "odd_a")), int(first(hits, "odd_b")), first(hits, "odd_dim")
        short, odd = min(a, b), max(a, b)
        return (
            f"two maps added or multiplied elementwise are one apart in dimension {dim} ({a} against {b}): "
            "likely an encoder-decoder's skip connection with an input size not divisible by its down-sampling"
            + on_ranks(hits),
            f"A side that is odd at some down-sampling ({odd} here if {short} is the halved and doubled side) is "
            "floored when a stride-2 layer or a pooling halves it, so the upsampled map comes back one short of "
            "its skip. Resize or pad the inputs so that every side is a multiple of 2**depth (16 or 32 for most "
            f"encoder-decoders; e.g. {2 * short} rather than {2 * odd} if this is the first down-sampling), "
            "or interpolate the upsampled map to the skip's size before adding it "
            "(F.interpolate(x, size=skip.shape[-2:])).",
        )
    sizes = (
        (first(hits, "expected"), first(hits, "got"))
        if first(hits, "expected")
        else (first(hits, "a"), first(hits, "b"))
    )
    return (
        f"torch.cat was given tensors that differ outside the joined dimension {first(hits, 'dim', '?')} "
        f"({sizes[0]} against {sizes[1]}): likely an encoder-decoder's skip connection with an input size not "
        "divisible by its down-sampling" + on_ranks(hits),
        "A U-Net-like model halves the height and width at each pooling and doubles them back, so an input "
        "whose sides are not a multiple of 2**depth (16 or 32) leaves the upsampled map a pixel off its skip: "
        "resize or pad the inputs to a multiple of 2**depth, or pad/interpolate the upsampled map to the "
        "skip's size before torch.cat (F.interpolate(x, size=skip.shape[-2:])).",
    )


CAT_SIZE_MISMATCH = Recogniser(
    kind="input_size_not_divisible",
    templates=(
        "aten:cat-sizes-must-match-except-dimension",
        "aten:cat-sizes-must-match-offending-index",
        "aten:th-cat-sizes-must-match",
        # the elementwise check with its two sizes one apart in a dimension from 2 on (_one_apart)
        "aten:size-of-tensor-a-must-match-tensor-b",
        # FP8 GEMMs' shape checks, torch._scaled_mm's and Transformer Engine's (kinds/fp8_shapes.py)
        *fp8_shapes.TEMPLATES,
    ),
    title="an input size that does not divide as the layer or kernel needs",
    anchors=(
        "Sizes of tensors must match except in dimension ",
        ") must match the size of tensor b (",
        *fp8_shapes.ANCHORS,
    ),
    match=_WithOneApart(_CAT.pattern + "|" + fp8_shapes.PATTERN.pattern + "|" + _ONE_APART.pattern),
    # cat's check is every concatenation's: the skip connection is the commonest, never the only reading; an FP8
    # GEMM's check names its own cause
    confirm=lambda hits, ctx: any(first(hits, key) for key in fp8_shapes.FACTS),
    also=(
        Alternative(
            "collate_unequal_sizes",
            "samples of different sizes stacked into one batch by the DataLoader's default collate",
            "Resize or pad every sample to one size in the dataset's transform, or pass a collate_fn that pads "
            "(torch.nn.utils.rnn.pad_sequence) or keeps a list.",
            when=("in_collate",),
            unless=(*fp8_shapes.FACTS, "odd_a"),
        ),
        Alternative(
            "cat_operands",
            "two tensors of the script's own joined with torch.cat whose other dimensions differ",
            "Print the shapes of the tensors the line the traceback names joins, and make every dimension but "
            "the joined one agree.",
            unless=(*fp8_shapes.FACTS, "odd_a"),
        ),
        Alternative(
            "broadcast_size_mismatch",
            "two tensors of the script's own, one apart for another reason, that do not broadcast",
            "Print the shapes of both operands on the line the traceback names and make them agree (a last "
            "batch one short, a sequence or a window one longer than the other).",
            when=("odd_a",),
        ),
    ),
    # the elementwise check read as broadcast_size_mismatch: one apart after dimension 1, this reading leads
    absorbs=("broadcast_size_mismatch",),
    describe=_cat,
)

RECOGNISERS = (LAYER_INPUT_SIZE, BROADCAST_SIZE_MISMATCH, CONV_INPUT_CHANNELS, CAT_SIZE_MISMATCH)
CONTEXT = (
    ("linear", LINEAR_IN_TRACEBACK),
    ("collate", IN_COLLATE),
    ("rotary", ROTARY_FRAME),
    ("rope_utils", ROTARY_FRAME),
)
