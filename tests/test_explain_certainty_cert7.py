"""Certainty, seventh round (task CERT7): what the certainty audit still flagged, and the certain readings of the
data and "other" families, each message read against every caller of it in its source.

What the audit flagged (benchmarks/certainty_audit.py, (b) and (d)), each read against the source that prints it:

- torch's "Distributed package doesn't have NCCL / Gloo / XCCL built in" (distributed_c10d.py
  _new_process_group_helper: one check per backend, the build lacks it): certain, cited. Told wrong before: XCCL
  (Intel's XPU backend) was read as NCCL, and a build without gloo was told to switch to gloo.
- Pillow's "image file is truncated" with and without "(N bytes not processed)" (PIL/ImageFile.py load, its two
  raises), CUDACachingAllocator's out-of-memory line as torch 1.x-2.0 worded it, DDP's reducer check under
  static_graph=True (reducer.cpp, the summary names static_graph), NCCL's "Duplicate GPU detected" with the bus id
  as %x, NCCL 2.10-2.14's "Net : connecting to address ... neither AF_INET" (ncclSocketConnect, the check 2.16+
  words as ncclSocketInit's): another release's or another file's wording of a cited message, now cited.
- NCCL's "Error: failed to extend <segment> to N bytes" (misc/shmutils.cc ftruncate in 2.12-2.18, os/linux.cc
  fallocate in 2.19+ with its errno): a system call on the /dev/shm segment, certain and cited; an errno of a
  refused call (EOPNOTSUPP, EPERM) is no longer told a full /dev/shm, as the segment line's already was.
- accelerate's "FSDP2 requires PyTorch >= 2.6.0", "`merge_fsdp_weights` requires PyTorch >= 2.3.0", "Tried to
  use TP, but `torch.distributed.device_mesh` requires PyTorch >= 2.2.0" and DeepSpeed's "Leaf module requires
  PyTorch >= 1.8": certain, cited. accelerate compares the whole version (utils/versions.py: packaging's parse of
  the installed torch), so a pre-release of the release it names (2.6.0a0+..., an NVIDIA container's torch) is
  refused too: where the log shows one (collect_env's "PyTorch version: ..." is read now), the fix says so. The
  install line named "PyTorch", a PyPI stub that refuses to install: it names torch.
- CPython's bare KeyboardInterrupt (the default SIGINT handler): the user's Ctrl-C, certain, the template now the
  reading's own (interrupted.TEMPLATES). On Windows a wandb sweep agent stops the run it started with Ctrl-C's
  signal (wandb_agent.py AgentProcess.terminate): beside the agent's "Agent Starting Run:" line it is likely,
  the agent's stop named, as torchrun's already was beside several ranks.

The certain readings of the data, script's-own-mistake and library-release families (certainty_audit.py
--list-certain), each message read against every caller of it:

- webdataset's "{url}: no gopen handler defined" (gopen.py gopen_error, the default of gopen_schemes): a scheme
  it has no handler for, certain; but a Windows path is one too (urlparse reads "C:" as the scheme "c"), and it
  was told to pipe the shard from S3: it is named a drive letter read as a scheme, file: URLs the fix.
- Kept certain, each pinned below with its reason: webdataset's "you need to add an explicit nodesplitter"
  (shardlists.py single_node_only: a world size above 1, from RANK/WORLD_SIZE or torch.distributed); scipy's "Please
  use HDF reader for matlab v7.3 files" (_mio.py mat_reader_factory: the header's major version 2, v7.3 alone);
  detectron2's and VISSL's "Dataset '...' is already registered!" (catalog.py register: the name in the dict);
  F.one_hot's "Class values must be smaller than num_classes" (Onehot.cpp, the labels or num_classes, both named);
  cuDNN's "RNN backward can only be called in training mode" (RNN.cpp, the forward's train flag); "Can't detach
  views in-place" (VariableTypeManual.cpp detach_ on a view, DDP's bucket-view gradients named in the same
  message and in the fix); _scaled_mm's "trailing dimension of mat1 to be divisible by 16" (Blas.cpp, FP8's
  shapes); "Adam does not support sparse gradients" (sparse=True layers). Already likely where another cause prints
  the same words: GDAL's IReadBlock and libtiff's scanline read (a shared handle), librosa's mono check (a batch),
  YOLO's label columns (a warning), detectron2's filtered instances (a warning), default_collate's None.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from explaining import certain, explained

from torchdoctor.explain.catalog import by_id
from torchdoctor.explain.kinds import BY_KIND

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import certainty_audit  # noqa: E402

pytestmark = pytest.mark.usefixtures("every_message_seen")

FLAGGED = (
    "system:keyboard-interrupt",
    "torch:distributed-package-doesn-have-gloo-built",
    "torch:distributed-package-doesn-have-nccl-built",
    "torch:distributed-package-doesn-have-xccl-built",
    "pillow:image-file-is-truncated",
    "pillow:image-file-is-truncated-bytes-not",
    "torch_native:cuda-out-of-memory-old",
    "torch_cpp:expected-to-have-finished-reduction-in-2",
    "accelerate:fsdp2-requires-pytorch",
    "accelerate:merge-fsdp-weights-requires-pytorch",
    "accelerate:tried-to-use-tp-but-torch",
    "deepspeed:leaf-module-requires-pytorch",
    "nccl:duplicate-gpu-detected-rank-and-rank-2",
    "nccl:error-failed-to-extend-to-bytes",
    "nccl:error-failed-to-extend-to-bytes-3",
    "nccl:net-connecting-to-address-with-family",
)


@pytest.mark.parametrize("ident", FLAGGED)
def test_a_certain_lead_on_a_flagged_template_cites_it(ident):
    line = certainty_audit.render(by_id()[ident].text)
    kind, confidence = certainty_audit.lead(line)
    cited = certainty_audit.READINGS.get(kind) or BY_KIND[kind].templates
    assert confidence == "certain" and ident in cited, (kind, confidence, line)


def test_a_torch_without_xccl_is_told_about_intels_backend_not_nccl():
    found = certain("RuntimeError: Distributed package doesn't have XCCL built in\n", "backend_unavailable")
    assert "no XCCL backend" in found.summary and "NCCL" not in found.summary.replace("XCCL", ""), (
        found.summary
    )
    assert "Intel GPUs" in found.fix and "whl/xpu" in found.fix, found.fix


def test_a_torch_without_gloo_is_not_told_to_use_gloo():
    found = certain("RuntimeError: Distributed package doesn't have Gloo built in\n", "backend_unavailable")
    assert "use the gloo backend" not in found.fix and "USE_GLOO=0" in found.fix, found.fix


def test_a_torch_without_nccl_keeps_its_fix():
    found = certain("RuntimeError: Distributed package doesn't have NCCL built in\n", "backend_unavailable")
    assert "backend='gloo'" in found.fix and "CUDA build" in found.fix, found.fix


EXTEND = "node1:2301:2345 [0] NCCL WARN Error: failed to extend /dev/shm/nccl-Lp3hBz to 9637892 bytes{}\n"


def test_a_refused_fallocate_on_the_segment_is_not_a_full_dev_shm():
    found = certain(EXTEND.format(", error: Operation not supported (95)"), "nccl_system_error")
    assert "refused (Operation not supported)" in found.fix and "64 MB" not in found.fix, found.fix


@pytest.mark.parametrize("errno", ["", ", error: No space left on device (28)"])
def test_a_segment_that_could_not_grow_is_still_dev_shm_space(errno):
    found = certain(EXTEND.format(errno), "nccl_system_error")
    assert "64 MB" in found.fix, found.fix


def test_a_torch_minimum_is_installed_as_torch_not_pytorch():
    found = certain("ImportError: FSDP2 requires PyTorch >= 2.6.0\n", "dependency_version")
    assert "pip install -U 'torch>=2.6.0'" in found.fix and "'PyTorch>=" not in found.fix, found.fix


def test_accelerates_tensor_parallel_minimum_names_what_needs_it():
    line = (
        "ImportError: Tried to use TP, but `torch.distributed.device_mesh` requires PyTorch >= 2.2.0. Please "
        "upgrade your PyTorch version\n"
    )
    found = certain(line, "dependency_version")
    assert found.summary.startswith("torch.distributed.device_mesh requires PyTorch >= 2.2.0"), found.summary


def test_a_pre_release_of_the_torch_named_is_said_to_be_refused_too():
    text = "PyTorch version: 2.6.0a0+ecf3bae40a.nv25.01\nImportError: FSDP2 requires PyTorch >= 2.6.0\n"
    found = certain(text, "dependency_version")
    assert "2.6.0a0+ecf3bae40a.nv25.01 is installed" in found.summary, found.summary
    assert "pre-release of 2.6.0" in found.fix, found.fix


def test_an_older_torch_is_not_called_a_pre_release():
    found = certain(
        "[pip3] torch==2.5.1\nImportError: FSDP2 requires PyTorch >= 2.6.0\n", "dependency_version"
    )
    assert "2.5.1 is installed" in found.summary and "pre-release" not in found.fix, (
        found.summary,
        found.fix,
    )


STOPPED = (
    "Traceback (most recent call last):\n"
    '  File "C:\\Users\\me\\sweep\\train.py", line 40, in <module>\n'
    "    time.sleep(1)\n"
    "KeyboardInterrupt\n"
)
AGENT = "wandb: Agent Starting Run: cfdh3rcq with config:\nwandb: \tlr: 0.001\n"


def test_a_windows_run_a_sweep_agent_started_may_be_the_agent_stopping_it():
    found = explained(AGENT + STOPPED)
    assert found.id == "log.interrupted" and found.details["confidence"] == "likely", found.summary
    assert "wandb sweep agent" in found.summary and "early termination" in found.fix, found.fix


@pytest.mark.parametrize(
    "text",
    [STOPPED, AGENT + STOPPED.replace("C:\\Users\\me\\sweep\\", "/home/me/sweep/")],
    ids=["windows-without-agent", "agent-on-linux"],
)
def test_a_ctrl_c_stays_the_users_where_no_agent_sends_it(text):
    found = explained(text)
    assert found.id == "log.interrupted" and found.details["confidence"] == "certain", found.summary


def test_a_windows_shard_path_is_named_a_drive_letter_read_as_a_scheme():
    found = certain(
        "ValueError: C:\\data\\shards\\train-000.tar: no gopen handler defined\n", "url_scheme_unsupported"
    )
    assert "drive letter" in found.summary and "(c:)" in found.summary, found.summary
    assert "file:C:/data/shards/train-000.tar" in found.fix and "aws s3" not in found.fix, found.fix


def test_a_scheme_webdataset_has_no_handler_for_keeps_its_fix():
    found = certain(
        "ValueError: s3://bucket/train-000.tar: no gopen handler defined\n", "url_scheme_unsupported"
    )
    assert "pipe:aws s3 cp s3://bucket/train-000.tar -" in found.fix, found.fix


@pytest.mark.parametrize(
    ("line", "kind", "said"),
    [
        (
            "ValueError: you need to add an explicit nodesplitter to your input pipeline for multi-node training",
            "webdataset_shard_split",
            "split_by_node",
        ),
        (
            "NotImplementedError: Please use HDF reader for matlab v7.3 files, e.g. h5py",
            "matlab_v73_file",
            "h5py",
        ),
        (
            "KeyError: \"Dataset 'coco_train' is already registered!\"",
            "dataset_registered_twice",
            "DatasetCatalog",
        ),
        (
            "RuntimeError: Class values must be smaller than num_classes.",
            "label_out_of_range",
            "max label + 1",
        ),
        (
            "RuntimeError: cudnn RNN backward can only be called in training mode",
            "rnn_backward_eval_mode",
            "model.train()",
        ),
        (
            "RuntimeError: Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
            "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
            "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
            "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.",
            "inplace_detach_view",
            "gradient_as_bucket_view=True",
        ),
        (
            "RuntimeError: Expected trailing dimension of mat1 to be divisible by 16 but got mat1 shape: (16x1000).",
            "input_size_not_divisible",
            "pad_inner_dim=True",
        ),
        ("RuntimeError: Adam does not support sparse gradients", "optimizer_sparse_gradients", "SparseAdam"),
    ],
    ids=lambda v: v if isinstance(v, str) and "_" in v and " " not in v else None,
)
def test_a_message_printed_for_one_cause_stays_certain(line, kind, said):
    found = certain(line + "\n", kind)
    assert said in found.fix, found.fix
