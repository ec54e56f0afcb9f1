"""torch.save and torch.load refusing the file or the object they were handed, by their own checks.

The texts are ``torch/serialization.py``'s (torch 2.13 prints them as older releases did):

- ``_check_seekable``: "<error>. You can only torch.load from a file that is seekable." Most often the error before
  it is "'NoneType' object has no attribute 'seek'": torch.load was handed None where a path was meant (an argument
  such as ``--checkpoint`` left unset; users report it from many repositories' test scripts). Otherwise the object
  was a stream that cannot seek (a URL's response, a pipe, a member of a zip opened on Python 3.6).
- ``_legacy_load``: "<file> is a zip archive (did you mean to use torch.jit.load()?)". torch 1.6 made the zip format
  torch.save's default, and every release since reads it before the legacy loader is tried: only a torch older than
  1.6 (or a TorchScript archive, which is a zip too, in one) reaches this line. The checkpoint was saved by a newer
  torch than the one loading it.
- ``_save``: "Cannot save multiple tensors or storages that view the same data as different types": two tensors in
  what is saved share one storage with different dtypes (``x.view(torch.int32)`` beside ``x``, a complex tensor's
  ``.real`` beside it, and on releases before 1.11 empty buffers of two dtypes).
- ``load`` with ``mmap=True``: "mmap can only be used with files saved with ``torch.save(_use_new_zipfile_serialization
  =True)``" (the file is not torch's zip format: saved with the legacy format, or no torch.save file at all), and
  "f must be a file path in order to use the mmap argument" (before 2.2: "a string filename", so a ``pathlib.Path``
  was refused too).

Each message names its own check, and the summary says what the log shows was handed (None or a stream; a path of
another type). A file refused for mmap is likely only: a legacy save and a file that is no checkpoint at all print the
same words, and the fix names both.
- ``nn.Module.load_state_dict`` (``torch/nn/modules/module.py``, 1.12+): "Expected state_dict to be dict-like, got
  <class '...'>." It takes a mapping of names to tensors and refuses anything that is not a ``Mapping``. The type it
  names says what was passed instead: ``str`` (or a ``PosixPath``) is the checkpoint's path, never ``torch.load``-ed;
  ``NoneType`` a function that returned nothing (a loader, ``model.load_state_dict(...)`` chained, or a lookup
  that found no checkpoint); a module (``RecursiveScriptModule``, a model class) a whole model saved with
  ``torch.save(model)`` or ``torch.jit.save``; anything else a library's own wrapper or lazy loader that is not a
  mapping. Certain: the refusal is the caller's argument.
- The other way round, CPython's AttributeError "'collections.OrderedDict' object has no attribute 'eval'" (``.to``,
  ``.cuda``, ``.module``, ``.parameters``, ...; ``Objects/object.c``) or TypeError "'collections.OrderedDict' object
  is not callable" (``Objects/call.c``): a state dict used where a model was meant. The file was saved with
  ``torch.save(model.state_dict())`` (released weights usually are) and loaded with ``model = torch.load(path)``
  (alexjfoote/reetoolbox#1, samsledje/D-SCRIPT#49, amberwangyili/neurop#1, piergiaj/super-events-cvpr18#2: build the
  model, then ``load_state_dict``). Read only for the names of ``nn.Module``'s members; certain when torch.load is in
  the log, likely without it (the OrderedDict may come from ``model.state_dict()`` assigned to the model's name).
- An optimizer's ``load_state_dict`` handed something that is not an optimizer's state dict: CPython's "KeyError:
  'param_groups'" where ``torch/optim/optimizer.py`` reads ``state_dict['param_groups']`` (the scheduler's state
  saved under the optimizer's name: bl0/moco#8), or "KeyError: 'state'" where FSDP1's ``_optim_utils.py`` reads
  the unflattened dict's ``["state"]`` (another tool's optimizer layout: mosaicml/llm-foundry#1231). Read only
  where the log indexes a state-dict-like name with that key (the context fact ``ckpt_key_indexed``); likely. A
  training checkpoint's own entry missing ('state_dict', 'model', 'optimizer') is checkpoint.py's
  ``checkpoint_incomplete``.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, has_fact, merged, on_ranks

FAMILY = "checkpoints and pretrained models"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _not_seekable(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    if facts.get("load_none"):
        return (
            "torch.load was handed None instead of a checkpoint path ('NoneType' object has no attribute 'seek'): "
            "the path it loads was never set" + on_ranks(hits),
            "Give the script the checkpoint it loads: the argument or config entry that holds the path (often "
            "--checkpoint / --resume / --weights / --model_path, or a default that is None) is unset, so "
            "torch.load(None) ran. Pass the file's path on the command line or in the config, and check the "
            "variable before torch.load (if path is None: raise or skip the load).",
        )
    return (
        "torch.load was handed a file object it cannot seek in (a URL's response, a pipe or stream, a member of an "
        "archive opened for streaming)" + on_ranks(hits),
        "torch.load needs a file it can seek: pass the path of a file on disk, or read the bytes first and load "
        "them from memory: torch.load(io.BytesIO(stream.read())). For a URL, torch.hub.load_state_dict_from_url "
        "downloads to a file and loads it.",
    )


NOT_SEEKABLE = Recogniser(
    kind="torch_load_not_seekable",
    title="torch.load handed None or a stream instead of a file",
    anchors=("You can only torch.load from a file that is seekable",),
    templates=("torch:you-can-only-torch-load-from",),
    facts=(R(r"(?P<load_none>'NoneType' object has no attribute '(?:seek|tell)')"),),
    describe=_not_seekable,
)


def _newer_format(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    path = merged(hits).get("zip_path", "").strip()
    where = f" ({path})" if path else ""
    return (
        f"the checkpoint{where} is in the zip format torch.save has written since torch 1.6, and the torch loading "
        "it is older than 1.6" + on_ranks(hits),
        "Load it with a torch of 1.6 or newer (pip install -U torch, in the environment that runs the load; the "
        "project's requirements may pin an old one). If that torch must stay, re-save the checkpoint where it was "
        "made with torch.save(obj, path, _use_new_zipfile_serialization=False). A TorchScript file (saved with "
        "torch.jit.save) loads with torch.jit.load instead.",
    )


NEWER_FORMAT = Recogniser(
    kind="checkpoint_newer_format",
    title="a checkpoint in torch 1.6's zip format, loaded by an older torch",
    anchors=("is a zip archive (did you mean to use torch.jit.load()?)",),
    templates=("torch:is-zip-archive-did-you-mean",),
    facts=(R(r"(?:Error: )?(?P<zip_path>[^\s:'\"{}]{1,300}) is a zip archive \(did you mean"),),
    describe=_newer_format,
)


def _dtype_views(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "torch.save refused: two tensors in what it saves share one storage with different dtypes (a .view(dtype) "
        "of a tensor, or a complex tensor's .real / .imag, saved beside it)" + on_ranks(hits),
        "Save copies that own their data: .clone() the view (or the tensor it views) before torch.save, e.g. "
        "{k: v.clone() for k, v in state.items()} for a state dict, or save one of the two and rebuild the view "
        "after loading. On torch older than 1.11 empty buffers of two dtypes share a storage too: upgrade torch, "
        "or register those buffers with a size.",
    )


DTYPE_VIEWS = Recogniser(
    kind="save_dtype_views",
    title="torch.save of tensors viewing one storage as different dtypes",
    anchors=("Cannot save multiple tensors or storages that view the same data as different types",),
    templates=("torch:cannot-save-multiple-tensors-or-storages",),
    describe=_dtype_views,
)


def _mmap(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if merged(hits).get("mmap_path_type"):
        return (
            "torch.load(..., mmap=True) was handed something other than a path string (a pathlib.Path before "
            "torch 2.2, or an open file)" + on_ranks(hits),
            "Pass the file's path as a string: torch.load(str(path), mmap=True) (torch 2.2 and newer take a "
            "pathlib.Path too); or load without mmap=True.",
        )
    return (
        "torch.load(..., mmap=True) met a file that is not in torch.save's zip format: saved with the legacy "
        "format (_use_new_zipfile_serialization=False, or torch older than 1.6), or not a torch.save file at all "
        "(a partial download, a Git LFS pointer)" + on_ranks(hits),
        "Check the file first: its size against the source's, and that it is no Git LFS pointer (git lfs pull) or "
        "HTML page. A complete checkpoint in the legacy format loads without mmap (torch.load(path, "
        "map_location='cpu')); re-save it once in the zip format (torch.save(torch.load(path), new_path)) to "
        "memory-map it.",
    )


MMAP_REFUSED = Recogniser(
    kind="mmap_load_refused",
    title="torch.load(mmap=True) on a file or object it cannot map",
    anchors=(
        "mmap can only be used with files saved with",
        "in order to use the mmap argument",
        "in order to use mmap argument",
    ),
    templates=("torch:mmap-can-only-be-used-with", "torch:must-be-file-path-in-order"),
    facts=(R(r"(?P<mmap_path_type>in order to use (?:the )?mmap argument)"),),
    # a file not in the zip format is a legacy save or no checkpoint at all: the message does not say which
    confirm=has_fact("mmap_path_type"),
    describe=_mmap,
)


def _not_a_mapping(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    got = (merged(hits).get("state_dict_type") or "").strip()
    what = f" ({got})" if got else ""
    short = got.rsplit(".", 1)[-1]
    if short in ("str", "PosixPath", "WindowsPath"):
        return (
            f"load_state_dict was handed the checkpoint's path{what}, not the state dict it holds"
            + on_ranks(hits),
            "Load the file first and pass what it holds: model.load_state_dict(torch.load(path, map_location="
            "'cpu')) (for a .safetensors file, safetensors.torch.load_file(path)); when the file is a training "
            "checkpoint dict, pass its entry: torch.load(path)['state_dict'] (or ['model']).",
        )
    if short == "NoneType":
        return (
            "load_state_dict was handed None where a state dict was meant" + on_ranks(hits),
            "The expression passed to load_state_dict returned nothing: a helper that loads the checkpoint without "
            "returning it, a dict lookup (.get) that found no such key, or a path check that fell through. Print "
            "what is passed; return the state dict from the helper, or take the key the checkpoint really has "
            "(print(ckpt.keys())).",
        )
    if "Module" in short or "jit" in got or "nn.modules" in got or "models" in got:
        return (
            f"load_state_dict was handed a whole model{what}, not a state dict: the file holds the model object "
            "(torch.save(model) or a TorchScript archive)" + on_ranks(hits),
            "Use the loaded model as it is (model = torch.load(path, weights_only=False), or torch.jit.load for "
            "TorchScript), or take its weights: model.load_state_dict(loaded.state_dict()). Save checkpoints with "
            "torch.save(model.state_dict(), path) so they load into any instance of the class.",
        )
    return (
        f"load_state_dict was handed an object that is not a mapping{what}" + on_ranks(hits),
        "load_state_dict takes a dict of parameter names to tensors. A library's lazy loader or wrapper (a "
        "lazy_load context, a distributed state-dict wrapper) must be turned into one first (dict(obj), or the "
        "library's own load function), or its release matched to the torch installed: torch 1.12 made this "
        "check, so code written for earlier releases may hand over objects that are not Mappings.",
    )


STATE_DICT_NOT_A_MAPPING = Recogniser(
    # torch/nn/modules/module.py Module.load_state_dict (1.12+)
    kind="state_dict_not_a_mapping",
    title="load_state_dict handed something that is not a state dict",
    anchors=("Expected state_dict to be dict-like, got",),
    templates=("torch:expected-state-dict-to-be-dict",),
    facts=(R(r"Expected state_dict to be dict-like, got <class '(?P<state_dict_type>[\w.]{1,160})'>"),),
    describe=_not_a_mapping,
)

# nn.Module's members a script calls on what it takes for its model (torch/nn/modules/module.py), and .module of a
# DataParallel/DDP wrapper
_MODULE_MEMBERS = (
    "to|eval|train|cuda|cpu|half|float|double|bfloat16|module|parameters|named_parameters|modules|children|"
    "named_modules|forward|training|apply|zero_grad|requires_grad_|state_dict|load_state_dict|device|dtype|"
    "generate|config|predict"
)


# the entries of an optimizer's state dict (torch/optim/optimizer.py load_state_dict reads state_dict['param_groups'];
# FSDP1's _optim_utils.py the unflattened dict's ["state"]); a training checkpoint's own entries missing ('state_dict',
# 'model', 'optimizer') are checkpoint.py's checkpoint_incomplete
_CHECKPOINT_KEYS = "param_groups|state"
# a state-dict-like name indexed with one of those keys, as a traceback's code line shows
CONTEXT = (
    (
        "['",
        R(
            r"(?:\b\w{0,40}(?:checkpoint|ckpt|state|sd|osd|optim)\w{0,40})\s*"
            rf"\[\s*'(?P<ckpt_key_indexed>{_CHECKPOINT_KEYS})'\s*\]"
        ),
    ),
    (
        '["',
        R(
            r"(?:\b\w{0,40}(?:checkpoint|ckpt|state|sd|osd|optim)\w{0,40})\s*"
            rf'\[\s*"(?P<ckpt_key_indexed>{_CHECKPOINT_KEYS})"\s*\]'
        ),
    ),
)


def _layout(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    key = facts.get("missing_ckpt_key")
    if key:
        # torch/optim/optimizer.py load_state_dict reads state_dict['param_groups'] (and ['state']); FSDP1's
        # _optim_utils.py reads the unflattened dict's ["state"] the same way
        return (
            f"an optimizer's load_state_dict was handed a dict with no '{key}' entry, not an optimizer's state "
            "dict: the model's weights, a scheduler's state, the whole training checkpoint, or optimizer state "
            "another tool wrote in its own layout" + on_ranks(hits),
            "Print what is passed (print(list(obj.keys()))): an optimizer's state dict has 'state' and "
            "'param_groups'. Pass the checkpoint's optimizer entry (optimizer.load_state_dict(ckpt['optimizer'])), "
            "check that the save did not swap the optimizer's and the scheduler's entries, and under FSDP load it "
            "with FSDP.optim_state_dict_to_load(model, optimizer, osd) or set_optimizer_state_dict(model, "
            "optimizer, osd); DeepSpeed partitions optimizer states: resume with engine.load_checkpoint(folder).",
        )
    member = facts.get("model_member")
    used = f"its .{member}" if member else "a call of it"
    return (
        f"a state dict (an OrderedDict of parameter names to tensors) was used as a model ({used}): the checkpoint "
        "holds the weights only, saved with torch.save(model.state_dict()), and was loaded with "
        "model = torch.load(path)" + on_ranks(hits),
        "Build the model from its class first, then load the weights into it: model = MyModel(...); "
        "model.load_state_dict(torch.load(path, map_location='cpu')); model.to(device).eval(). When the file is a "
        "training checkpoint dict, take its entry (torch.load(path)['state_dict'] or ['model'], print(ckpt.keys())); "
        "keys that start with 'module.' came from a DataParallel/DDP model: strip the prefix before loading.",
    )


CHECKPOINT_LAYOUT = Recogniser(
    kind="checkpoint_layout_mismatch",
    title="a checkpoint laid out otherwise than the code that loads it expects",
    anchors=(
        "'collections.OrderedDict' object has no attribute '",
        "'collections.OrderedDict' object is not callable",
        "KeyError: '",
    ),
    templates=(
        "system:ordereddict-has-no-module-attribute",
        "system:ordereddict-is-not-callable",
        "system:optimizer-state-key-error",
    ),
    # CPython's KeyError is every dict's: only as an optimizer state dict's lookup (requires_beside)
    generic=("KeyError: '",),
    match=R(
        rf"'collections\.OrderedDict' object has no attribute '(?P<model_member>{_MODULE_MEMBERS})'|"
        r"'collections\.OrderedDict' object is not callable|"
        rf"KeyError: '(?P<missing_ckpt_key>{_CHECKPOINT_KEYS})'\s*$"
    ),
    requires_beside=(("missing_ckpt_key", ("ckpt_key_indexed",)),),
    confirm=lambda hits, ctx: (
        has_fact("saw_torch_load")(hits, ctx) and not merged(hits).get("missing_ckpt_key")
    ),
    describe=_layout,
)

RECOGNISERS = (
    NOT_SEEKABLE,
    NEWER_FORMAT,
    DTYPE_VIEWS,
    MMAP_REFUSED,
    STATE_DICT_NOT_A_MAPPING,
    CHECKPOINT_LAYOUT,
)
