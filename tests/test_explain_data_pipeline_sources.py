"""Input-pipeline messages mapped from the code that prints them (helper DATA2, issue 19): a sampler's generator on
another device (ATen's check_generator), datasets' map losing a worker (datasets/utils/py_utils.py) and the split it
is asked for (datasets/arrow_reader.py), Windows's shared file mappings (ATen's MapAllocator), a cache's lock
(py-filelock, ENOLCK), Pillow's decoder status and Arrow's binary builder. Each test gives the line as its source
prints it (the catalog template, filled in as the source fills it) and a near miss beside it.
"""

from __future__ import annotations

import pytest
from explaining import explained, leads_with, likely_with, template

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

SAMPLER = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/proj/train.py", line 150, in train\n'
    "    for batch in loader:\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/sampler.py", line 165, in __iter__\n'
    "    yield from map(int, torch.randperm(n, generator=generator).numpy())\n"
)


def test_the_new_templates_are_in_the_catalog_with_their_kinds():
    kinds = {ident: t.kind for ident, t in by_id().items()}
    assert kinds["aten:expected-device-type-for-generator"] == "sampler_generator_device"
    assert kinds["datasets:one-of-the-subprocesses-has-abruptly"] == "map_process_died"
    assert kinds["datasets:unknown-split-should-be-one-of"] == "datasets_call_refused"
    assert kinds["datasets:instruction-corresponds-to-no-data"] == "datasets_call_refused"
    assert kinds["torch_native:couldnt-open-shared-file-mapping"] == "windows_paging_file"
    assert kinds["third_party:filelock-file-lock-could-not-be-acquired"] == "cache_lock_unavailable"
    assert kinds["system:enolck-no-locks-available"] == "cache_lock_unavailable"
    assert kinds["third_party:arrow-array-cannot-contain-more-than-bytes"] == "arrow_offset_overflow"
    assert kinds["webdataset:input-pipeline-needs-to-be-reconfigured"] == "webdataset_shard_split"
    assert kinds["third_party:pillow-10-removed-image-constants"] == "dependency_version"
    assert kinds["system:pickle-cannot-get-attribute-on-builtin-main"] == "spawn_interactive_main"
    # MapAllocator's ENOMEM on a shared tensor's </torch_...> file: the mechanism is the shared tensors (session 45,
    # likely; train 3270's thread found a wrong data path behind it, which its one line does not show)
    assert kinds["torch_native:unable-to-mmap-bytes-from-file"] == "dataloader_shm"


def test_a_cpu_generator_under_a_cuda_default_device():
    line = "RuntimeError: " + template("aten:expected-device-type-for-generator", "cuda", "cpu")
    found = leads_with(
        SAMPLER + line,
        "sampler_generator_device",
        "certain",
        ["set_default_device", "generator=torch.Generator(device='cuda')", "randperm"],
    )
    assert "'cpu' was handed to an op running on 'cuda'" in found.summary
    # the other way round: a CUDA generator handed to the DataLoader, whose sampler draws on the CPU
    found = leads_with(
        "RuntimeError: " + template("aten:expected-device-type-for-generator", "cpu", "cuda"),
        "sampler_generator_device",
        "certain",
        ["takes a CPU generator"],
    )
    assert "set_default_device" not in found.fix
    # the words in prose, without the devices torch names, are not the refusal
    assert explained("note: the device type for generator but found nothing to do\n").id == "log.unrecognised"


def test_a_worker_of_datasets_map_that_died():
    line = "RuntimeError: " + template("datasets:one-of-the-subprocesses-has-abruptly")
    found = likely_with(line + "\n", "map_process_died", "log.worker_crash")
    assert "num_proc" in found.fix and "dmesg" in found.fix
    assert "log.spawn_main_guard" in found.details["alternatives"]
    # datasets' own info line as map starts its workers is no failure
    info = "INFO:datasets.arrow_dataset:" + template(
        "datasets:spawning-processes-for-objects-in-slices", "8", "100000", "12500"
    )
    assert explained(info + "\n").id == "log.unrecognised"


