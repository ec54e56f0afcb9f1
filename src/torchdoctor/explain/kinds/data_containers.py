"""Data a training script reads or writes in a form its container refuses: torch.tensor, LMDB, trimesh, zarr.

A column torch cannot make a tensor of, an LMDB map too small, a mesh file trimesh reads as a scene, zarr 3 under
code written for zarr 2:

- torch.tensor (and as_tensor, and the datasets/LeRobot transforms that call it on every column) infers a dtype
  from the Python values it is given: ``torch/csrc/utils/tensor_new.cpp`` ``infer_scalar_type`` ends with
  ``AT_ERROR`` (``TORCH_CHECK(false, ...)`` in newer releases) "Could not infer dtype of " and the value's type
  name, a RuntimeError. "of dict" is a value made of dicts (a column of structs, a nested record) handed to it as
  if it were numbers (TensorAuto/OpenTau#416). Which column, the message does not say: likely. Not read where
  its own lines name MONAI's transforms: an array transform (EnsureChannelFirst) given the dict samples of a
  dictionary pipeline prints the same (the corpus's transform_order). A string among the values stops it earlier:
  ``infer_scalar_type`` checks for one first and raises TypeError "new(): invalid data type 'str'" (1.x on):
  a text column (the raw text beside the token ids, a label kept as its name) reaching the conversion, through a
  data collator given every column (``remove_unused_columns=False``) or the Dataset's own ``torch.tensor`` call.
  Any string handed to torch.tensor prints it: likely. A list of strings stops it with a ValueError instead ("too
  many dimensions 'str'", ``compute_sizes``: a str is a sequence of str), which alone is the data's as often as the
  code's (datasets.py's bad_training_data); transformers' ``BatchEncoding.convert_to_tensors`` (a tokenizer's or
  DataCollatorWithPadding's ``pad(..., return_tensors='pt')``) catches it and raises "Unable to create tensor, ...
  Perhaps your features (`{key}` in this case) have excessive nesting", naming the feature: with both in the log
  that feature is a text column the batch should not hold (its padding advice is for rows of unequal length):
  read here, in place of bad_training_data and library_arguments, likely (a label kept as its name prints it too).
- LMDB refuses a write once the environment's memory map is full: ``libraries/liblmdb/mdb.c`` ``mdb_strerror``'s
  "MDB_MAP_FULL: Environment mapsize limit reached", which py-lmdb raises as ``lmdb.MapFullError`` ("mdb_put: "
  before it, ``lmdb/cpython.c`` err_set) and Caffe's ``db_lmdb`` prints through its checks. The map size is fixed
  when the environment is opened (``lmdb.open(path, map_size=...)``) and nothing else prints it: certain.
- trimesh.load returns a ``trimesh.Scene`` (several meshes with their transforms) for files that describe a scene
  (an .obj with several objects, a .glb, a .ply the loader splits), where code written for one mesh expects a
  ``Trimesh``: CPython's "'Scene' object has no attribute 'vertices'" (``faces``, ``area``...)
  (mikedh/trimesh#1585, #1019, #504; trimesh's own answer is ``trimesh.load(path, force='mesh')``). Another
  library's Scene class prints the same words: likely.
- zarr-python 3.0 (2025-01-09) rewrote ``zarr.storage``: it holds ``LocalStore``, ``MemoryStore``,
  ``ZipStore``, ``FsspecStore``, ``ObjectStore``, ``LoggingStore``, ``WrapperStore``, ``StorePath`` and no longer
  zarr 2's ``Store``, ``BaseStore``, ``DirectoryStore``, ``FSStore``, ``KVStore``, ``NestedDirectoryStore``,
  ``LRUStoreCache``, ``DBMStore``, ``LMDBStore``, ``SQLiteStore``... So "module 'zarr.storage' has no attribute
  'Store'" and "cannot import name 'DirectoryStore' from 'zarr.storage'" are code (zarrdataset, MONAI's zarr
  merger, data samplers) written for zarr 2 run with zarr 3 (TheJacksonLaboratory/zarrdataset#25). A zarr too old
  for a name prints the same, a release mismatch too: the reading names zarr 3, the likelier, and leaves the
  reading to versions.py's dependency_version, which takes this module's ``CHANGE`` with its other releases'.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, merged, on_ranks

FAMILY = "data loading"

NOT_TENSORIZABLE = re.compile(
    r"Could not infer dtype of (?P<python_type>dict)\b|new\(\): invalid data type '(?P<python_str>str|bytes)'"
)
# transformers/tokenization_utils_base.py BatchEncoding.convert_to_tensors, naming the feature it could not convert
TEXT_FEATURE = re.compile(
    r"Perhaps your features \(`(?P<tensor_feature>[^`\n]{1,80})` in this case\) have excessive"
)
# torch's ValueError for a list of str (tensor_new.cpp compute_sizes): whole-log, beside the feature named above
STR_DIMS = ("too many dimensions 'str'", re.compile(r"(?P<saw_str_dims>too many dimensions 'str')"))
# MONAI's dictionary pipelines print it too when an array transform (EnsureChannelFirst) meets the dict samples
# its dictionary form (EnsureChannelFirstd) takes: a transform, not a column (read on the message's own lines)
MONAI_TRANSFORMS = re.compile(r"\b(?:monai|EnsureChannelFirstd?|LoadImaged?|ToTensord?|AddChanneld?)\b")

MAP_FULL = "MDB_MAP_FULL: Environment mapsize limit reached"

# attributes a Trimesh has and a Scene does not (a Scene has bounds, extents, centroid, geometry)
MESH_ATTRIBUTES = (
    "vertices",
    "faces",
    "area",
    "area_faces",
    "vertex_normals",
    "face_normals",
    "volume",
    "is_watertight",
    "edges",
    "triangles",
    "visual",
)
# the attribute's name as printed, or cut where the pasted line ends ('vertice)
_CUT = sorted({name[:n] for name in MESH_ATTRIBUTES for n in range(5, len(name))}, key=len, reverse=True)
SCENE_NO_MESH = re.compile(
    rf"'Scene' object has no attribute '(?:(?P<mesh_attribute>{'|'.join(MESH_ATTRIBUTES)})'|"
    rf"(?P<mesh_attribute_cut>{'|'.join(_CUT)})$)",
    re.MULTILINE,
)

# zarr 2's stores that zarr 3's zarr.storage no longer has
ZARR2_STORES = (
    "Store",
    "BaseStore",
    "DirectoryStore",
    "FSStore",
    "KVStore",
    "NestedDirectoryStore",
    "LRUStoreCache",
    "DBMStore",
    "LMDBStore",
    "SQLiteStore",
    "MongoDBStore",
    "RedisStore",
    "ABSStore",
    "TempStore",
    "ConsolidatedMetadataStore",
    "N5Store",
    "N5FSStore",
)
_STORES = "|".join(ZARR2_STORES)
ZARR2_STORE = re.compile(
    rf"module 'zarr\.storage' has no attribute '(?P<zarr2_store>{_STORES})'|"
    rf"cannot import name '(?P<zarr2_import>{_STORES})' from 'zarr\.storage'"
)
# versions.py's _CHANGES interface: its dependency_version reads the zarr lines with these
CHANGE = ZARR2_STORE
ANCHORS = ("module 'zarr.storage' has no attribute '", "' from 'zarr.storage'")
GENERIC = ANCHORS
TEMPLATES = ("third_party:zarr3-storage-without-zarr2-store",)
CONTEXT: tuple = ()


def _not_tensorizable(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    feature = merged(hits).get("tensor_feature")
    if feature:
        return (
            f"the batch's `{feature}` feature holds text (str): transformers' conversion to tensors (a tokenizer's "
            f"or a data collator's pad with return_tensors='pt') was given the strings of `{feature}`"
            + on_ranks(hits),
            f"Keep `{feature}` out of the batch: tokenize it into input_ids and drop the raw column "
            f"(dataset.map(tokenize, batched=True, remove_columns=['{feature}']) or "
            f"dataset.remove_columns(['{feature}'])); with the Trainer, remove_unused_columns=True (the default) "
            "drops the columns the model's forward() does not take, and remove_unused_columns=False hands the "
            f"collator every column. A label kept as its name needs mapping to its index (label2id). Padding and "
            "truncation, which the message suggests, are for rows of unequal length: torch said the values are str.",
        )
    if merged(hits).get("python_str"):
        return (
            f"torch.tensor was given {merged(hits)['python_str']} values: a text column (or a label kept as its "
            "name) reached the conversion to tensors" + on_ranks(hits),
            "Find the field that is still text (print one sample's keys and types) and keep it out of the "
            "tensors: tokenize it (its input_ids are the numbers), map a label name to its index "
            "(ClassLabel, or a dict of names to ids), or drop the column (dataset.remove_columns([...]); with the "
            "Trainer, remove_unused_columns=False keeps every column for the collator, so a collator given raw "
            "text must tokenize it itself). A custom collate_fn can carry strings as a list.",
        )
    kind = merged(hits).get("python_type", "dict")
    return (
        f"torch.tensor was given {kind} values, whose dtype it cannot infer: a dataset column (or a field of the "
        "sample) holding records instead of numbers reached the conversion to tensors" + on_ranks(hits),
        "Find the column whose values are dicts (a list of structs, a nested record: print the sample's keys and "
        "types) and keep it out of the tensors: drop it or remove_columns it before the transform or set_format, "
        "or turn it into numbers (token ids, a label index) first; a custom collate_fn can carry it as a list.",
    )


def _map_full(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    return (
        "the LMDB environment is full: the data written needs more than the map_size it was opened with"
        + on_ranks(hits),
        "Open the LMDB environment with a larger map_size (lmdb.open(path, map_size=...), in bytes: comfortably more "
        "than the dataset, e.g. 1 TB = 1 << 40 on 64-bit Linux, which reserves address space, not disk), or grow it "
        "when lmdb.MapFullError is raised (env.set_mapsize(env.info()['map_size'] * 2)) and write the "
        "transaction again.",
    )


def _scene(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    attribute = facts.get("mesh_attribute") or next(
        (name for name in MESH_ATTRIBUTES if name.startswith(facts.get("mesh_attribute_cut") or "~")),
        "vertices",
    )
    return (
        f"trimesh.load returned a Scene (the file describes several meshes), which has no {attribute}: the code "
        "expects a single Trimesh" + on_ranks(hits),
        "Load the file as one mesh: trimesh.load(path, force='mesh') (trimesh.load_mesh), or concatenate the "
        "scene's meshes: trimesh.util.concatenate(tuple(scene.geometry.values())); scene.dump(concatenate=True) "
        "applies their transforms.",
    )


def decisive(facts: dict, ctx_facts: dict) -> bool:
    """A zarr too old for the name prints the same as zarr 3: the reading stays likely."""
    return False


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for zarr 2's stores missing from zarr 3's zarr.storage (versions.py's dependency_version)."""
    store = facts.get("zarr2_store") or facts.get("zarr2_import")
    if not store:
        return None
    return (
        f"zarr.storage has no {store}: the code was written for zarr 2, and zarr 3 (2025) rewrote zarr.storage "
        "without zarr 2's stores",
        "pip install 'zarr<3' for the code as it is (the package using it may pin it in a newer release), or port "
        "it to zarr 3's stores (zarr.storage.LocalStore for DirectoryStore, FsspecStore for FSStore, "
        "zarr.abc.store.Store for the base class).",
    )


