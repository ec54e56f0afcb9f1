"""A message retyped with a capital first letter where a sentence starts is read as its source prints it (helper
T58, session 39; explain/sentence_case.py).

Train 6070.txt (derrian-distro/LoRA_Easy_Training_Scripts#290) quotes CUDA's "no kernel image is available for
execution on the device" as "RuntimeError: No kernel image is available ...": the anchors match case-sensitively,
so the line was unrecognised. The twin of an anchor is read only where a sentence starts, never inside a name (torch's
own "ZeroRedundancyOptimizer got an empty parameter list" holds "Optimizer got an empty parameter list"), and no
twin is made where the capitalised words are an anchor of their own.
"""

from __future__ import annotations

from explaining import explained, read

from torchdoctor.explain import catalog, collect
from torchdoctor.explain.kinds import RECOGNISERS
from torchdoctor.explain.sentence_case import as_printed, at_sentence_start, capitalised


def test_the_retyped_no_kernel_image_of_train_6070_is_read():
    found = read("6070.txt", "no_kernel_image", "certain")
    assert "sm_XY" in found.fix or "sm_" in found.fix, found.fix


def test_the_same_message_as_cuda_prints_it_and_as_a_sentence_starts_it_read_alike():
    printed = explained(
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    retyped = explained(
        "RuntimeError: CUDA error: No kernel image is available for execution on the device\n"
    )
    started = explained("No kernel image is available for execution on the device\n")
    assert printed.id == retyped.id == started.id == "log.no_kernel_image"
    assert printed.fix == retyped.fix


def test_a_twin_inside_a_name_or_after_a_word_is_not_read():
    # torch/distributed/optim/zero_redundancy_optimizer.py's own message: "Optimizer got an empty parameter list"
    # is inside the class's name there, and the anchor "optimizer got an empty parameter list" (torch/optim's) is
    # another kind's
    text = "ValueError: ZeroRedundancyOptimizer got an empty parameter list"
    assert as_printed(text, collect._TWINS) == text
    assert ": optimizer got" in as_printed(
        "ValueError: Optimizer got an empty parameter list", collect._TWINS
    )
    assert explained(text + "\n").id == "log.zero_redundancy_optimizer"
    assert not at_sentence_start("the No kernel image", 4)
    assert at_sentence_start('a "No kernel image', 3) and at_sentence_start("  No kernel", 2)


def test_no_twin_is_an_anchor_or_starts_a_sentence_in_another_kinds_printed_message():
    anchors = {a for r in RECOGNISERS for a in r.anchors}
    twins = capitalised(anchors)
    assert not anchors & twins.keys()
    # "Address already in use" is an anchor of its own (other releases print it so): no twin of its lower case
    assert "Address already in use" not in twins and "Address already in use" in anchors
    assert "Killed" not in twins.values()  # a word, not a message
    kinds: dict[str, set[str]] = {}
    for recogniser in RECOGNISERS:
        for anchor in recogniser.anchors:
            kinds.setdefault(anchor, set()).add(recogniser.kind)
    for templates in catalog.load().values():
        for template in templates:
            for line in template.text.splitlines():
                read = as_printed(line, collect._TWINS)
                if read != line:  # a twin where a sentence starts: only a message of the anchor's own kind
                    anchor = next(a for a in twins.values() if a in read and a not in line)
                    assert template.kind in kinds[anchor], (template.id, anchor)


def test_the_pre_filter_finds_a_twin_and_still_every_anchor():
    anchors = sorted({a for r in RECOGNISERS for a in r.anchors})
    assert all(collect._ANCHORS.search(a) for a in anchors)
    twins = capitalised(anchors)
    assert all(collect._TWIN_STARTS.search(twin) for twin in twins)
    # a line with no anchor and no twin's beginning is passed over by both searches
    line = "Epoch 3:  45%|████▌     | 4500/10000 [12:03<14:44,  6.22it/s, loss=0.412, v_num=1]"
    assert collect._ANCHORS.search(line) is None and collect._TWIN_STARTS.search(line) is None


def test_the_pre_filter_keeps_every_anchor_and_twin_where_a_message_prints_them():
    # the pre-filter looks for each anchor's first 16 letters (collect._PREFIX): a line holding an anchor holds its
    # beginning, whatever the anchor's length and wherever the cut falls among letters `re` escapes; the anchors
    # match case-sensitively, and a capitalised twin passes by its own beginnings
    anchors = sorted({a for r in RECOGNISERS for a in r.anchors})
    cut = collect._PREFIX
    assert [a for a in anchors if len(a) < cut] and [
        a for a in anchors if len(a) > cut and a[cut - 1] in "'.( "
    ]
    kinds = {a: {r.kind for r in RECOGNISERS if a in r.anchors} for a in anchors}
    for anchor in anchors:
        line = f"RuntimeError: {anchor} (x)"
        assert collect._ANCHORS.search(line), anchor
        assert kinds[anchor] <= {collect.RECOGNISERS[p].kind for p in collect.places(line)}, anchor
    for twin, anchor in capitalised(anchors).items():
        line = f"[rank3]: RuntimeError: {twin} (x)"
        assert collect._ANCHORS.search(line) or collect._TWIN_STARTS.search(line), twin
        printed = as_printed(line, collect._TWINS)
        assert kinds[anchor] <= {collect.RECOGNISERS[p].kind for p in collect.places(printed)}, twin
