"""A full disk under the Hugging Face caches: where the traceback's frames are datasets writing its Arrow cache (or
the message names ~/.cache/huggingface/datasets), or huggingface_hub downloading into its cache, the fix moves and
clears that cache (HF_DATASETS_CACHE / HF_HUB_CACHE / HF_HOME, cache_dir=), not a checkpoint's folder."""

from __future__ import annotations

import pytest
from explaining import explained, leads_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

SITE = "/root/miniconda3/lib/python3.8/site-packages"


def test_datasets_arrow_cache_full_as_the_train_file_prints_it():
    # corpus train 7570 (hiyouga/LlamaFactory#275): the system disk (10 GB) held the default datasets cache;
    # HF_DATASETS_CACHE on the data disk fixed it
    log = (
        "Traceback (most recent call last):                                  \n"
        f'  File "{SITE}/datasets/builder.py", line 1894, in _prepare_split_single\n'
        "    writer.write_table(table)\n"
        f'  File "{SITE}/datasets/arrow_writer.py", line 575, in write_table\n'
        "    self.pa_writer.write_table(pa_table, writer_batch_size)\n"
        '  File "pyarrow/ipc.pxi", line 525, in pyarrow.lib._CRecordBatchWriter.write_table\n'
        f'  File "{SITE}/fsspec/implementations/local.py", line 382, in write\n'
        "    return self.f.write(*args, **kwargs)\n"
        "OSError: [Errno 28] No space left on device"
    )
    leads_with(
        log, "disk_full", "certain", ["HF_DATASETS_CACHE", "cache_dir=", "HF_HOME", "cleanup_cache_files"]
    )
    assert "save_total_limit" not in explained(log + "\n").fix


def test_datasets_cache_path_named_in_the_message():
    # CPython's OSError with the file it could not write, under datasets' default cache path
    leads_with(
        "OSError: [Errno 28] No space left on device: "
        "'/home/u/.cache/huggingface/datasets/json/default-1a2b/0.0.0/cache-3c4d.arrow'",
        "disk_full",
        "certain",
        ["HF_DATASETS_CACHE"],
    )


def test_hub_download_full():
    # huggingface_hub/file_download.py writing a model's blob into ~/.cache/huggingface/hub
    leads_with(
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/site-packages/huggingface_hub/file_download.py", line 1457, in '
        "hf_hub_download\n"
        "    http_get(url_to_download, temp_file, proxies=proxies, resume_size=resume_size, headers=headers)\n"
        "OSError: [Errno 28] No space left on device",
        "disk_full",
        "certain",
        ["HF_HUB_CACHE", "TRANSFORMERS_CACHE", "hf cache rm"],
    )


def test_a_checkpoint_save_keeps_the_checkpoint_advice():
    leads_with(
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 441, in save\n'
        "OSError: [Errno 28] No space left on device",
        "disk_full",
        "certain",
        ["save_total_limit"],
    )


def test_pips_install_on_a_full_disk_names_pips_folders_not_a_checkpoint():
    # pip's src/pip/_internal/commands/install.py wraps the OSError in its own words (build_tools.tsv's
    # error-could-not-install-packages-due and -3, the older EnvironmentError wording)
    for wording in ("OSError", "EnvironmentError"):
        found = explained(
            f"ERROR: Could not install packages due to an {wording}: [Errno 28] No space left on device\n"
        )
        assert found.id == "log.disk_full", found.summary
        assert "pip's install failed" in found.summary and "checkpoint" not in found.fix, found.fix
        assert "TMPDIR" in found.fix and "pip cache purge" in found.fix


def test_a_checkpoint_save_after_the_caches_were_named_keeps_the_checkpoint_advice():
    # "Found cached dataset ..." and "loading weights file ..." name the caches' paths at the start of most Hugging
    # Face runs: a save's full disk later in the same log is the save's, not the caches'
    for head in (
        "Found cached dataset json (/root/.cache/huggingface/datasets/json/default-1/0.0.0/abc)\n",
        "loading weights file /root/.cache/huggingface/hub/models--gpt2/snapshots/x/model.safetensors\n",
        f"{SITE}/datasets/arrow_dataset.py:1533: FutureWarning: something deprecated\n",
    ):
        found = explained(
            head + "Traceback (most recent call last):\n"
            f'  File "{SITE}/transformers/trainer.py", line 2400, in _save_checkpoint\n'
            f'  File "{SITE}/safetensors/torch.py", line 286, in save_file\n'
            "OSError: [Errno 28] No space left on device: '/out/checkpoint-500/model.safetensors'\n"
        )
        assert found.id == "log.disk_full", found.summary
        assert "datasets" not in found.summary and "Hugging Face download" not in found.summary, found.summary
        assert "HF_DATASETS_CACHE" not in found.fix and "HF_HUB_CACHE" not in found.fix, found.fix


def test_the_path_on_the_error_line_outweighs_a_datasets_frame():
    # datasets' frames above, but the OSError names the file it could not write: a checkpoint's, outside the cache
    found = explained(
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/datasets/arrow_dataset.py", line 3000, in map\n'
        "    return fn(batch)\n"
        '  File "train.py", line 40, in tokenize\n'
        "    torch.save(state, path)\n"
        "OSError: [Errno 28] No space left on device: '/out/step-100.pt'\n"
    )
    assert "datasets' cache" not in found.summary and "HF_DATASETS_CACHE" not in found.fix, found.summary
