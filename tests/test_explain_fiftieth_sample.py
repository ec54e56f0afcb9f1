"""The fiftieth sample's train misses: each reading on its line as the source prints it, filled in as a run prints
it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2317-2326)."""

from __future__ import annotations

import pytest
from explaining import certain, explained, likely_with, template

pytestmark = pytest.mark.usefixtures("every_message_seen")

FRAME = (
    'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    loss = step(batch)\n'
)


# torch/lib/c10d/ProcessGroupNCCL.cpp (1.1-1.10) and ProcessGroupMPI.cpp: each process group refused in its own
# name before Backend.hpp worded it "Backend nccl does not support ..."
@pytest.mark.parametrize(
    "ident",
    [
        "torch_native:processgroupnccl-does-not-support-gather",
        "torch_native:processgroupnccl-does-not-support-scatter",
        "torch_native:processgroupnccl-does-not-support-alltoall",
        "torch_native:processgroupnccl-does-not-support-recvanysource",
        "torch_native:processgroupnccl-does-not-support-allgather-coalesced",
        "torch_native:processgroupmpi-does-not-support-allgather-coalesced",
    ],
)
def test_a_process_group_refusing_a_collective_in_its_own_name_is_the_backend_lacking_it(ident):
    found = certain(FRAME + "RuntimeError: " + template(ident) + "\n", "collective_arguments")
    assert "does not implement this collective" in found.summary


def test_gather_over_an_old_nccl_names_a_gloo_group():
    found = certain(
        FRAME + "    work = default_pg.gather(output_tensors, input_tensors, opts)\n"
        "RuntimeError: ProcessGroupNCCL does not support gather\n",
        "collective_arguments",
    )
    assert "torch 1.11" in found.fix and "backend='gloo'" in found.fix


# torch/distributed/tensor/_ops/utils.py: an in-place op on a DTensor whose strategy would change its placement
def test_an_in_place_op_changing_a_dtensors_placement_names_the_sharded_update():
    found = likely_with(
        FRAME
        + "RuntimeError: "
        + template("torch:in-place-operations-that-require-placement", "aten.add_.Tensor", "(Shard(dim=0),)")
        + "\n",
        "dtensor_inplace_placement",
        "log.library_version_bug",
    )
    assert "aten.add_.Tensor" in found.summary and "(Shard(dim=0),)" in found.summary
    assert "AdamW" in found.fix and "full_tensor()" in found.fix


def test_a_line_quoting_it_with_the_placement_elided_is_read_too():
    found = likely_with(
        "training crashes at the first optimizer step with RuntimeError: aten.mul_.Tensor: in-place operations "
        "that require placement changes are not supported ... placement (Shard(dim=0), Replicate()).\n",
        "dtensor_inplace_placement",
        "log.library_version_bug",
    )
    assert "(Shard(dim=0), Replicate())" in found.summary


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # a gather of another name (no boundary after "gather") is not the backend lacking gather
        (
            "RuntimeError: ProcessGroupNCCL does not support gather_object with uneven sizes",
            "collective_arguments",
        ),
        # autograd's in-place refusal on a leaf is not DTensor's placement refusal
        (
            "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.",
            "dtensor_inplace_placement",
        ),
        # DTensor's missing sharding strategy is another refusal
        (
            "NotImplementedError: Operator aten.cumsum.default does not have a sharding strategy registered.",
            "dtensor_inplace_placement",
        ),
    ],
)
def test_a_near_miss_is_not_read_as_the_kind(line, kind):
    assert explained(FRAME + line + "\n").id != f"log.{kind}"
