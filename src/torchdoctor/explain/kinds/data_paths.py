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

3D detection toolboxes read their annotations from info files their data preparation writes, not from the
download: OpenPCDet's ``pcdet/datasets/kitti/kitti_dataset.py`` create_kitti_infos (``python -m
pcdet.datasets.kitti.kitti_dataset create_kitti_infos tools/cfgs/dataset_configs/kitti_dataset.yaml``) writes
kitti_infos_{train,val,trainval,test}.pkl and, for its ground-truth sampling, kitti_dbinfos_train.pkl (the other
datasets' modules through ``--func create_<dataset>_infos``); mmdetection3d's ``tools/create_data.py`` writes
``{prefix}_infos_{train,val}.pkl`` and ``{prefix}_dbinfos_train.pkl``. A missing file of that name names the step.

torchvision's ``datasets/folder.py`` find_classes (DatasetFolder, ImageFolder) lists the subdirectories of the root
and raises "Couldn't find any class folder in <root>." when there is none: the root exists (a missing one fails
in os.scandir first) but holds the images themselves, or nothing. Certain: one class folder per label is what
ImageFolder reads.

pytorch-ssd's ``vision/datasets/voc_dataset.py`` (qfgaohao's, and dusty-nv's fork that jetson-inference's
train_ssd.py runs) reads the image IDs of a Pascal VOC folder from ImageSets/Main/trainval.txt (test.txt for the
test set), or the ImageSets/Main/default.txt CVAT writes, and raises "missing ImageSet file <path>" when neither is
there; the fork's earlier ``"missing ImageSet file {:s}".format(image_sets_file)`` of a pathlib path raised
"TypeError: unsupported format string passed to PosixPath.__format__" on that line instead, so the traceback shows
the raise. The message is certain; the traceback's line alone, likely.

LLaMA-Factory's ``llamafactory/data/parser.py`` get_dataset_list (``src/llmtuner/data/parser.py`` in 0.5-0.7) looks
every --dataset name up among the keys of <dataset_dir>/dataset_info.json (DATA_CONFIG) and raises "Undefined
dataset <name> in dataset_info.json." for a name it does not hold. dataset_dir defaults to ``data``, relative to
the folder the command runs from, so outside the repository it reads another folder's file (a missing one raises
"Cannot open ... due to" that FileNotFoundError instead); the other reading is a dataset of one's own never added
to the file. Likely: the message does not say which.

OpenCV's ``cv2.imread`` raises nothing for an image it cannot read: ``modules/imgcodecs/src/loadsave.cpp`` imread
returns an empty Mat for a path that does not exist, a file without read permission or one it cannot decode, and
the Python binding (``modules/python/src2/cv2_convert.cpp`` pyopencv_from of a Mat without data) turns it into
None. The dataset's next step asks the image for its size, and CPython raises "'NoneType' object has no attribute
'shape'" (``Objects/object.c``), far from the read. Likely: the path is the usual cause, an unreadable file the
other, and any function of the code's own that returned None prints the same words.

The same empty image handed to OpenCV itself stops at the first function's check of its input: ``CV_Assert(
!_src.empty())`` at the top of ``cv::cvtColor`` (``modules/imgproc/src/color.cpp``; GaussianBlur, meanStdDev and
others check the same) and ``CV_Assert( !ssize.empty() )`` in ``cv::resize`` (``modules/imgproc/src/resize.cpp``),
which ``cv::error`` prints as "OpenCV(4.7.0) .../color.cpp:182: error: (-215:Assertion failed) !_src.empty() in
function 'cvtColor'" (3.x: "error: (-215) !_src.empty() in function cvtColor") and the binding raises as cv2.error.
Likely, as the attribute error: the path is the usual cause; a file cv2 cannot decode, or a crop of no pixels (a
box outside the image), hands it the same empty image. YOLOv5's and ultralytics' ``load_image`` (``utils/dataloaders.py``,
``ultralytics/data/base.py``) test the read themselves and say so with the path: "Image Not Found <path>" (an
assert in YOLOv5, a FileNotFoundError in ultralytics 8): likely, as cv2.imread's None is.

