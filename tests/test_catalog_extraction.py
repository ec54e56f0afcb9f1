"""How benchmarks/catalog_coverage.py --extract reads the sources into the catalog: which file a string of
libtorch_cpu.so is attributed to, and the spacing of a template as its source prints it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from explaining import explained, leads_with, template

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import catalog_coverage  # noqa: E402

BUILD = "/__w/pytorch/pytorch/"


def _libtorch(tmp_path: Path, strings: list[str]) -> Path:
    """A site-packages with a libtorch_cpu.so holding ``strings`` as the linker lays them out."""
    library = tmp_path / "torch" / "lib" / "libtorch_cpu.so"
    library.parent.mkdir(parents=True)
    library.write_bytes(b"\x00\x01\x02".join(s.encode() for s in strings) + b"\x00")
    return tmp_path


@pytest.mark.skipif(shutil.which("strings") is None, reason="binutils' strings is not installed")
def test_a_string_after_another_source_file_is_that_files_not_the_distributed_ones(tmp_path):
    # torch 2.13's libtorch_cpu.so: the C++ API's strings follow rpc/utils.cpp's
    site = _libtorch(
        tmp_path,
        [
            BUILD + "torch/csrc/distributed/rpc/utils.cpp",
            "Unsupported message type in the RPC request handler",
            BUILD + "torch/csrc/api/src/nn/modules/rnn.cpp",
            "input.size(-1) must be equal to input_size. Expected ",
        ],
    )
    files = {text: file for text, file, _ in catalog_coverage.from_libtorch(site, "2.13.0")}
    assert (
        files["Unsupported message type in the RPC request handler"] == "torch/csrc/distributed/rpc/utils.cpp"
    )
    assert (
        files["input.size(-1) must be equal to input_size. Expected"]
        == "torch/csrc/api/src/nn/modules/rnn.cpp"
    )


@pytest.mark.skipif(shutil.which("strings") is None, reason="binutils' strings is not installed")
def test_a_header_named_among_a_files_strings_keeps_them_that_files_near_miss(tmp_path):
    # gloo's header, inlined into ProcessGroupGloo.cpp, is named among that file's strings
    site = _libtorch(
        tmp_path,
        [
            BUILD + "torch/csrc/distributed/c10d/ProcessGroupGloo.cpp",
            BUILD + "third_party/gloo/gloo/alltoallv.h",
            "requires input/output tensor lists to have the same length",
        ],
    )
    (row,) = catalog_coverage.from_libtorch(site, "2.13.0")
    assert row[1] == "torch/csrc/distributed/c10d/ProcessGroupGloo.cpp"


def test_the_catalog_names_the_file_that_prints_the_rnn_input_size_check():
    # torch/csrc/api/src/nn/modules/rnn.cpp RNNImplBase::check_input (torch/nn/modules/rnn.py prints the same)
    assert by_id()["torch_cpp:input-size-must-be-equal-to"].file == "torch/csrc/api/src/nn/modules/rnn.cpp"
    assert not any(
        t.file == "torch/csrc/distributed/rpc/utils.cpp"
        and t.kind in ("layer_input_size", "batchnorm_single_sample")
        for t in by_id().values()
    )


def test_a_template_keeps_the_run_of_spaces_its_source_prints():
    # lightning/fabric/strategies/fsdp.py and deepspeed.py: "... a state with at least  a model instance ..."
    printed = "Got FSDPStrategy.load_checkpoint(..., state={}) but a state with at least  a model instance"
    assert catalog_coverage.clean(f"  {printed}\n\n") == printed
    assert "at least  a model" in by_id()["lightning:got-fsdpstrategy-load-checkpoint-state-but"].text


def test_an_anchor_matches_a_template_with_a_double_space_as_printed_and_as_pasted():
    # the anchor starts after the two spaces: the line as printed and a paste that joined them both lead
    printed = template("lightning:got-fsdpstrategy-load-checkpoint-state-but", "{}")
    assert "at least  a model" in printed
    for line in (printed, " ".join(printed.split())):
        leads_with(
            f"ValueError: {line}", "trainer_arguments", "certain", ["a model instance to reload is required"]
        )
    # DeepSpeed's stage 1/2 check: "reduced." and "Gradient" separated by a run of spaces
    zero = template("deepspeed:the-parameter-has-already-been-reduced", "model.layers.0.weight")
    assert "reduced.  " in zero
    leads_with(f"AssertionError: {zero}", "ddp_ready_twice", "certain", ["model.layers.0.weight"])


def test_the_words_of_the_refusal_alone_are_not_it_near_miss():
    found = explained("RuntimeError: could not find a model instance to reload from checkpoint.ckpt\n")
    assert found.id != "log.trainer_arguments"


def test_a_re_extract_keeps_the_rows_kept_by_hand_and_the_kinds_still_anchored(tmp_path):
    """--extract --only on a source whose file holds rows written by hand (marked ``by hand``) keeps them, keeps
    a row's id and its kind while that kind anchors it (the default group's refusal: read by the launch kind,
    though the destroyed-group kind is tried first), and adds what the source prints anew."""
    from torchdoctor.explain.catalog import BY_HAND, Template, read, write

    refusal = "Default process group has not been initialized, please make sure to call init_process_group."
    module = tmp_path / "site" / "pkg" / "trainer.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        f"def train():\n    raise RuntimeError({refusal!r})\n\n"
        "def evaluate():\n    raise ValueError('The evaluation dataset holds no batches at all')\n"
    )
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    hand = Template(
        "pkg:arguments-not-used",
        "Some specified arguments are not used: {}",
        "pkg/argparser.py",
        "1.0",
        "",
        "pkg",
    )
    write(
        "pkg",
        [
            Template(
                "pkg:the-group-refusal", refusal, "pkg/trainer.py", "1.0", "not_launched_distributed", "pkg"
            ),
            hand._replace(kept=BY_HAND),
        ],
        catalog,
    )
    rows = {"pkg": catalog_coverage.from_python(tmp_path / "site", ["pkg/*.py"], "1.1")}
    changes = catalog_coverage.reextract(rows, catalog)
    after = read(catalog / "pkg.tsv")
    assert changes == {"pkg": []}
    assert [(t.id, t.kind, t.versions, t.kept) for t in after] == [
        ("pkg:the-group-refusal", "not_launched_distributed", "1.1", ""),
        ("pkg:the-evaluation-dataset-holds-no-batches", "", "1.1", ""),
        ("pkg:arguments-not-used", "", "1.0", BY_HAND),
    ]
    assert after[-1].text == hand.text and after[-1].file == hand.file


def test_a_re_extract_says_which_mapped_kind_it_changes(tmp_path):
    """A kind whose recogniser no longer anchors the template is changed, and the change is printed."""
    from torchdoctor.explain.catalog import Template, read, write

    refusal = "Default process group has not been initialized, please make sure to call init_process_group."
    module = tmp_path / "site" / "pkg" / "trainer.py"
    module.parent.mkdir(parents=True)
    module.write_text(f"def train():\n    raise RuntimeError({refusal!r})\n")
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    write(
        "pkg",
        [Template("pkg:the-group-refusal", refusal, "pkg/trainer.py", "1.0", "duplicate_gpu", "pkg")],
        catalog,
    )
    rows = {"pkg": catalog_coverage.from_python(tmp_path / "site", ["pkg/*.py"], "1.1")}
    changes = catalog_coverage.reextract(rows, catalog)
    kind = read(catalog / "pkg.tsv")[0].kind
    assert kind == catalog_coverage.kind_of(refusal) != "duplicate_gpu"
    assert changes == {"pkg": [f"pkg:the-group-refusal: kind duplicate_gpu -> {kind}"]}


def test_the_rows_kept_by_hand_in_the_extracted_files_are_marked():
    """The hand-written rows of the files --extract rebuilds carry the marker (transformers' argument parser)."""
    from torchdoctor.explain.catalog import BY_HAND

    assert by_id()["transformers:arguments-not-used-by-hfargumentparser"].kept == BY_HAND
    assert by_id()["lightning:to-use-fabric-with-more"].kept == BY_HAND
    assert by_id()["torch:padding-idx-must-be-within-num-embeddings"].kept == BY_HAND
    assert by_id()["transformers:num-update-steps-per-epoch"].kept == ""


def test_a_template_its_kind_rejects_is_not_mapped_to_it():
    """NCCL's retry INFO lines hold the interface kind's anchor, but the kind turns them down when it reads a log
    (a retry, not a failure): the catalog does not map them to it, nor keeps that kind on a refresh."""
    from torchdoctor.explain.kinds import BY_KIND

    retry = "%s: connect to %s returned %s, retrying (%d/%ld) after sleep for %u msec"
    ibv_retry = "Call to ibv_modify_qp failed with %d %s, %s, retrying %d/%d after %u msec of sleep"
    for text in (retry, ibv_retry):
        assert any(a in text for a in BY_KIND["network_interface"].anchors)
        assert catalog_coverage.kind_of(text) != "network_interface"
        assert not catalog_coverage.anchored("network_interface", text)
    assert by_id()["nccl:connect-to-returned-retrying-after-sleep"].kind == ""
    assert by_id()["nccl:call-to-ibv-modify-qp-failed-2"].kind == ""


def test_a_reject_that_looks_at_a_value_keeps_the_mapping_near_miss():
    """A reject that turns down only some values (NCCL's algorithm refusal, taken where its ``%s`` names
    NCCL_ALGO; a quoted source line, not the message after its exception's name) leaves the template mapped."""
    assert catalog_coverage.kind_of(
        "No algorithm/protocol available for function %s with datatype %s.%s%s"
    ) == ("nccl_env_value")
    assert by_id()["torch:loss-parallel-requires-exactly-one-mesh"].kind == "tensor_parallel_plan"
    assert catalog_coverage.anchored(
        "tensor_parallel_plan", by_id()["torch:loss-parallel-requires-exactly-one-mesh"].text
    )
