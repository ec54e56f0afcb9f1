"""One table and one lookup for "a library refused a setting" (kinds/refusal_table.py): rows signed by a fact the
recogniser's match reads (DDP's and FSDP's checks) and rows signed by the text the source prints (the training
frameworks' argument checks) are read by the same `refusal_in` and described by the same `describe_refusal`."""

from __future__ import annotations

import pytest
from explaining import leads_with

from torchdoctor.explain.kinds.refusal_table import describe_refusal, one_line, refusal_in, refused
from torchdoctor.explain.recognisers import Context, Hit

pytestmark = pytest.mark.usefixtures("every_message_seen")

_BY_FACT = (
    ("twice", "init_process_group was called twice", "Call it once."),
    ("bad_port", "the port is out of range", "Use a port from 1024 to 65535."),
)
_BY_TEXT = (
    ("must be a positive integer", "Pass a positive number."),
    ("is not supported with FSDP2", "Go back to FSDP1."),
)


def _hits(**facts: str) -> list[Hit]:
    return [Hit("k", dict(facts), "run.log", 3, rank=1)]


def test_a_row_signed_by_a_fact_gives_its_words_the_message_and_its_fix():
    hits = _hits(bad_port="port must have value from 0 to 65535 but was 70000")
    assert refusal_in(hits[0].facts, _BY_FACT) == (
        "the port is out of range",
        "port must have value from 0 to 65535 but was 70000",
        "Use a port from 1024 to 65535.",
    )
    assert refused(_BY_FACT)(hits, Context())
    summary, fix = describe_refusal(_BY_FACT, "init_process_group was called wrongly")(hits, Context())
    assert summary == "the port is out of range: port must have value from 0 to 65535 but was 70000 on rank 1"
    assert fix == "Use a port from 1024 to 65535."


def test_a_row_signed_by_a_text_is_found_inside_the_one_message_fact():
    # the text is looked up on the message made one line (here wrapped where the text is)
    hits = _hits(refusal=" reshard_after_forward=2 is not\n supported with FSDP2, please set to a `bool`")
    describe = describe_refusal(_BY_TEXT, "the FSDP settings are refused", message="refusal")
    summary, fix = describe(hits, Context())
    assert summary == (
        "the FSDP settings are refused: reshard_after_forward=2 is not supported with FSDP2, please set to a "
        "`bool` on rank 1"
    )
    assert fix == "Go back to FSDP1."


def test_no_row_read_says_the_general_words_and_the_first_rows_fix_near_miss():
    # a fact of another recogniser (not a row's sign) is not a refusal: not confirmed, the general summary
    hits = _hits(port="29500")
    assert refusal_in(hits[0].facts, _BY_FACT) is None
    assert not refused(_BY_FACT)(hits, Context())
    assert describe_refusal(_BY_FACT, "init_process_group was called wrongly")(hits, Context()) == (
        "init_process_group was called wrongly on rank 1",
        "Call it once.",
    )
    assert refusal_in({"other": "x"}, _BY_TEXT, message="refusal") is None


def test_a_long_refusal_is_cut_after_a_word():
    said = one_line("word " * 60, limit=50)
    assert said.endswith(" …") and len(said) <= 52 and "wor …" not in said


def test_both_kinds_of_table_lead_real_refusals_with_their_own_fix():
    # torch/nn/parallel/distributed.py (rows signed by facts) and Lightning's connector (rows signed by texts)
    leads_with(
        "ValueError: device_ids can only be None or contain a single element.",
        "wrapper_usage",
        "certain",
        ["DDP was given more than one device id: device_ids can only be None", "device_ids=[local_rank]"],
    )
    leads_with(
        "lightning.fabric.utilities.exceptions.MisconfigurationException: `val_check_interval` should be an "
        "integer or a time-based duration (str 'DD:HH:MM:SS', datetime.timedelta, or dict kwargs for timedelta) "
        "when `check_val_every_n_epoch=None`.",
        "trainer_arguments",
        "certain",
        ["the training framework refused its arguments: `val_check_interval` should be", "a number of steps"],
    )
