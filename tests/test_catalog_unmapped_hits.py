"""benchmarks/catalog_unmapped_hits.py: which unmapped catalog templates a missed log's lines hold."""

from __future__ import annotations

import sys
from pathlib import Path

from torchdoctor.explain.catalog import Template

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import catalog_unmapped_hits  # noqa: E402


def _template(text: str, ident: str = "torch:x") -> tuple[Template, list]:
    row = Template(ident, text, "torch/distributed/x.py", "2.13.0", "", "torch")
    return row, catalog_unmapped_hits.line_patterns(text)


def test_a_template_matches_the_line_its_source_prints_with_values_in_its_placeholders():
    row = _template("Rank {} at index {} is out of bounds for group size {}.")
    log = "Traceback ...\nValueError: Rank 4 at index 0 is out of bounds for group size 4.\n"
    assert catalog_unmapped_hits.held(log, [row]) == [row[0]]


def test_a_printf_template_matches_too_and_its_words_must_stand_in_order():
    row = _template("%s : invalid root %d (root should be in the 0..%d range)")
    assert catalog_unmapped_hits.held(
        "x NCCL WARN Broadcast : invalid root 4 (root should be in the 0..3 range)", [row]
    )
    assert not catalog_unmapped_hits.held("(root should be in the 0..3 range) invalid root 4", [row])


def test_a_line_with_little_literal_text_is_never_matched_alone():
    assert catalog_unmapped_hits.line_patterns("{}: {}") == []
    assert catalog_unmapped_hits.line_patterns("Expected {} but got {}") == []
    # a multi-line template is matched by its one long line
    assert len(catalog_unmapped_hits.line_patterns("{}\nFull pipeline schedule with every action:\n{}")) == 1


def test_the_totals_name_no_file_and_no_template():
    table = {("torch", "torch/distributed/x.py"): {"logs": {"1.txt"}, "templates": {"torch:x": {"1.txt"}}}}
    totals = catalog_unmapped_hits.report(3, table, totals=True)
    assert "torch/distributed/x.py" not in totals and "torch:x" not in totals
    assert "torch            1          1" in totals
    assert "torch:x (1: 1.txt)" in catalog_unmapped_hits.report(3, table, totals=False)


def test_the_misses_are_counted_by_whether_they_hold_a_mapped_template_an_unmapped_one_or_none():
    table = {("torch", "torch/distributed/x.py"): {"logs": {"1.txt"}, "templates": {"torch:x": {"1.txt"}}}}
    said = catalog_unmapped_hits.report(5, table, totals=True, with_mapped={"1.txt", "2.txt"})
    assert said.endswith("a mapped template: 2; an unmapped one: 1; either: 2; neither: 3"), said


def test_a_miss_holding_a_template_of_its_labels_kind_is_a_wrong_order_or_an_unread_anchor():
    # a template of the label's kind held, its finding made second (train 4420.txt's findings: device_mismatch
    # led, the label's ddp_module_attribute second; there the template held was device_mismatch's, an "other kind")
    assert (
        catalog_unmapped_hits.sort_miss(
            "ddp_module_attribute", {"ddp_module_attribute"}, ["device_mismatch", "ddp_module_attribute"]
        )
        == "order"
    )
    # train 630.txt: CPython's "got an unexpected keyword argument", a template mapped to library_version_bug, and
    # no finding of it (the keyword is not one a release of a known library dropped)
    assert (
        catalog_unmapped_hits.sort_miss("library_version_bug", {"library_version_bug"}, ["unrecognised"])
        == "unread"
    )
    assert (
        catalog_unmapped_hits.sort_miss(
            "ddp_module_attribute", {"device_mismatch"}, ["device_mismatch", "ddp_module_attribute"]
        )
        == "other kind"
    )
    # train 327.txt: "Default process group has not been initialized" (not_launched_distributed) in a thread whose
    # cause was a library's release
    assert (
        catalog_unmapped_hits.sort_miss(
            "library_version_bug", {"not_launched_distributed"}, ["not_launched_distributed"]
        )
        == "other kind"
    )


def test_the_misses_holding_a_mapped_template_are_counted_by_why_naming_no_file():
    said = catalog_unmapped_hits.report(
        5, {}, totals=True, with_mapped={"1.txt"}, sorted_as={"other kind": 1}
    )
    assert said.endswith("of those holding a mapped template: order: 0; unread: 0; other kind: 1"), said
    assert "1.txt" not in said


def test_a_message_pasted_without_its_final_full_stop_is_held_and_one_cut_inside_a_word_is_not():
    # train 2970.txt's line (a paste of torch's DataLoader worker message, its full stop left out)
    row = _template("ERROR: Unexpected segmentation fault encountered in worker.", "torch_native:x")
    assert catalog_unmapped_hits.held("ERROR: Unexpected segmentation fault encountered in worker\n", [row])
    assert catalog_unmapped_hits.held("ERROR: Unexpected segmentation fault encountered in worker.\n", [row])
    assert not catalog_unmapped_hits.held("ERROR: Unexpected segmentation fault encountered in work\n", [row])