def test_a_split_the_dataset_does_not_have_or_that_holds_no_data():
    leads_with(
        "ValueError: " + template("datasets:unknown-split-should-be-one-of", "validation", "['train']"),
        "datasets_call_refused",
        "certain",
        ["train_test_split(test_size=0.1)", 'Unknown split "validation"'],
    )
    leads_with(
        "ValueError: " + template("datasets:instruction-corresponds-to-no-data", "train"),
        "datasets_call_refused",
        "certain",
        ["matched nothing", "force_redownload"],
    )
    # torch's pipelining split points share a word, not the message
    assert explained("ValueError: Unknown split point type.\n").id != "log.datasets_call_refused"


def test_windows_paging_file_too_small_for_the_workers():
    line = "RuntimeError: " + template(
        "torch_native:couldnt-open-shared-file-mapping", "torch_7792_1371697923_98", "1455"
    )
    found = leads_with(line, "windows_paging_file", "certain", ["paging file", "num_workers", "1455"])
    assert "net helpmsg" not in found.fix
    # another code is another failure of the same call: likely, the code named
    other = "RuntimeError: " + template(
        "torch_native:couldnt-open-shared-file-mapping", "torch_7792_1371697923_98", "5"
    )
    found = leads_with(other, "windows_paging_file", "likely", ["error code 5", "net helpmsg 5"])


def test_a_cache_lock_that_cannot_be_taken():
    path = "/home/u/.cache/huggingface/datasets/_home_u_.cache_huggingface_datasets_json_default-5c1f_0.0.0_ab12.lock"
    line = "filelock._error.Timeout: " + template(
        "third_party:filelock-file-lock-could-not-be-acquired", path
    )
    found = likely_with(line + "\n", "cache_lock_unavailable", "log.concurrent_file_write")
    assert path[:120] in found.summary and "main_process_first" in found.fix
    found = leads_with(
        "OSError: " + template("system:enolck-no-locks-available"),
        "cache_lock_unavailable",
        "certain",
        ["HF_HOME=/tmp/hf_home", "lock support"],
    )
    # filelock's debug line while it waits is no failure
    waiting = f"DEBUG:filelock:Lock 140386484514192 not acquired on {path}, waiting 0.05 seconds ...\n"
    assert explained(waiting).id == "log.unrecognised"


def test_pillow_rejecting_an_images_data():
    worker = (
        '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 308, in '
        "_worker_loop\n    data = fetcher.fetch(index)\n"
    )
    status = "broken data stream"
    line = "OSError: " + template("pillow:when-reading-image-file-2", status)
    found = likely_with(worker + line + "\n", "bad_training_data", "log.image_stream_misuse")
    assert "damaged" in found.summary and "LOAD_TRUNCATED_IMAGES does not help" in found.fix
    assert "PNG" not in found.summary
    line = "OSError: " + template("pillow:when-reading-image-file-2", "unrecognized data stream contents")
    likely_with(line + "\n", "bad_training_data", "log.image_stream_misuse")
    # the words without Pillow's "when reading image file" are not its decoder's status
    assert explained("WARNING: broken data stream from camera 2, retrying\n").id != "log.bad_training_data"


def test_an_arrow_string_column_built_past_two_gib():
    line = "pyarrow.lib.ArrowCapacityError: " + template(
        "third_party:arrow-array-cannot-contain-more-than-bytes", "2147483646", "2147483660"
    )
    found = likely_with(line + "\n", "arrow_offset_overflow", "log.library_version_bug")
    assert "as it was written" in found.summary and "large_string" in found.fix
    # a fixed-size list builder's limit counts elements: another limit, not this reading
    elements = "pyarrow.lib.ArrowCapacityError: array cannot contain more than 2147483647 elements, have 2147483650\n"
    assert explained(elements).id != "log.arrow_offset_overflow"


def test_webdataset_0_2_5s_wording_of_the_node_splitter_refusal():
    line = "ValueError: " + template("webdataset:input-pipeline-needs-to-be-reconfigured")
    leads_with(line, "webdataset_shard_split", "certain", ["nodesplitter=wds.split_by_node", "every rank"])
    # the newer wording is read as before
    newer = "ValueError: " + template("webdataset:you-need-to-add-an-explicit")
    leads_with(newer, "webdataset_shard_split", "certain", ["nodesplitter=wds.split_by_node"])
    # the words in a README's prose, without the refusal, are not it
    assert explained("# the input pipeline needs to be reconfigured later\n").id == "log.unrecognised"


