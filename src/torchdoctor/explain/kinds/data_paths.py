"""A training run opening a dataset path that does not exist.

CPython raises FileNotFoundError for ENOENT with the path it was given (``Objects/exceptions.c`` OSError_str:
"[Errno 2] No such file or directory: '<path>'", strerror(ENOENT) from the C library). Any missing file prints
it: a dataset folder, a checkpoint, a config, an output directory not created, so a path alone never decides.
Tried after every other kind (a missing shared library, a compiler or a checkpoint path have their own), it is
only likely, naming the path, and a certain finding elsewhere in the log leads it; the usual causes in a training repository are a
placeholder path from the README left in the command, a path hard-coded in the dataset code, a data root that
repeats the dataset's own folder, and data that was never downloaded or preprocessed into the layout read.

YOLOv5's ``utils/general.py`` check_file, which train.py calls on --data, --cfg and --hyp, looks for a path that
is not a file under the repository's data/, models/ and utils/ and asserts "File not found: <path>" ("File Not
Found: " in early releases): likely the dataset's yaml given by a name or a path relative to another folder.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Recogniser, first, on_ranks

FAMILY = "data loading"

R = re.compile

# a full-width colon where the message was retyped in a Chinese input method
_MISSING = R(
    r"(?:FileNotFoundError|\[Errno 2\])\s*[:：]?\s*(?:\[Errno 2\]\s*)?No such file or directory\s*[:：]\s*"
    r"'(?P<path>[^'\n]{1,300})'|"
    r"AssertionError: File [Nn]ot [Ff]ound: (?P<yolo_file>[^\s'\"]{1,300})"
)

_OTHER_FILE = Alternative(
    "checkpoint_path",
    "a checkpoint, pretrained weights or a config file at that path",
    "If the path is a checkpoint, pretrained weights or a config file rather than data, point the option that "
    "names it at the file as saved (an absolute path; the working directory of a launcher or a job script may "
    "not be the repository's).",
)


def _missing(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    yolo_file = first(hits, "yolo_file")
    if yolo_file:
        return (
            f"train.py found no file '{yolo_file}': not at that path, nor under the repository's data/, models/ "
            "or utils/" + on_ranks(hits),
            "Give --data the path of the dataset's yaml (python train.py --data path/to/data.yaml, absolute or "
            "relative to the folder you run train.py from; a yaml outside the repository is not searched), and "
            "--cfg / --hyp / --weights theirs the same way.",
        )
    path = first(hits, "path", "?")
    return (
        f"a path the run reads does not exist: '{path}'" + on_ranks(hits),
        f"Check '{path}' on the machine that ran the job: give the dataset option (--data_root, --data_dir, the "
        "config's data path) the folder where the data actually is, absolute, not a placeholder from the README "
        "(your_data_path, /path/to/...); look in the dataset code for a path written into it instead of its "
        "root argument (root_dir), and for a root that repeats the dataset's own folder (the code appends the dataset's "
        "name itself). If the folders it names were never made, run the repository's download or "
        "preprocessing step first, and make them readable by the job's user.",
    )


DATA_PATH_MISSING = Recogniser(
    kind="data_path_missing",
    templates=("system:python-file-not-found", "third_party:yolov5-check-file-not-found"),
    title="a dataset path that does not exist",
    # CPython's form with the path (pastes lose the space, or type a full-width colon), not ninja's or a shell's
    anchors=(
        "No such file or directory: '",
        "No such file or directory:'",
        "No such file or directory：",
        "File not found: ",
        "File Not Found: ",
    ),
    match=_MISSING,
    # shared libraries have their own kinds (extension_import, cuda_library_path)
    reject=R(r"No such file or directory\s*[:：]\s*'[^'\n]{0,200}\.so(?:\.[\d.]+)?'"),
    confirm=lambda hits, ctx: False,
    also=(_OTHER_FILE,),
    describe=_missing,
)

RECOGNISERS = (DATA_PATH_MISSING,)
