"""The eighty-eighth sample's train misses: each reading on its lines as the source prints them, filled in as a run
would print them, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 4217-4266)."""

from __future__ import annotations

import pytest
from explaining import explained

pytestmark = pytest.mark.usefixtures("every_message_seen")

# mmcv 1.x's mmcv/parallel/data_parallel.py (MMDataParallel.train_step's assert), reached by OpenMMLab's
# tools/train.py run without a launcher and given two GPUs, as mmcv's newer string prints it
MM_REFUSAL = (
    "Traceback (most recent call last):\n"
    '  File "tools/train.py", line 206, in <module>\n'
    "    main()\n"
    '  File "/opt/conda/lib/python3.8/site-packages/mmcv/runner/epoch_based_runner.py", line 29, in run_iter\n'
    "    outputs = self.model.train_step(data_batch, self.optimizer, **kwargs)\n"
    '  File "/opt/conda/lib/python3.8/site-packages/mmcv/parallel/data_parallel.py", line 67, in train_step\n'
    "    assert len(self.device_ids) == 1, \\\n"
    "AssertionError: MMDataParallel only supports single GPU training, if you need to train with multiple GPUs, "
    "please use MMDistributedDataParallel instead.\n"
)


def test_mmcvs_single_gpu_refusal_is_tools_train_without_a_launcher():
    found = explained(MM_REFUSAL)
    assert found.id == "log.not_launched_distributed", found.summary
    assert "MMDataParallel" in found.summary and "./tools/dist_train.sh <config> <GPUs>" in found.fix
    assert "--launcher pytorch" in found.fix


# the run tried again with --launcher pytorch from a plain python process: os.environ['RANK'] after the refusal
def test_the_refusal_then_rank_unset_names_both_and_no_scheduler():
    found = explained(
        MM_REFUSAL
        + "    rank = int(os.environ['RANK'])\n"
        + '  File "/usr/lib/python3.8/os.py", line 675, in __getitem__\n'
        + "    raise KeyError(key) from None\n"
        + "KeyError: 'RANK'\n"
    )
    assert found.id == "log.not_launched_distributed", found.summary
    assert "MMDataParallel" in found.summary and "read RANK" in found.summary
    assert "dist_train.sh" in found.fix and "SLURM_PROCID" not in found.fix


# RANK unset without mmcv's refusal is any script under plain python: the launcher's general advice, not OpenMMLab's
def test_rank_unset_alone_is_not_read_as_openmmlabs_script():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 30, in <module>\n'
        "    rank = int(os.environ['RANK'])\n"
        '  File "/usr/lib/python3.8/os.py", line 675, in __getitem__\n'
        "    raise KeyError(key) from None\n"
        "KeyError: 'RANK'\n"
    )
    assert found.id == "log.not_launched_distributed", found.summary
    assert "MMDataParallel" not in found.summary and "dist_train.sh" not in found.fix


# PyG 2.0.x's NeighborLoader over a HeteroData, re-created by Lightning 1.5 under DDP (its collate wrapped by
# utilities/auto_restart.py), sampling edge types converted twice: the C++ map's lookup fails in hetero_sample
PYG_UNDER_LIGHTNING = (
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.8/site-packages/torch/utils/data/_utils/fetch.py", line 52, in fetch\n'
    "    return self.collate_fn(data)\n"
    '  File "/opt/venv/lib/python3.8/site-packages/pytorch_lightning/utilities/auto_restart.py", line 474, in '
    "_capture_metadata_collate\n"
    "    data = default_collate(samples)\n"
    '  File "/opt/venv/lib/python3.8/site-packages/torch_geometric/loader/neighbor_loader.py", line 219, in '
    "hetero_sample\n"
    "    self.directed,\n"
    "IndexError: _Map_base::at\n"
)


def test_a_pyg_loader_failing_under_lightning_is_the_rebuilt_loader():
    found = explained(PYG_UNDER_LIGHTNING)
    assert found.id == "log.library_version_bug", found.summary
    assert "torch_geometric" in found.summary
    assert "2.0.3" in found.fix and "replace_sampler_ddp=False" in found.fix and "pyg#3602" in found.fix


# the same loader failing with no Lightning frame is PyG's own reading only (nothing re-created the loader)
def test_a_pyg_loader_failing_without_lightning_names_no_rebuilding():
    found = explained(
        PYG_UNDER_LIGHTNING.replace("pytorch_lightning/utilities/auto_restart.py", "mylib/collate.py")
    )
    assert found.id == "log.library_version_bug", found.summary
    assert "replace_sampler_ddp" not in found.fix


# PyG's model code (a conv layer) raising under Lightning's training step is the data or the layer, not a loader
def test_a_pyg_layer_failing_under_lightning_is_not_the_rebuilt_loader():
    found = explained(
        PYG_UNDER_LIGHTNING.replace(
            "torch_geometric/loader/neighbor_loader.py", "torch_geometric/nn/conv/sage_conv.py"
        )
    )
    assert "replace_sampler_ddp" not in found.fix, found.fix