COLUMN_NOT_TENSORIZABLE = Recogniser(
    kind="column_not_tensorizable",
    title="a dataset column torch.tensor cannot take (records or text)",
    templates=(
        "third_party:torch-tensor-could-not-infer-dtype",
        "torch_native:tensor-new-invalid-data-type",
        "third_party:transformers-unable-to-create-tensor-pad-truncate",
    ),
    anchors=(
        "Could not infer dtype of ",
        "new(): invalid data type '",
        "` in this case) have excessive nesting",
    ),
    match=re.compile(f"{NOT_TENSORIZABLE.pattern}|{TEXT_FEATURE.pattern}"),
    facts=(NOT_TENSORIZABLE, TEXT_FEATURE),
    # transformers names the feature for rows of unequal length too: a text column only where torch said str
    requires_beside=(("tensor_feature", ("saw_str_dims",)),),
    # the same failure read by the ValueError's words alone: a damaged data file, the padding advice
    absorbs=("bad_training_data", "library_arguments"),
    reject=MONAI_TRANSFORMS,
    confirm=lambda hits, ctx: False,  # the message names no column: a dict from anywhere prints it
    describe=_not_tensorizable,
)

LMDB_MAP_FULL = Recogniser(
    kind="lmdb_map_full",
    title="an LMDB map smaller than the data written",
    templates=("third_party:lmdb-map-full",),
    anchors=(MAP_FULL,),
    describe=_map_full,
)

MESH_LOADED_AS_SCENE = Recogniser(
    kind="mesh_loaded_as_scene",
    title="a mesh file trimesh loaded as a Scene",
    templates=("third_party:trimesh-scene-without-mesh-attribute",),
    anchors=("'Scene' object has no attribute '",),
    match=SCENE_NO_MESH,
    facts=(SCENE_NO_MESH,),
    confirm=lambda hits, ctx: False,  # another library's Scene class prints the same words
    describe=_scene,
)

RECOGNISERS = (COLUMN_NOT_TENSORIZABLE, LMDB_MAP_FULL, MESH_LOADED_AS_SCENE)
