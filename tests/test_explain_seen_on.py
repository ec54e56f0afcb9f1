"""A finding is certain only on a message seen on a real log whose thread established that cause
(catalog/seen_on.tsv, written by benchmarks/explain_seen_on.py from the train half and the public fixture logs)."""

import io
import sys
from pathlib import Path

import pytest
from explaining import explained

from torchdoctor.explain import catalog, recognisers
from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.kinds import RECOGNISERS
from torchdoctor.explain.verdict import CONTESTED, UNSEEN

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import explain_seen_on  # noqa: E402

# DeepSpeed's runtime/zero/config check, as it prints it (a config refusal its message alone establishes)
REDUCE_SCATTER = (
    "AssertionError: DeepSpeed config: pre-scale gradients is not yet supported with ZeRO-2 with reduce scatter "
    "enabled\n"
)
ANCHOR = ("deepspeed_config_mismatch", "pre-scale gradients is not yet supported with")
FIXTURES = Path(__file__).parent / "fixtures" / "logs"


def _table(monkeypatch, pairs):
    monkeypatch.setattr(recognisers, "seen_on", lambda: frozenset(pairs))


def test_the_table_is_what_the_labelled_logs_show():
    written = catalog.SEEN_ON.read_text(encoding="utf-8").splitlines()
    header = "\t".join(catalog.SEEN_COLUMNS)
    wanted = [header] + [
        "\t".join(str(c) for c in row) for row in explain_seen_on.rows(explain_seen_on.seen_on())
    ]
    assert written == wanted, (
        "catalog/seen_on.tsv is not what the labelled logs show: run "
        "`PYTHONPATH=src python benchmarks/explain_seen_on.py --write`"
    )


def test_every_row_names_a_kind_and_one_of_its_anchors():
    anchors = {(r.kind, a) for r in RECOGNISERS for a in r.anchors}
    # a hit whose missing name another package's code (or the package's own) asked for counts for the kind the
    # recogniser hands it to (Recogniser.kind_by_asker), on the recogniser's own anchor
    anchors |= {
        (kind, a)
        for r in RECOGNISERS
        for *_, own, other in r.kind_by_asker
        for kind in (own, other)
        if kind
        for a in r.anchors
    }
    stale = sorted(catalog.seen_on() - anchors)
    assert not stale, f"rows of seen_on.tsv naming no recogniser's anchor (rewrite the table): {stale[:5]}"


def test_the_evidence_comes_from_train_and_the_fixtures_never_from_the_held_out_half():
    paths = [path for path, _ in explain_seen_on.labelled_logs()]
    assert paths and not any("heldout" in path.parts for path in paths)
    assert {p.parent.name for p in paths} == {"train", "logs"}


def test_a_message_no_labelled_log_showed_is_likely_and_says_why(monkeypatch):
    _table(monkeypatch, set())
    found = explained(REDUCE_SCATTER)
    assert (found.id, found.details["confidence"]) == ("log.deepspeed_config_mismatch", "likely")
    assert found.summary.startswith("likely: ") and found.details["evidence"] == UNSEEN


def test_the_same_message_once_a_labelled_log_showed_it_is_certain(monkeypatch):
    _table(monkeypatch, {ANCHOR})
    found = explained(REDUCE_SCATTER)
    assert (found.id, found.details["confidence"]) == ("log.deepspeed_config_mismatch", "certain")
    assert "evidence" not in found.details


def test_evidence_for_another_kind_on_the_same_words_does_not_count(monkeypatch):
    _table(monkeypatch, {("deepspeed_init_order", ANCHOR[1])})
    assert explained(REDUCE_SCATTER).details["confidence"] == "likely"


def test_evidence_does_not_make_a_generic_anchor_certain(monkeypatch):
    # "Killed" is printed for more than one cause: seen or not, alone it stays likely
    _table(monkeypatch, {(r.kind, a) for r in RECOGNISERS for a in r.anchors})
    found = explained("Killed\n")
    assert found.details.get("confidence") != "certain"


@pytest.mark.parametrize("log", ["032_cuda_oom.txt", "008_rank_divergence.txt", "062_duplicate_gpu.txt"])
def test_a_public_fixture_log_is_certain_with_the_committed_table(log):
    found = explain([str(FIXTURES / log)])[0]
    assert found.id == "log." + log.removesuffix(".txt").split("_", 1)[1]
    assert found.details["confidence"] == "certain" and "evidence" not in found.details