python-soundfile (``soundfile.py``, ``SoundFile._open``) raises libsndfile's reason after "Error opening '<path>': "
(LibsndfileError from 0.11, RuntimeError before), and libsndfile's ``sf_strerror`` for SFE_SYSTEM, an open(2)
that failed, is "System error.": a path that does not exist most often (the maintainer's answer in
bastibe/python-soundfile#306, #400), a folder without read or write permission the other. Likely.

decord's ``VideoReader`` (``src/video/video_reader.cc``) stops with FFmpeg's reason when ``avformat_open_input``
fails: "ERROR opening: <path>, No such file or directory" (DECORDError) is a video the data lists that is not at
that path; its other reasons ("Invalid data found when processing input") are the file's content and are not read
here. Likely, as any missing path.

Windows words a missing folder or file in its own system messages, which CPython's OSError prints with the path
(``PC/errmap.h``, FormatMessage): "[WinError 3] The system cannot find the path specified: '<path>'"
(ERROR_PATH_NOT_FOUND, a folder on the way missing) and "[WinError 2] The system cannot find the file specified:
'<path>'" (ERROR_FILE_NOT_FOUND). Read as the path above; the WinError 2 that subprocess raises for a program it
cannot start names no path and is not read here.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# a full-width colon where the message was retyped in a Chinese input method
_MISSING = R(
    r"(?:FileNotFoundError|\[Errno 2\])\s*[:：]?\s*(?:\[Errno 2\]\s*)?No such file or directory\s*[:：]\s*"
    r"'(?P<path>[^'\n]{1,300})'|"
    r"AssertionError: File [Nn]ot [Ff]ound: (?P<yolo_file>[^\s'\"]{1,300})|"
    r"Couldn't find any class folder in (?P<no_class_folder>(?!\{)[^\n]{1,300}?)\.?[\"']?$|"
    # pytorch-ssd's VOCDataset: the message, or the raise the traceback shows when formatting it failed
    r"missing ImageSet file (?P<image_set>[^\s\"'{}]{1,300})|(?P<image_set_raise>IOError\(f?\"missing ImageSet file)|"
    # LLaMA-Factory's dataset registry: a --dataset name not in the dataset_info.json read
    r"Undefined dataset (?P<undefined_dataset>[^\s{}]{1,200}) in (?P<data_config>[\w.-]{1,100}\.json)|"
    # torchvision's DatasetFolder: class folders without a file of an allowed extension (0.2-0.9: none at all)
    r"Found no valid file for the classes (?P<no_valid_file>[^\n{}]{1,300}?)\. Supported extensions are|"
    r"Found 0 files in subfolders of: (?P<no_valid_root>[^\n{}]{1,300})|"
    # torchvision's built-in datasets (CIFAR, MNIST, SVHN...): no data under root, and download=False
    r"(?P<tv_not_found>Dataset not found(?: or corrupted)?\. ?You can use download=True)|"
    # Hugging Face datasets' load_dataset: a local path that holds no script and no data file
    r"Couldn't find a dataset script at (?P<hf_local>[^\n{}]{1,300}?) or any data file in the same directory|"
    r"Couldn't find any data file at (?P<hf_data_dir>[^\n{}]{1,300}?)\.(?: |$)|"
    # ...or a name the Hub does not have, or not for this token (a private or gated dataset): likely
    # (datasets' hf://buckets/ paths: a storage bucket's name, the same refusal)
    r"(?:Dataset|(?P<hf_bucket>Bucket)) '(?P<hf_hub>[^'\n{}]{1,200})' doesn't exist on the Hub|"
    # an image cv2.imread could not read (None, no exception) asked for its size
    r"'NoneType' object has no attribute '(?P<none_image>shape)'|"
    # ...or handed to OpenCV, whose first check of its input refuses an empty image
    r"\(-215(?::Assertion failed)?\) (?P<cv_empty>!_src\.empty\(\)|!ssize\.empty\(\)) in function '?(?P<cv_function>[\w:]{1,60})|"
    # Hugging Face datasets' data_files.py resolve_pattern: a data_files path or glob that matched nothing
    r"FileNotFoundError: Unable to find '(?P<hf_data_file>[^'\n{}]{1,300})'(?: at (?P<hf_base>[^\n{}]{1,300}))?|"
    # torch's sampler.py RandomSampler.__init__: num_samples is len(dataset) unless the script passed its own
    r"num_samples should be a positive integer value, but got (?P<empty_dataset>num_samples=0)\b|"
    # YOLOv5's and ultralytics' load_image: cv2.imread's None, said with the path
    r"Image Not Found (?P<yolo_image>[^\n]{1,300}?)\s*$|"
    # decord's VideoReader: FFmpeg's ENOENT after the path
    r"ERROR opening: (?P<video_path>[^,\n]{1,300}), No such file or directory|"
    # python-soundfile: libsndfile's "System error." for an open(2) that failed, after the path
    r"Error opening (?P<sound_path>'[^'\n]{1,300}'|\"[^\"\n]{1,300}\"): System error|"
    # Windows' own words for a missing folder or file, with the path CPython's OSError prints
    r"\[WinError [23]\] The system cannot find the (?:path|file) specified\s*:\s*'(?P<win_path>[^'\n]{1,300})'"
)
# a 3D detection toolbox's info file: <dataset>_infos_<split>.pkl, <dataset>_dbinfos_train.pkl
_INFO_FILE = R(r"(?:^|[/\\])(?P<dataset>[A-Za-z0-9]{1,40})_(?:db)?infos_[\w.]{0,80}\.pkl$")

_OTHER_FILE = Alternative(
    "checkpoint_path",
    "a checkpoint, pretrained weights or a config file at that path",
    "If the path is a checkpoint, pretrained weights or a config file rather than data, point the option that "
    "names it at the file as saved (an absolute path; the working directory of a launcher or a job script may "
    "not be the repository's).",
    unless=(
        "info_file",
        "image_set",
        "image_set_raise",
        "undefined_dataset",
        "no_valid_file",
        "no_valid_root",
        "tv_not_found",
        "hf_local",
        "hf_data_dir",
        "hf_hub",
        "none_image",
        "cv_empty",
        "yolo_image",
        "sound_path",
        "video_path",
        "empty_dataset",
        "hf_data_file",
        "sample_file",
    ),
)

_UNREADABLE_IMAGE = Alternative(
    "bad_training_data",
    "an image file OpenCV cannot decode (truncated, empty, or a format cv2.imread does not read)",
    "Open the file the dataset read last in an image viewer, or run cv2.imread over the list and print the paths "
    "that come back None; re-export or drop those files.",
    when=("none_image", "yolo_image"),
)
_EMPTY_CROP = Alternative(
    "bad_training_data",
    "an image file OpenCV cannot decode, or a crop of no pixels (a box of the annotations outside the image)",
    "Run cv2.imread over the list and print the paths that come back None (re-export or drop those files); clip "
    "each box to the image before cropping (x1 < x2 within 0..width, y1 < y2 within 0..height) and drop the "
    "annotations whose box is empty after it.",
    when=("cv_empty",),
)


# a num_samples the script passed itself (RandomSampler(num_samples=...), WeightedRandomSampler's, often computed from
# another count that was 0) rather than len(dataset): the option's own refusal
_SAMPLER_OPTION = Alternative(
    "dataloader_options",
    "a num_samples=0 the script passed to the sampler itself (RandomSampler(num_samples=...), WeightedRandomSampler)",
    "Pass the sampler a positive num_samples (computed from the dataset's length after it is built), or leave it "
    "out: RandomSampler then draws len(dataset).",
    when=("empty_dataset",),
)
_GATED_DATASET = Alternative(
    "download_refused",
    "a private or gated dataset the run's token may not read (the Hub answers the same)",
    "Log in with an account that has access (huggingface-cli login, or HF_TOKEN in every node's environment) "
    "and accept the dataset's terms on its page on huggingface.co.",
    when=("hf_hub", "hf_either"),
)
# the facts of a message that names the layout read, not any missing file (the Hub's name alone is likely: a
# private or gated dataset prints it too)
_DECISIVE = (
    "no_class_folder",
    "image_set",
    "no_valid_file",
    "no_valid_root",
    "tv_not_found",
    "hf_local",
    "hf_data_dir",
)


def _no_class_folder(root: str, hits: list[Hit]) -> tuple[str, str]:
    return (
        f"ImageFolder found no class folder in '{root}': the folder exists but holds no subfolder, so its images "
        "(if any) have no label" + on_ranks(hits),
        f"ImageFolder (and DatasetFolder) read root/<class>/<image>: give it the folder that holds one folder per "
        f"class. Check the path first: if '{root}' holds the images themselves, point root one level up (or move "
        f"them into a subfolder of it); if it is empty, the data was not downloaded or extracted there. For data "
        "without classes (a GAN, a diffusion model, denoising) put every image in one subfolder: "
        f"{root.rstrip('/')}/0/img_0.png.",
    )


def _info_file(path: str, dataset: str) -> str:
    return (
        f" '{path}' is an info file the toolbox's data preparation writes, not part of the download: with OpenPCDet "
        f"run python -m pcdet.datasets.{dataset}.{dataset}_dataset create_{dataset}_infos "
        f"tools/cfgs/dataset_configs/{dataset}_dataset.yaml (for KITTI; the other datasets' modules take --func "
        f"create_<dataset>_infos --cfg_file ...), with mmdetection3d python tools/create_data.py {dataset} "
        f"--root-path ./data/{dataset} --out-dir ./data/{dataset} --extra-tag {dataset}; both write the "
        "*_infos_*.pkl and *_dbinfos_train.pkl the training reads."
    )


def _image_set(hits: list[Hit]) -> tuple[str, str]:
    path = first(hits, "image_set")
    which = f" ({path})" if path else ""
    return (
        f"the VOC dataset has no image-set list{which}: pytorch-ssd's VOCDataset reads the image IDs from "
        "ImageSets/Main/trainval.txt or default.txt, and the dataset folder holds neither" + on_ranks(hits),
        "Give --data the dataset's root (the folder that holds Annotations/, JPEGImages/ and ImageSets/), and "
        "write ImageSets/Main/trainval.txt (test.txt for the validation set) listing one image ID a line, the "
        "file names of JPEGImages/ without their extension; train.txt and val.txt may be copies of it. A CVAT "
        "export in Pascal VOC format writes ImageSets/Main/default.txt, which is read instead.",
    )


def _undefined_dataset(name: str, config: str, hits: list[Hit]) -> tuple[str, str]:
    return (
        f"LLaMA-Factory found no dataset '{name}' in the {config} it read: the data folder read is not the one "
        "that defines it, or the dataset was never added to it" + on_ranks(hits),
        f"LLaMA-Factory looks each --dataset name up in <dataset_dir>/{config}, and dataset_dir defaults to data, "
        "relative to the folder the command runs from: run llamafactory-cli from the LLaMA-Factory folder (cd "
        f"LLaMA-Factory; the examples' datasets, mllm_demo and the others, are defined in its data/{config}), or "
        f"set dataset_dir to the folder whose {config} defines '{name}'. For a dataset of your own, add an entry "
        f'for the name to that file ("{name}": {{"file_name": "your_data.json", ...}}) and keep the data file '
        "beside it.",
    )


def _no_valid_file(classes: str, hits: list[Hit]) -> tuple[str, str]:
    return (
        f"ImageFolder found class folders without a single image it reads ({classes[:200]}): no file with an "
        "allowed extension in them" + on_ranks(hits),
        "DatasetFolder and ImageFolder read root/<class>/<image> and take only the extensions they list (.jpg, "
        ".jpeg, .png, .ppm, .bmp, .pgm, .tif, .tiff, .webp for ImageFolder): look in the folders named. If they "
        "hold another folder level (root/train/<class>/...: point root one level down) or files of another "
        "extension (convert them, or pass is_valid_file= / extensions= to DatasetFolder), fix that; if they are "
        "empty, copy or extract the data again. torchvision 0.17 on takes allow_empty=True to keep empty "
        "classes.",
    )


def _torchvision_not_found(hits: list[Hit]) -> tuple[str, str]:
    return (
        "a torchvision dataset found no data under its root and was not told to download it" + on_ranks(hits),
        "Pass download=True (once, on one process: rank 0 before a barrier in a multi-GPU run), or give root= "
        "the folder that holds the dataset's own subfolder as the class reads it (cifar-10-batches-py/, MNIST/raw/, "
        "...), not that subfolder itself. 'or corrupted' means a file there failed its checksum: delete the "
        "partial download and fetch it again.",
    )


def _hf_missing(hits: list[Hit]) -> tuple[str, str]:
    hub = first(hits, "hf_hub") or first(hits, "hf_either")
    if hub and first(hits, "hf_bucket"):
        return (
            f"datasets could not find storage bucket '{hub}' on the Hugging Face Hub: no such bucket, or one this "
            "run may not read" + on_ranks(hits),
            "Check the bucket's name in the hf://buckets/<owner>/<name> path (as huggingface.co lists it) and that "
            "the run's token can read it: a private bucket needs huggingface-cli login or HF_TOKEN on every node.",
        )
    if hub:
        return (
            f"load_dataset could not find dataset '{hub}' on the Hugging Face Hub: no such name, or one this run "
            "may not read" + on_ranks(hits),
            f"Check the name on huggingface.co/datasets ('<owner>/<name>', spelled as there); a private or gated "
            "dataset needs an account with access and its token (huggingface-cli login or HF_TOKEN on every "
            f"node); offline (HF_DATASETS_OFFLINE=1, no network) only a dataset already in the cache loads; and "
            f"a local folder meant by '{hub}' must exist from the directory the job runs in (an absolute path).",
        )
    data_file = first(hits, "hf_data_file")
    if data_file:
        return (
            f"load_dataset's data_files name a path that matched no file: '{data_file}'"
            + (f" (looked for under {first(hits, 'hf_base')})" if first(hits, "hf_base") else "")
            + on_ranks(hits),
            f"Check '{data_file}' on the machine that ran the job (ls it, or the glob): a relative path is read from "
            "the directory the job starts in (use an absolute one), a glob must match the files' own names and "
            "extensions (data/train-*.jsonl), and on several nodes every node needs the files at that path.",
        )
    path = first(hits, "hf_local") or first(hits, "hf_data_dir", "?")
    return (
        f"load_dataset found neither a loading script nor a data file at '{path}'" + on_ranks(hits),
        f"Give load_dataset the folder that holds the data files (or a builder with data_files=: "
        "load_dataset('json', data_files='path/train.jsonl'); 'csv', 'parquet', 'text', 'imagefolder'), absolute "
        f"or relative to the directory the job runs in; check '{path}' exists on the machine that ran it and "
        "holds files of a format datasets reads.",
    )


def _none_image(hits: list[Hit]) -> tuple[str, str]:
    return (
        "an image read came back None and the dataset asked it for its .shape (cv2.imread returns None instead of "
        "raising for a path that does not exist or a file it cannot read)" + on_ranks(hits),
        "Check the data path the dataset builds the image paths from (the config's data root or the annotation "
        "file's paths, absolute, on the machine that ran it), and that every listed file exists and is readable; "
        "an assert img is not None, path right after cv2.imread names the first bad one. If the variable on the "
        "traceback's line is not an image read from disk, find the call of the code's own that returned None.",
    )


def _cv_empty(hits: list[Hit]) -> tuple[str, str]:
    function = first(hits, "cv_function", "")
    check = first(hits, "cv_empty", "")
    return (
        f"OpenCV's {function or 'function'} was handed an empty image ({check}): cv2.imread returns an empty "
        "image (None) instead of raising for a path that does not exist or a file it cannot read"
        + on_ranks(hits),
        "Check the image paths the dataset reads (the config's data root, the annotation or list file's paths, "
        "absolute, on the machine that ran the job; on Windows cv2.imread does not open a path with non-ASCII "
        "characters), and that every listed file exists and is readable: an assert img is not None, "
        "path right after cv2.imread names the first bad one (in a DataLoader worker the traceback shows only the "
        "later call).",
    )


def _sound_path(path: str, hits: list[Hit]) -> tuple[str, str]:
    return (
        f"soundfile could not open the audio file '{path}': libsndfile's 'System error' is the file system's "
        "refusal, a path that does not exist most often" + on_ranks(hits),
        f"Check '{path}' on the machine that ran the job: the data list or manifest (a JSON, CSV or scp file) holds "
        "paths relative to another folder than the one the job runs in (write absolute paths, or run from the "
        "folder they are relative to), the audio was never downloaded or extracted there, or the folder is not "
        "readable by the job's user (for sf.write: the output folder must exist). On Windows a path with "
        "non-ASCII characters can fail the same way in older libsndfile builds.",
    )


def _yolo_image(path: str, hits: list[Hit]) -> tuple[str, str]:
    return (
        f"YOLO's data loader could not read an image the dataset lists: '{path}' (cv2.imread returned nothing)"
        + on_ranks(hits),
        "Check that the file exists at that path on the machine that ran the job: the data yaml's path/train/val "
        "entries (absolute, or relative to its path:), the image list or folder they name, and images/ beside "
        "labels/ as YOLO pairs them. A file that exists but cv2 cannot decode (an empty or partly copied file, a "
        "format OpenCV does not read) prints the same: open it, re-copy or drop it, and delete the labels *.cache "
        "files so the list is read again.",
    )


def _empty_dataset(hits: list[Hit]) -> tuple[str, str]:
    return (
        "the dataset handed to the DataLoader is empty: its RandomSampler (shuffle=True) got num_samples=0, "
        "len(dataset) when the script passes none" + on_ranks(hits),
        "Print len(dataset) before building the DataLoader: 0 means the dataset found no sample. Check the data "
        "root the script was given (absolute, on the machine that ran the job) against the layout and file "
        "extensions the dataset's code lists (its glob, its annotation or split file: .jpg where the files are "
        ".png is enough), and run the repository's download or preprocessing step if it writes them. A filter "
        "(by length, by label) that dropped every sample empties it too.",
    )


def _missing(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    if first(hits, "empty_dataset"):
        return _empty_dataset(hits)
    if first(hits, "none_image"):
        return _none_image(hits)
    if first(hits, "cv_empty"):
        return _cv_empty(hits)
    if first(hits, "yolo_image"):
        return _yolo_image(first(hits, "yolo_image"), hits)
    if first(hits, "sound_path"):
        return _sound_path(first(hits, "sound_path").strip("'\""), hits)
    classes = first(hits, "no_valid_file") or first(hits, "no_valid_root")
    if classes:
        return _no_valid_file(classes, hits)
    if first(hits, "tv_not_found"):
        return _torchvision_not_found(hits)
    if (
        first(hits, "hf_hub")
        or first(hits, "hf_local")
        or first(hits, "hf_data_dir")
        or first(hits, "hf_data_file")
    ):
        return _hf_missing(hits)
    root = first(hits, "no_class_folder")
    if root:
        return _no_class_folder(root, hits)
    if first(hits, "image_set") or first(hits, "image_set_raise"):
        return _image_set(hits)
    name = first(hits, "undefined_dataset")
    if name:
        return _undefined_dataset(name, first(hits, "data_config", "dataset_info.json"), hits)
    yolo_file = first(hits, "yolo_file")
    if yolo_file:
        return (
            f"train.py found no file '{yolo_file}': not at that path, nor under the repository's data/, models/ "
            "or utils/" + on_ranks(hits),
            "Give --data the path of the dataset's yaml (python train.py --data path/to/data.yaml, absolute or "
            "relative to the folder you run train.py from; a yaml outside the repository is not searched), and "
            "--cfg / --hyp / --weights theirs the same way.",
        )
    path = first(hits, "path") or first(hits, "win_path") or first(hits, "video_path", "?")
    if first(hits, "sample_file"):
        return _missing_sample(path, hits)
    info = _INFO_FILE.search(path)
    if info:
        _, fix = _missing_path(path, hits)
        summary = (
            f"the data preparation's info file '{path}' does not exist: the step that writes it has not run"
        )
        return summary + on_ranks(hits), _info_file(path, info["dataset"].lower()).lstrip() + " " + fix
    return _missing_path(path, hits)


def _missing_sample(path: str, hits: list[Hit]) -> tuple[str, str]:
    folder = path.replace("\\", "/").rpartition("/")[0] or "."
    return (
        f"a data file the dataset reads does not exist: '{path}' (an image, sound or video of one sample)"
        + on_ranks(hits),
        f"Check '{path}' on the machine that ran the job. If its folder ('{folder}') is not there either, the "
        "data root is wrong: give the dataset option (--data_root, --data_dir, the config's data path) the folder "
        "where the data actually is, absolute, not a placeholder from the README; a root that repeats the "
        "dataset's own folder, or a list of paths relative to another folder, builds such paths too. If the folder "
        "is there but not this file, the list or annotation file names samples that were never downloaded or "
        "extracted (a partial copy, another split): complete the data, or drop the entries whose file is missing.",
    )


def _missing_path(path: str, hits: list[Hit]) -> tuple[str, str]:
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
    templates=(
        "system:python-file-not-found",
        "third_party:yolov5-check-file-not-found",
        "third_party:torchvision-no-class-folder",
        "third_party:pytorch-ssd-missing-imageset-file",
        "third_party:llamafactory-undefined-dataset",
        "torchvision:found-no-valid-file-for-the-classes",
        "torchvision:found-0-files-in-subfolders-of",
        "torchvision:couldn-find-any-class-folder-in",
        "torchvision:dataset-not-found-or-corrupted",
        "torchvision:dataset-not-found-you-can-use",
        "datasets:couldn-find-dataset-script-at-or",
        "datasets:couldn-find-any-data-file-at",
        "datasets:dataset-doesn-exist-on-the-hub",
        "datasets:bucket-doesn-exist-on-the-hub",
        "datasets:unable-to-find",
        "datasets:unable-to-find-at",
        "third_party:opencv-imread-none-shape",
        "third_party:opencv-cvtcolor-empty-image",
        "third_party:opencv-resize-empty-image",
        "third_party:yolo-image-not-found",
        "third_party:soundfile-error-opening-system-error",
        "third_party:decord-error-opening",
        "system:winerror-3-path-not-found",
        "system:winerror-2-file-not-found",
    ),
    title="a dataset path that does not exist",
    # CPython's form with the path (pastes lose the space, or type a full-width colon), not ninja's or a shell's
    anchors=(
        "No such file or directory: '",
        "No such file or directory:'",
        "No such file or directory：",
        "File not found: ",
        "File Not Found: ",
        "Couldn't find any class folder in ",
        "missing ImageSet file",
        "Undefined dataset ",
        "Found no valid file for the classes ",
        "Found 0 files in subfolders of: ",
        "You can use download=True to download it",
        "or any data file in the same directory",
        "Couldn't find any data file at ",
        "doesn't exist on the Hub",
        "'NoneType' object has no attribute 'shape'",
        "!_src.empty() in function",
        "!ssize.empty() in function",
        "Image Not Found ",
        ": System error",
        "ERROR opening: ",
        "The system cannot find the path specified",
        "The system cannot find the file specified",
        "but got num_samples=0",
        # datasets' data_files.py; the match asks for its FileNotFoundError (other libraries say "Unable to find")
        "Unable to find '",
    ),
    match=_MISSING,
    facts=(
        R(r"(?P<info_file>_(?:db)?infos_[\w.]{0,80}\.pkl)'"),
        # the missing file is a sample's (an image, a sound, a video: what Image.open, cv2, soundfile or a video
        # reader opens for a dataset's item), not a checkpoint, a config or a cache
        R(
            r"No such file or directory\s*[:：]\s*'(?P<sample_file>[^'\n]{0,300}\."
            r"(?i:jpe?g|png|bmp|gif|tiff?|webp|ppm|pgm|wav|flac|mp3|ogg|m4a|mp4|avi|mkv|mov|webm))'"
        ),
        # ...or a folder's: a path with a separator whose last part has no extension (a data root, a split's
        # folder), not a single file
        R(
            r"No such file or directory\s*[:：]\s*'(?P<folder_path>[^'\n]{0,300}[/\\][^'\n/\\.]{1,100}[/\\]?)'"
        ),
        # datasets 1.18-3.x load.py: a name that could be the Hub's was looked up there too and not found there
        # either (a private or gated dataset without the token, a builder name datasets does not have, such as
        # 'tsv'), so the local path it names is not what the script meant
        R(r"Couldn't find '(?P<hf_either>[^'\n]{1,200})' on the Hugging Face Hub either"),
    ),
    # shared libraries have their own kinds (extension_import, cuda_library_path)
    reject=R(
        r"No such file or directory\s*[:：]\s*'[^'\n]{0,200}\.so(?:\.[\d.]+)?'|"
        # ...nor a program or a DLL Windows did not find (a compiler, a tool, a library's own DLL)
        r"cannot find the (?:path|file) specified\s*:\s*'[^'\n]{0,300}\.(?:exe|dll|bat|cmd)'"
    ),
    # a missing path is any file's; ImageFolder's refusal is only a root without class folders, and
    # pytorch-ssd's message only a VOC folder without its image-set list (LLaMA-Factory's undefined dataset is
    # a wrong data folder or an entry never written: likely)
    # ...and load_dataset's local path is decisive only where the name was not looked up on the Hub as well
    # (hiyouga/ChatGLM-Efficient-Tuning#18, a gated dataset: "Couldn't find a dataset script at ... Couldn't find
    # 'JosephusCheung/GuanacoDataset' on the Hugging Face Hub either")
    confirm=lambda hits, ctx: any(
        any(k in h.facts for k in _DECISIVE) and "hf_either" not in h.facts for h in hits
    ),
    also=(_OTHER_FILE, _GATED_DATASET, _UNREADABLE_IMAGE, _EMPTY_CROP, _SAMPLER_OPTION),
    # the same "No such file or directory" on train logs of other causes named other files: a checkpoint renamed
    # under a concurrent save ('tmp.pth.tar' -> 'last.pth.tar'), a shared metrics cache (.arrow), a library's
    # weights (.pth), mmcv's class name taken for a list file ('Insulator'); a sample's file is none of them
    rules_out=(
        (
            "sample_file",
            (
                "checkpoint_path",
                "concurrent_checkpoint_write",
                "concurrent_file_write",
                "library_version_bug",
                "single_class_string",
                "sharded_checkpoint_not_consolidated",
            ),
        ),
        # a folder may be a checkpoint's (the one other reading left): never a file torn or shared, a library's
        # weights file or a bare class name; a sharded checkpoint in another format (train 6870, Megatron's
        # mp_rank_00 beside .distcp files) is that checkpoint reading's own case, told by the files listed beside
        # it, which no rule reads yet
        (
            "folder_path",
            (
                "concurrent_checkpoint_write",
                "concurrent_file_write",
                "library_version_bug",
                "single_class_string",
                "sharded_checkpoint_not_consolidated",
            ),
        ),
        # a 3D toolbox's info file is its data preparation's output, named for the step that writes it
        (
            "info_file",
            (
                "concurrent_checkpoint_write",
                "concurrent_file_write",
                "library_version_bug",
                "single_class_string",
            ),
        ),
    ),
    describe=_missing,
)

RECOGNISERS = (DATA_PATH_MISSING,)
