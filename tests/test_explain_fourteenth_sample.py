"""The knowledge the fourteenth sample by symptom (corpus files 517-547, train half) asked for, each anchored on the
message its source prints: Pillow refusing a truncated image (PIL/ImageFile.py), CPython refusing a second
multiprocessing start method (multiprocessing/context.py), and CPython's pickler failing inside torch.save
(torch/serialization.py). Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

from explaining import explained, lead, template


def test_a_truncated_image_is_bad_training_data_certain():
    # 523.txt (eriklindernoren/PyTorch-YOLOv3#162): a JPEG of the training set that ends early
    found = lead("523.txt")
    assert found.id == "log.bad_training_data" and found.details["confidence"] == "certain"
    assert "truncated" in found.summary
    assert "LOAD_TRUNCATED_IMAGES" in found.fix and "Image.open(path).load()" in found.fix
    # both of Pillow's wordings, as the DataLoader re-raises them from a worker
    line = "OSError: " + template("third_party:pil-image-file-is-truncated", "54")
    worker = "OSError: Caught OSError in DataLoader worker process 3.\n"
    found = explained(worker + line + "\n")
    assert found.id == "log.bad_training_data" and "in a DataLoader worker" in found.summary
    found = explained("OSError: " + template("third_party:pil-image-file-is-truncated-2") + "\n")
    assert found.id == "log.bad_training_data"


def test_a_decoder_error_that_is_not_a_truncated_file_is_not_bad_training_data():
    # Pillow's other decoder failure names no truncation: a file format it cannot read, not a damaged file
    found = explained("OSError: decoder error -2 when reading image file\n")
    assert found.id != "log.bad_training_data"


def test_a_start_method_set_twice_is_a_release_bug_only_likely():
    # 526.txt (instructlab/instructlab#1050): the start method already fixed by another code path
    found = lead("526.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "start method was set a second time" in found.summary
    assert "force=True" in found.fix and "already set" in found.fix
    line = "RuntimeError: " + template("system:multiprocessing-context-already-set")
    assert explained(line + "\n").id == "log.library_version_bug"


def test_another_context_error_is_not_the_start_method():
    found = explained("RuntimeError: context has already been entered\n")
    assert found.id != "log.library_version_bug"


def test_a_pickling_error_inside_torch_save_leads_as_an_unpicklable_checkpoint_object():
    # 543.txt (pytorch/pytorch#1148): torch.save of a whole model with a backward hook registered; likely, as a
    # labelled log of a spawned process's pickling printed the same "Can't pickle" (catalog/seen_on.tsv)
    found = lead("543.txt")
    assert found.id == "log.unpicklable_checkpoint_object" and found.details["confidence"] == "likely"
    assert "spawn_pickling" in found.details["evidence"]
    assert "torch.save could not pickle" in found.summary
    assert "state_dict()" in found.fix and "dill" in found.fix


def test_a_pickling_error_from_a_spawned_process_stays_spawn_pickling():
    # the same pickler error raised by multiprocessing's reduction.py (mp.spawn, ddp_spawn), no torch.save
    text = (
        '  File "/usr/lib/python3.8/multiprocessing/popen_spawn_posix.py", line 47, in _launch\n'
        "    reduction.dump(process_obj, fp)\n"
        '  File "/usr/lib/python3.8/multiprocessing/reduction.py", line 60, in dump\n'
        "    ForkingPickler(file, protocol).dump(obj)\n"
        "AttributeError: Can't pickle local object 'main.<locals>.worker_init_fn'\n"
    )
    assert explained(text).id == "log.spawn_pickling"


def test_a_bare_lambda_pickling_error_names_torch_save_beside_spawn():
    # 545.txt (Cadene/pretrained-models.pytorch#128): only the pickler's line, a lambda; spawn and torch.save
    # both pickle, and nothing in the line says which
    found = lead("545.txt")
    assert found.id == "log.spawn_pickling" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.unpicklable_checkpoint_object"]
    # an object that is not local (a lock, an open file) is spawn's alone
    found = explained("TypeError: can't pickle _thread.lock objects\n")
    assert found.id == "log.spawn_pickling"
    assert "log.unpicklable_checkpoint_object" not in (found.details.get("alternatives") or [])
