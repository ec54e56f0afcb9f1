"""The catalog of message templates: every recogniser cites templates that exist and that its anchors match."""

from __future__ import annotations

import re

import pytest

from torchdoctor.explain.catalog import Template, by_id, load, read, template, write
from torchdoctor.explain.kinds import RECOGNISERS

_PLACEHOLDER = re.compile(r"\{[^{}]*\}|%[-\d.]*l{0,2}[sdiuxfgzp]")


def anchored(anchor: str, template: str) -> bool:
    """Whether ``anchor`` is text the template prints: in one of its lines, or (where the template has a
    placeholder inside the anchor's words) holding one of its literal pieces of 10 characters or more."""
    for line in template.splitlines():
        if anchor in line:
            return True
        for piece in _PLACEHOLDER.split(line):
            piece = piece.strip(" '\"`.:,")
            if len(piece) >= 10 and (piece in anchor or anchor in piece):
                return True
    return False


def test_every_source_has_templates_with_unique_ids():
    catalog = load()
    assert {
        "torch",
        "torch_cpp",
        "nccl",
        "cuda_runtime",
        "deepspeed",
        "accelerate",
        "lightning",
        "transformers",
    } <= set(catalog)
    ids = [t.id for templates in catalog.values() for t in templates]
    assert len(ids) == len(set(ids))
    assert all(t.text and t.file for templates in catalog.values() for t in templates)


def test_a_template_read_from_its_own_source_is_the_one_every_source_gives():
    """`template` reads one source's file (the id's first part) and finds what `by_id` finds for every id; an
    id of no source, of a table that holds no templates (fixed_bugs.tsv) or of none at all is no template."""
    every = by_id()
    assert all(template(ident) == found for ident, found in every.items())
    assert template("nccl:no-such-message") is None
    assert template("fixed_bugs:accelerate") is None and template("RuntimeError: boom") is None
    assert template("../catalog/nccl:x") is None


def test_a_row_is_read_back_as_written(tmp_path):
    """Cells with a tab, a newline or a backslash escaped, and cells with none read whole, come back the same."""
    rows = [
        Template("pkg:escaped", "a\tb\nc\\d {}", "pkg/x.py", "1.0", "", "pkg"),
        Template("pkg:plain", "no escapes here: {}", "pkg/y.py", "", "cuda_oom", "pkg"),
        Template("pkg:backslash-last", "C:\\", "pkg/z.py", "2.0", "", "pkg"),
    ]
    assert read(write("pkg", rows, tmp_path)) == rows


@pytest.mark.parametrize("recogniser", RECOGNISERS, ids=lambda r: r.kind)
def test_recogniser_cites_templates_its_anchors_match(recogniser):
    assert recogniser.templates, f"{recogniser.kind} cites no catalog template"
    templates = by_id()
    for ident in recogniser.templates:
        assert ident in templates, f"{recogniser.kind} cites {ident}, which is not in the catalog"
        text = templates[ident].text
        assert any(anchored(a, text) for a in recogniser.anchors), (
            f"{recogniser.kind}: no anchor of {recogniser.anchors} matches {ident}: {text!r}"
        )


def test_a_template_kind_is_a_recogniser_whose_anchor_it_holds():
    kinds = {r.kind: r for r in RECOGNISERS}
    for templates in load().values():
        for t in templates:
            if t.kind:
                assert t.kind in kinds, f"{t.id} maps to unknown kind {t.kind}"
                assert any(a in line for line in t.text.splitlines() for a in kinds[t.kind].anchors), t.id


def test_anchored_refuses_text_the_template_does_not_print():
    assert anchored("Tensors must be CUDA and dense", "Tensors must be CUDA and dense")
    assert anchored("'DistributedDataParallel' object has no attribute", "'{}' object has no attribute '{}'")
    assert not anchored("Duplicate GPU detected", "Mismatched NCCL version detected : rank %d version %d")


def test_every_kind_has_one_recogniser():
    # kinds.BY_KIND keeps the last recogniser of a kind: a second one of the same kind (added in another module)
    # would take over the first's summary, fix and certainty for every log the first reads (met while mapping the
    # compiled packages, 2026-11-30: a second `triton_missing`); add anchors and facts to the one there is instead
    seen: dict[str, int] = {}
    for recogniser in RECOGNISERS:
        seen[recogniser.kind] = seen.get(recogniser.kind, 0) + 1
    assert [kind for kind, count in seen.items() if count > 1] == []