def test_a_consequence_is_judged_as_without_the_table(monkeypatch):
    # a peer that closed is what followed a cause, never a thread's label: the table can hold no evidence for it,
    # and its certainty is what the rest of the log makes it (never certain without its cause)
    text = (
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity "
        "of 79.15 GiB of which 1.20 GiB is free.\n"
        "[rank0]: RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by "
        "peer [10.0.0.2]:52441\n"
    )

    def peer_closed():
        (found,) = [f for f in explain(["-"], stdin=io.BytesIO(text.encode())) if f.id == "log.peer_closed"]
        return found

    _table(monkeypatch, {(r.kind, a) for r in RECOGNISERS for a in r.anchors})
    everything_seen = peer_closed().details["confidence"]
    _table(monkeypatch, set())
    nothing_seen = peer_closed()
    assert nothing_seen.details["confidence"] == everything_seen and "evidence" not in nothing_seen.details


def _counter(monkeypatch, own, others):
    _table(monkeypatch, {ANCHOR})
    monkeypatch.setattr(recognisers, "seen_for_others", lambda kind, anchor: (own, dict(others)))


def test_a_message_real_logs_of_other_causes_printed_too_is_likely_and_names_them(monkeypatch):
    _counter(monkeypatch, 5, {"dependency_version": 1, "library_version_bug": 2})
    found = explained(REDUCE_SCATTER)
    assert (found.id, found.details["confidence"]) == ("log.deepspeed_config_mismatch", "likely")
    assert found.details["evidence"] == CONTESTED.format(
        "library_version_bug (2 logs), dependency_version (1 log)"
    )
    assert found.details["alternatives"] == ["log.library_version_bug", "log.dependency_version"]
    assert found.summary.endswith(
        "; or a bug of the library release installed; or package version the code does not support"
    )
    assert "where the cause was a bug of the library release installed" in found.fix


def test_counter_evidence_under_one_log_in_ten_leaves_the_message_certain(monkeypatch):
    _counter(monkeypatch, 9, {"library_version_bug": 1})
    assert explained(REDUCE_SCATTER).details["confidence"] == "certain"
    _counter(monkeypatch, 8, {"library_version_bug": 1})
    assert explained(REDUCE_SCATTER).details["confidence"] == "likely"


def test_a_cause_only_real_logs_name_is_said_in_the_evidence_not_as_an_alternative(monkeypatch):
    # a label no recogniser has (nothing to tell the user about it but its name) is evidence, not a reading
    _counter(monkeypatch, 1, {"a_label_without_a_recogniser": 3})
    found = explained(REDUCE_SCATTER)
    assert found.details["confidence"] == "likely"
    assert "a_label_without_a_recogniser (3 logs)" in found.details["evidence"]
    assert "alternatives" not in found.details


def test_the_table_counts_other_causes_only_where_their_threads_established_them():
    # every row's other causes are labels of the labelled logs, never the row's own kind
    labels = {kind for _, kind in explain_seen_on.labelled_logs()}
    contested = 0
    for row in catalog.evidence().values():
        others = catalog.seen_for_others(row.kind, row.anchor)[1]
        assert row.kind not in others and set(others) <= labels, row
        assert row.other_logs == sum(others.values()), row
        contested += bool(row.logs and others)
    assert contested, "no anchor of the table was printed on a labelled log of another cause"


def test_a_finding_certain_on_another_anchor_does_not_say_its_contested_one(monkeypatch):
    # two of the kind's messages in one log: one seen for it alone, one contested; the finding is certain, and its
    # evidence does not name the causes of the message that did not make it so
    provided = "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"
    batch = f"AssertionError: {provided}\n"
    _table(monkeypatch, {ANCHOR, ("deepspeed_config_mismatch", provided)})

    def others(kind, anchor):
        return (1, {"library_version_bug": 3}) if anchor == ANCHOR[1] else (5, {})

    monkeypatch.setattr(recognisers, "seen_for_others", others)
    assert explained(REDUCE_SCATTER).details["confidence"] == "likely"
    found = explained(REDUCE_SCATTER + batch)
    assert found.details["confidence"] == "certain" and "evidence" not in found.details
