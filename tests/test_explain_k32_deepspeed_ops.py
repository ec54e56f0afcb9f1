"""A DeepSpeed op whose prerequisite the machine lacks (kinds/deepspeed_op_requirements.py): the op builders'
warnings as DeepSpeed prints them before "Unable to JIT load" (DeepSpeed is not installed here; its builders check
the machine they run on), always likely since ds_report prints them on healthy machines too; and near misses."""

from __future__ import annotations

import pytest
from explaining import explained, filled, leads_with

pytestmark = pytest.mark.usefixtures("every_message_seen")

JIT_LOAD = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/project/train.py", line 52, in <module>\n'
    '    engine, optimizer, _, _ = deepspeed.initialize(model=model, config="ds_zero3_nvme.json")\n'
    '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/ops/op_builder/builder.py", line 514, in jit_load\n'
    "    raise RuntimeError(\n"
    "RuntimeError: Unable to JIT load the {op} op due to it not being compatible due to hardware/software issue. "
    "{reason}\n"
)


def test_nvme_offload_without_libaio_reads_as_the_missing_library():
    reason = filled("deepspeed:requires-the-dev-libaio-so-object", "async_io")
    log = f" [WARNING]  {reason}\n" + JIT_LOAD.format(op="async_io", reason=reason)
    leads_with(
        log, "deepspeed_op_prerequisite", "likely", ["libaio", "apt install libaio-dev", "DS_BUILD_AIO=1"]
    )


def test_evoformer_without_cutlass():
    message = filled("deepspeed:cutlass-path-does-not-contain-cutlass", "/opt/cutlass-2.11")
    leads_with(
        f"RuntimeError: {message}\n",
        "deepspeed_op_prerequisite",
        "likely",
        ["/opt/cutlass-2.11", "pip install nvidia-cutlass", "CUTLASS_PATH"],
    )


def test_sparse_attention_under_torch_two():
    message = filled("deepspeed:requires-torch-version-and-but-detected", "sparse_attn", "2", "4")
    leads_with(
        f" [WARNING]  {message}\n",
        "deepspeed_op_prerequisite",
        "likely",
        ["detected 2.4", "triton==1.0.0", "sparse_attention"],
    )


def test_a_build_without_ninja_stays_a_build_failure():
    found = explained(
        "RuntimeError: Unable to JIT load the fused_adam op due to ninja not being installed.\n",
    )
    assert found.id == "log.cuda_build", (found.id, found.summary)


def test_a_missing_python_package_is_not_an_op_prerequisite():
    found = explained("ModuleNotFoundError: No module named 'cutlass_library'\n")
    assert found.id != "log.deepspeed_op_prerequisite", found.summary
