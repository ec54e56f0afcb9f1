"""Templates the catalog maps to a kind on which the certainty audit (benchmarks/certainty_audit.py
--list-missed) saw another lead or none, each class with the message as its source prints it, real values in it.

The classes found were the audit's, not explain's: it printed each Python message after "RuntimeError: " and each
C++ one without its raising helper's words, and filled a number of dimensions with a word. Printed as the sources
print them (the exception read from the installed package's file, ProcessGroupGloo.cpp's "ProcessGroupGloo::<op>: ",
rendezvous.py's "Error initializing torch.distributed using <scheme> rendezvous: "), the mapped kind leads:

- torch/utils/data/dataset.py's asserts and ValueErrors on the datasets given (ChainDataset, ConcatDataset,
  random_split): dataloader_options;
- torch/distributed/rendezvous.py's init_method without rank, world size, port or host: process_group_args;
- ProcessGroupGloo.cpp's checks on a collective's tensors: collective_arguments;
- torch/nn/modules' "expected 4D input (got 3D input)": input_shape_mismatch.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from explaining import explained

from torchdoctor.explain.catalog import by_id

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import certainty_audit  # noqa: E402


def lead_of(line: str) -> tuple[str, str]:
    found = explained(line + "\n")
    return found.id, found.details.get("confidence", "")


@pytest.mark.parametrize(
    "line",
    [
        "AssertionError: ChainDataset only supports IterableDataset",
        "AssertionError: ConcatDataset does not support IterableDataset",
        "AssertionError: datasets should not be an empty iterable",
        "ValueError: Sum of input lengths does not equal the length of the input dataset!",
        "ValueError: Fraction at index 1 is not between 0 and 1",
    ],
)
def test_the_datasets_refusals_lead_to_the_dataloaders_options(line):
    assert lead_of(line) == ("log.dataloader_options", "likely")


def test_the_audit_prints_a_python_message_after_the_exception_its_source_raises():
    # torch/utils/data/dataset.py: `assert isinstance(d, IterableDataset), "ChainDataset only supports ..."`
    chain = by_id()["torch:chaindataset-only-supports-iterabledataset"]
    assert certainty_audit.raised_as(chain) == "AssertionError"
    fraction = by_id()["torch:fraction-at-index-is-not-between"]
    assert certainty_audit.printed(fraction, "Fraction at index 1 is not between 0 and 1").startswith(
        "ValueError: "
    )
    # a template of no Python file keeps the default
    gloo = by_id()["torch_cpp:tensors-must-all-have-the-same"]
    assert certainty_audit.raised_as(gloo) == ""


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing",
        "ValueError: Error initializing torch.distributed using tcp:// rendezvous: world size parameter missing",
        "ValueError: Error initializing torch.distributed using file:// rendezvous: rank parameter missing",
        "ValueError: Error initializing torch.distributed using tcp:// rendezvous: port number missing",
        "AssertionError: hostname cannot be None",
    ],
)
def test_an_init_method_missing_a_part_leads_to_the_process_groups_arguments(line):
    assert lead_of(line) == ("log.process_group_args", "likely")


def test_the_audit_prints_rendezvous_messages_with_their_helpers_words():
    rank = by_id()["torch:rank-parameter-missing"]
    assert certainty_audit.printed(rank, "rank parameter missing") == (
        "ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing"
    )


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: ProcessGroupGloo::allgather: input and output tensors must have the same type",
        "RuntimeError: ProcessGroupGloo::scatter: requires empty input on non-root",
        "RuntimeError: ProcessGroupGloo::allreduce: tensors must all be on the same device",
        "RuntimeError: ProcessGroupGloo::reduce_scatter: reduce_scatter only supports 1 output",
    ],
)
def test_gloos_checks_on_a_collectives_tensors_lead_to_its_arguments(line):
    assert lead_of(line)[0] == "log.collective_arguments"


def test_the_audit_prints_a_gloo_check_after_its_collectives_name():
    same_type = by_id()["torch_cpp:tensors-must-all-have-the-same"]
    line = certainty_audit.printed(same_type, certainty_audit.render(same_type.text))
    assert line == "RuntimeError: ProcessGroupGloo::allgather: tensors must all have the same type"
    assert lead_of(line)[0] == "log.collective_arguments"
    # without the collective's name no Gloo check is read: the words alone are other code's too
    assert lead_of("RuntimeError: tensors must all have the same type")[0] != "log.collective_arguments"


def test_a_number_of_dimensions_is_rendered_as_a_number():
    assert certainty_audit.render("expected 4D input (got {}D input)") == "expected 4D input (got 3D input)"
    assert certainty_audit.render("got {}-dimensional input") == "got 3-dimensional input"
    assert lead_of("ValueError: expected 4D input (got 3D input)")[0] == "log.input_shape_mismatch"
    assert lead_of("ValueError: expected 5D input (got 4D input)")[0] == "log.input_shape_mismatch"


def test_the_audit_lists_the_templates_whose_mapped_kind_does_not_lead():
    chain = by_id()["torch:chaindataset-only-supports-iterabledataset"]
    fraction = by_id()["torch:fraction-at-index-is-not-between"]
    results = [
        certainty_audit.Result(chain, "bare", "ChainDataset only supports IterableDataset", "", ""),
        certainty_audit.Result(fraction, "bare", "Fraction at index 1 is not between 0 and 1", "", ""),
        certainty_audit.Result(
            fraction,
            "printed",
            "ValueError: Fraction at index 1 is not between 0 and 1",
            "dataloader_options",
            "likely",
        ),
    ]
    listed = certainty_audit.missed_list(results)
    assert listed.splitlines()[:2] == [
        "mapped to A, lead B (not A, not certain): 1 templates",
        "== dataloader_options led by -: 1",
    ]
    assert chain.id in listed and fraction.id not in listed
