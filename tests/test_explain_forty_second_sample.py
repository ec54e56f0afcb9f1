"""The forty-second sample's train misses: each reading on its line as the source prints it, filled in as the
threads posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 1917-1947)."""

from __future__ import annotations

import io

import pytest

from torchdoctor.explain.diagnose import explain


def lead(text: str):
    """The first finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


# numpy/_core/src/multiarray/ctors.c npy_no_copy_err_msg, under datasets' formatter (onlybooks/llm#9)
NUMPY_COPY = (
    "--> 197 return np.array(array, copy=False)\n\n"
    "ValueError: Unable to avoid copy while creating an array as requested.\n"
    "If using `np.array(obj, copy=False)` replace it with `np.asarray(obj)` to allow a copy when needed (no "
    "behavior change in NumPy 1.x).\n"
    "For more details, see https://numpy.org/devdocs/numpy_2_0_migration_guide.html#adapting-to-changes-in-the-"
    "copy-keyword.\n"
)
# the notebook cell that tests for an out-of-memory error, shown by IPython's traceback above another error
OOM_TEST_LINE = '     26 except RuntimeError as e:\n     27     if "CUDA out of memory" in str(e):\n'


@pytest.mark.parametrize(
    ("log", "kind", "confidence", "fix_holds"),
    [
        pytest.param(
            NUMPY_COPY, "dependency_version", "certain", ("numpy<2", "np.asarray"), id="numpy 2 copy"
        ),
        pytest.param(
            OOM_TEST_LINE + NUMPY_COPY, "dependency_version", "certain", ("numpy<2",), id="oom test line"
        ),
        pytest.param(
            # DGL src/runtime/c_runtime_api.cc (THUDM/GraphMAE#9)
            "dgl._ffi.base.DGLError: [21:48:49] /opt/dgl/src/runtime/c_runtime_api.cc:88: Check failed: "
            "allow_missing: Device API gpu is not enabled. Please install the cuda version of dgl.\n",
            "extension_import",
            "certain",
            ("cuda version of dgl", "pip uninstall dgl"),
            id="dgl cpu build",
        ),
        pytest.param(
            # YOLOv5 train.py (ultralytics/yolov5#7692)
            "AssertionError: Label class 79 exceeds nc=16 in flir.yaml. Possible class labels are 0-15\n",
            "label_out_of_range",
            "certain",
            ("names", "labels"),
            id="yolov5 class",
        ),
        pytest.param(
            # ultralytics/data/utils.py verify_image_label (ultralytics/ultralytics#951)
            "train: WARNING ⚠️ /data/images/train/000012.jpg: ignoring corrupt image/label: Label class 78 exceeds "
            "dataset class count 15. Possible class labels are 0-14\n",
            "label_out_of_range",
            "likely",  # a warning of a run that goes on (test_explain_certainty_review_7.py)
            ("names",),
            id="ultralytics class",
        ),
        pytest.param(
            # ultralytics/data/utils.py verify_image_label, pose (ultralytics/ultralytics#10064)
            "train: WARNING ⚠️ /data/pose/images/train/pull_up_1.jpg: ignoring corrupt image/label: labels require "
            "56 columns each\n",
            "bad_training_data",
            "likely",  # a warning of a run that goes on (test_explain_certainty_review_7.py)
            ("kpt_shape",),
            id="pose columns",
        ),
        pytest.param(
            "train: WARNING ⚠️ /data/dota/images/P0021.jpg: ignoring corrupt image/label: non-normalized or out of "
            "bounds coordinates [     1.0371]\n",
            "bad_training_data",
            "likely",  # a warning of a run that goes on (test_explain_certainty_review_7.py)
            ("normalized",),
            id="coordinates",
        ),
        pytest.param(
            # detectron2/data/datasets/coco.py load_coco_json (facebookresearch/detectron2#1531)
            "WARNING [06/03 10:02:11 d2.data.datasets.coco]: Filtered out 3677 instances without valid segmentation. "
            "There might be issues in your dataset generation process.\n",
            "bad_training_data",
            "likely",  # a warning of a run that goes on (test_explain_certainty_review_7.py)
            ("segmentation",),
            id="detectron2 segmentation",
        ),
        pytest.param(
            # yolov5 utils/general.py check_file (ultralytics/yolov5#3734)
            "    assert len(files), f'File not found: {file}'  # assert file was found\n"
            "AssertionError: File not found: data.yaml\n",
            "data_path_missing",
            "likely",
            ("path/to/data.yaml",),
            id="yolov5 data yaml",
        ),
        pytest.param(
            # mmdet/datasets/utils.py NumClassCheckHook (open-mmlab/mmdetection#8064)
            "AssertionError: `CLASSES` in CocoDatasetshould be a tuple of str.Add comma if number of classes is 1 as "
            "CLASSES = (License plate,)\n",
            "single_class_string",
            "certain",
            ("('License plate', )", "classes="),
            id="mmdet classes string",
        ),
        pytest.param(
            # mmcv build_from_cfg around get_classes' list_from_file (open-mmlab/mmrotate#394)
            "FileNotFoundError: DOTADataset: [Errno 2] No such file or directory: 'class1'\n",
            "single_class_string",
            "likely",
            ("('class1', )",),
            id="class read as file",
        ),
        pytest.param(
            # clip/clip.py tokenize (bubbliiiing/clip-pytorch#5)
            '    raise RuntimeError(f"Input {texts[i]} is too long for context length {context_length}")\n'
            "RuntimeError: Input two dogs play on the grass near a red fence while a man in a blue shirt watches "
            "them from the bench under the trees by the lake on a sunny afternoon in the park is too long for "
            "context length 77\n",
            "sequence_too_long",
            "likely",
            ("truncate=True",),
            id="clip context",
        ),
    ],
)
def test_the_sample_is_read_as_its_cause(log, kind, confidence, fix_holds):
    found = lead(log)
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence
    assert all(text in found.fix for text in fix_holds), found.fix
    if confidence == "likely":
        assert found.summary.startswith("likely:") and " or " in found.summary  # the other reading is named


@pytest.mark.parametrize(
    ("log", "not_kind"),
    [
        # a library's own __array__ refusing copy=False, without numpy's hint: not read as the release
        ("ValueError: Unable to avoid copy while creating an array as requested.\n", "dependency_version"),
        # the notebook's test for the message is code; the error it then raised is another one
        (OOM_TEST_LINE + "KeyError: 'input_ids'\n", "cuda_oom"),
        # another runtime's device API (TVM's registry prints the first half only)
        ("TVMError: Device API vulkan is not enabled.\n", "extension_import"),
        # YOLOv5's assertion as its source line, not as raised
        (
            "    assert mlc < nc, f'Label class {mlc} exceeds nc={nc} in {data}. Possible class labels are 0-{nc - 1}'\n",
            "label_out_of_range",
        ),
        # the words without the check's numbers
        ("note: labels require care when exported from CVAT\n", "bad_training_data"),
        # a generic "File not found" that is not yolov5's assertion
        ("File not found: data.yaml (skipped)\n", "data_path_missing"),
        # a dataset's annotation file that is missing: a path, not a class name
        (
            "FileNotFoundError: CocoDataset: [Errno 2] No such file or directory: 'data/coco/annotations/train.json'\n",
            "single_class_string",
        ),
        # a context window of another kind of model
        ("ValueError: the prompt is too long for the model's context window\n", "sequence_too_long"),
    ],
)
def test_a_near_miss_is_not_read_as_it(log, not_kind):
    assert lead(log).id != f"log.{not_kind}"


def test_a_real_out_of_memory_after_the_test_line_is_still_read():
    found = lead(OOM_TEST_LINE + "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert found.id == "log.cuda_oom"