def test_pillow_10s_removed_resampling_constants():
    for name, instead in (
        ("ANTIALIAS", "Image.LANCZOS"),
        ("LINEAR", "Image.BILINEAR"),
        ("CUBIC", "Image.BICUBIC"),
    ):
        line = "AttributeError: " + template("third_party:pillow-10-removed-image-constants").replace(
            "ANTIALIAS", name
        )
        leads_with(line, "dependency_version", "certain", [f"Image.{name}", instead, "Pillow==9.5.0"])
    # the other way round (code for Pillow 9.1+ on an older Pillow) is not this removal
    older = "AttributeError: module 'PIL.Image' has no attribute 'Resampling'\n"
    assert "Pillow 10 removed" not in explained(older).summary


SPAWNED = (
    "Traceback (most recent call last):\n"
    '  File "<string>", line 1, in <module>\n'
    '  File "C:\\Users\\u\\anaconda3\\lib\\multiprocessing\\spawn.py", line 116, in spawn_main\n'
    "    exitcode = _main(fd, parent_sentinel)\n"
    '  File "C:\\Users\\u\\anaconda3\\lib\\multiprocessing\\spawn.py", line 126, in _main\n'
    "    self = reduction.pickle.load(from_parent)\n"
)


def test_a_notebooks_dataset_class_that_spawned_workers_cannot_import():
    # CPython's "Can't get attribute {!r} on {!r}", the module's repr that of an interactive __main__
    line = "AttributeError: " + template("system:pickle-cannot-get-attribute-on-builtin-main").replace(
        "{!r}", "'CustomImageDataset'"
    )
    leads_with(
        SPAWNED + line,
        "spawn_interactive_main",
        "certain",
        ["'CustomImageDataset'", ".py file", "num_workers=0"],
    )
    # without the spawn frames the same line may be a REPL's torch.load: likely
    leads_with(line, "spawn_interactive_main", "likely", ["'CustomImageDataset'"])
    # a script's own __main__ (a file) is not the notebook's case
    script = "AttributeError: Can't get attribute 'Net' on <module '__main__' from '/home/u/train.py'>\n"
    assert explained(script).id != "log.spawn_interactive_main"


def test_datasets_writing_no_rows_or_loading_a_folder_save_to_disk_did_not_write():
    leads_with(
        "ValueError: " + template("datasets:please-pass-features-or-at-least"),
        "datasets_call_refused",
        "certain",
        ["len(dataset) before and after each filter and map", "features="],
    )
    leads_with(
        "FileNotFoundError: " + template("datasets:no-such-file-expected-to-load", "/data/tokenized/train"),
        "datasets_call_refused",
        "certain",
        ["save_to_disk", "load_dataset('json', data_files=...)"],
    )


def test_datasets_data_files_that_match_no_file():
    found = leads_with(
        "FileNotFoundError: " + template("datasets:unable-to-find-at", "train.jsonl", "/home/u/proj"),
        "data_path_missing",
        "likely",
        ["'train.jsonl'", "absolute", "every node"],
    )
    assert "/home/u/proj" in found.summary
    leads_with(
        "FileNotFoundError: " + template("datasets:unable-to-find", "/data/train.jsonl"),
        "data_path_missing",
        "likely",
        ["'/data/train.jsonl'"],
    )
    # another library's "Unable to find" (not datasets' FileNotFoundError) is not a data file
    assert explained("ValueError: Unable to find 'model.bin' in cache\n").id != "log.data_path_missing"


def test_numpy_not_available_to_torch():
    found = leads_with(
        "RuntimeError: " + template("torch_native:numpy-is-not-available"),
        "dependency_version",
        "likely",
        ["numpy<2", "pip install numpy", "2.3"],
    )
    assert "no NumPy in this environment" in found.summary
    # with torch's own warning at import, which names NumPy 2's C API, the reason is said
    warned = (
        "UserWarning: Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at "
        "../torch/csrc/utils/tensor_numpy.cpp:84.)\n"
        "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash.\n"
        "RuntimeError: " + template("torch_native:numpy-is-not-available")
    )
    found = explained(warned + "\n")
    assert found.id == "log.dependency_version" and "NumPy" in found.fix
