"""The table of positional signatures each release of a library's callables has (catalog/api_signatures.tsv,
written by benchmarks/api_signatures.py from the released wheels) and what `explain` says on CPython's other
refusals of a call: "missing N required positional argument(s)", "got multiple values for argument" and "takes N
positional arguments but M were given" -- only where the releases differ in exactly what the message names, and
never certain from the project's own code (its own mistake prints the same). Nothing is downloaded here: the
generator is tried on a wheel made in the test."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from explaining import called_from, explained, leads_with, made_wheel

from torchdoctor.explain.kinds import api_signatures

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import api_callables  # noqa: E402
import api_signatures as generator  # noqa: E402

SITE = "/opt/conda/lib/python3.11/site-packages"


# --- a release that takes fewer positional arguments than the call passes -------------------------------------


def test_scheduler_verbose_passed_by_position_to_a_torch_without_it():
    # torch 2.7 removed the LR schedulers' `verbose`; the call passes it fifth, by position
    found = leads_with(
        called_from(
            "/home/ana/project/train.py",
            "scheduler = StepLR(optimizer, 30, 0.1, -1, True)",
            "StepLR.__init__() takes from 3 to 5 positional arguments but 6 were given",
        ),
        "dependency_version",
        "likely",
        ["torch 1.8-2.6", "torch<2.7", "by keyword", "mistake in the call"],
    )
    assert "train.py:41" in found.fix


def test_an_installed_package_passing_more_positional_arguments_is_certain():
    # a library written for peft 0.7+ passes `mixed` by position to an older peft
    leads_with(
        called_from(
            f"{SITE}/llmtuner/model/adapter.py",
            "model = get_peft_model(model, lora_config, 'default', False)",
            "get_peft_model() takes from 2 to 3 positional arguments but 4 were given",
        ),
        "dependency_version",
        "certain",
        ["peft 0.7-0.17", "peft>=0.7", "llmtuner makes the call"],
    )


# --- a parameter required in some releases only ------------------------------------------------------------------


def test_trl_trainer_model_required_from_0_15():
    leads_with(
        called_from(
            f"{SITE}/alignment/run_sft.py",
            "trainer = SFTTrainer(model_init=model_init, args=training_args, train_dataset=train_dataset)",
            "SFTTrainer.__init__() missing 1 required positional argument: 'model'",
        ),
        "dependency_version",
        "certain",
        ["trl 0.4-0.14", "trl<0.15"],
    )


# --- a parameter that moved among the positional ones ------------------------------------------------------------


def test_ddp_parameter_moved_by_one_inserted_before_it_is_only_likely():
    # torch 2.7 inserted init_sync before process_group; apex's DistributedDataParallel is another reading
    found = explained(
        called_from(
            f"{SITE}/fairseq/models/distributed.py",
            "DistributedDataParallel(module, [rank], rank, 0, True, False, process_group=group)",
            "DistributedDataParallel.__init__() got multiple values for argument 'process_group'",
        )
        + "\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "torch 2.7-2.9" in found.summary


# --- near-misses: where the releases do not differ in what the message says ---------------------------------------


@pytest.mark.parametrize(
    ("code", "message"),
    [
        # step_size is required in every release: the call's own mistake
        (
            "scheduler = StepLR(optimizer, gamma=0.1)",
            "StepLR.__init__() missing 1 required positional argument: 'step_size'",
        ),
        # more positional arguments than any release takes
        (
            "scheduler = StepLR(optimizer, 30, 0.1, -1, True, 'x', 'y')",
            "StepLR.__init__() takes from 3 to 5 positional arguments but 8 were given",
        ),
    ],
)
def test_what_no_two_releases_differ_in_is_not_a_release(code, message):
    found = explained(called_from("/home/ana/project/train.py", code, message) + "\n")
    assert "torch<" not in found.fix and found.details.get("confidence") != "certain"


def test_a_callable_the_table_does_not_have_is_left_alone():
    found = explained(
        called_from(
            "/home/ana/project/model.py",
            "out = self.block(x, mask)",
            "forward() takes 2 positional arguments but 3 were given",
        )
        + "\n"
    )
    assert found.id != "log.dependency_version"


def test_a_bare_init_with_nothing_naming_the_class_is_left_alone():
    found = explained("TypeError: __init__() missing 1 required positional argument: 'model'\n")
    assert "trl" not in found.fix


def test_the_three_refusals_as_cpython_formats_them():
    three = api_signatures.REFUSAL.search("f() missing 3 required positional arguments: 'a', 'b', and 'c'")
    assert three["sig_missing"] == "'a', 'b', and 'c'"
    keyword_only = api_signatures.REFUSAL.search(
        "f() takes 2 positional arguments but 3 positional arguments (and 1 keyword-only argument) were given"
    )
    assert (keyword_only["sig_takes"], keyword_only["sig_given"]) == ("2", "3")
    assert api_signatures.REFUSAL.search("f() got multiple values for argument 'x'")["sig_twice"] == "x"


# --- the table and its generator ------------------------------------------------------------------------------


def test_table_is_small_and_its_spans_are_the_releases_read_in_order():
    assert api_signatures.TABLE.stat().st_size < 1_500_000
    for releases, spans in api_signatures.load().values():
        for span in spans:
            assert releases.index(span.first) <= releases.index(span.last), span
            assert span.signature.count("|") == 1, span


def test_generator_spells_positional_defaults_varargs_and_required_keyword_only(tmp_path):
    function = ast.parse("def f(self, a, b=1, *rest, c, d=2, **kw): pass").body[0]
    assert generator.spelled(function.args) == "a,b=,*|c"
    wheel = made_wheel(
        tmp_path,
        "peft-9.9.0-py3-none-any.whl",
        {"peft/mapping.py": "def get_peft_model(model, peft_config, adapter_name='default'):\n    pass\n"},
    )
    found = api_callables.read(wheel, "peft", lambda f: generator.spelled(f.args)).every({})
    assert found["get_peft_model"] == "model,peft_config,adapter_name=|"


# --- the widened table: every public class, method and function ---------------------------------------------------


def test_a_lightning_callback_whose_parameter_became_required():
    # pytorch_lightning 1.6 made EarlyStopping's monitor required (a class the hand-picked list never had)
    assert (
        not [s for s in api_signatures.load()["pytorch_lightning"][1] if s.callable == "EarlyStopping"] == []
    )
    for message in (
        "EarlyStopping.__init__()",
        "__init__()",
    ):  # CPython 3.10+, and before: the call line names it
        leads_with(
            called_from(
                "/home/ana/project/train.py",
                "early_stop = EarlyStopping(patience=3)",
                f"{message} missing 1 required positional argument: 'monitor'",
            ),
            "dependency_version",
            "likely",
            ["pytorch_lightning 1.0-1.5", "matches 1.6-2.5", "pytorch-lightning<1.6"],
        )


def test_a_name_another_package_defines_too_is_likely_with_it_named_unless_the_log_names_one():
    # diffusers has a get_scheduler too, whose positional parameters never changed
    assert api_signatures.namesakes()["get_scheduler"] == {"transformers", "diffusers"}
    call = called_from(
        "/home/ana/project/train.py",
        "sched = get_scheduler('linear', optimizer, 10, 1000, {'power': 2})",
        "get_scheduler() takes from 2 to 4 positional arguments but 5 were given",
    )
    leads_with(
        call, "dependency_version", "likely", ["transformers 4.36-4.57", "the get_scheduler of diffusers"]
    )
    found = explained("transformers==4.30.2\n" + call + "\n")
    assert found.id == "log.dependency_version" and "diffusers" not in found.summary
    # the log naming diffusers: its get_scheduler never took a fifth, so it is not a release's
    assert explained("diffusers==0.30.0\n" + call + "\n").id != "log.dependency_version"


def test_a_parameter_required_in_every_release_is_the_calls_own_mistake():
    found = explained(
        called_from(
            "/home/ana/project/train.py",
            "sched = get_scheduler('linear', num_warmup_steps=10)",
            "get_scheduler() missing 1 required positional argument: 'optimizer'",
        )
        + "\n"
    )
    assert found.id != "log.dependency_version"
