"""Three readings corrected from the source that prints them: DTensor's warning on a CPU mesh (torch carries on:
no kind), the etcd rendezvous' own etcd server that never came up (a rendezvous, not a collective's timeout), and
horovod's releases across the 0.17 it never published (the table's '#unreleased' line: "came in 0.18", '<0.18')."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from explaining import explained, filled, leads_with

from torchdoctor.explain.catalog import by_id
from torchdoctor.explain.kinds import api_history
from torchdoctor.explain.kinds.release_pins import below, came, follows

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import api_history as generator  # noqa: E402
import catalog_coverage  # noqa: E402

pytestmark = pytest.mark.usefixtures("every_message_seen")

SITE = "/opt/conda/lib/python3.11/site-packages"

# --- DTensor's fallback warning: not a refused collective --------------------------------------------------------

# torch/distributed/tensor/_collective_utils.py shard_dim_alltoall: warning_once, then allgather + chunk
FALLBACK = by_id()["torch:cpu-process-group-does-not-support"].text


def test_the_cpu_fallback_warning_has_no_kind_in_the_catalog():
    assert by_id()["torch:cpu-process-group-does-not-support"].kind == ""
    assert catalog_coverage.kind_of(FALLBACK) == ""


@pytest.mark.parametrize(
    "printed",
    [
        # torch 2.x's logger as torchrun's workers print it, and as a plain `python` run prints it
        f"[rank0]:W0612 10:01:02.345000 4242 torch/distributed/tensor/_collective_utils.py:87] {FALLBACK}",
        f"WARNING:torch.distributed.tensor._collective_utils:{FALLBACK}",
    ],
)
def test_the_cpu_fallback_warning_alone_is_no_failure(printed):
    found = explained(printed + "\n")
    assert found.id != "log.collective_arguments", found.summary


def test_gloo_refusing_all_to_all_is_still_a_refused_collective():
    # Backend.hpp's default alltoall, which ProcessGroupGloo does not override: dist.all_to_all over gloo
    leads_with(
        'Traceback (most recent call last):\n  File "/home/ana/train.py", line 12, in <module>\n'
        "    dist.all_to_all(outputs, inputs)\nRuntimeError: Backend gloo does not support alltoall",
        "collective_arguments",
        "certain",
        ["does not support alltoall"],
    )


# --- etcd_server.py: the etcd rendezvous' own server ------------------------------------------------------------


@pytest.mark.parametrize(
    "ident, values",
    [
        ("torch:timed-out-waiting-for-etcd-server", ()),
        ("torch:etcd-server-process-exited-with-the", ("1",)),
    ],
)
def test_the_etcd_server_not_coming_up_is_a_rendezvous(ident, values):
    assert by_id()[ident].kind == "rendezvous_or_port"
    message = filled(ident, *values)
    error = "TimeoutError" if "Timed out" in message else "RuntimeError"
    found = leads_with(
        "Traceback (most recent call last):\n"
        f'  File "{SITE}/torch/distributed/elastic/rendezvous/etcd_server.py", line 243, in _wait_for_ready\n'
        f"{error}: {message}",
        "rendezvous_or_port",
        "certain",  # printed for that alone (a real run says likely until a labelled log shows it)
        ["etcd server", "TORCHELASTIC_ETCD_BINARY_PATH", "--rdzv-backend=c10d"],
    )
    assert "collective" not in found.summary


def test_gloo_and_elastic_timeouts_are_still_collective_timeouts():
    for line in (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms "
        "for recv operation to complete",
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting "
        "60000ms for send operation to complete",
    ):
        assert explained(line + "\n").id == "log.collective_timeout", line
    assert (
        catalog_coverage.kind_of(by_id()["torch:timed-out-waiting-on-barrier-on"].text)
        == "collective_timeout"
    )


# --- horovod's releases: 0.16.4 was followed by 0.18.0 ------------------------------------------------------------


def test_the_table_says_which_horovod_minor_was_never_released():
    assert api_history.unreleased("horovod") == ("0.17",)
    assert api_history.unreleased("pytorch_lightning") == ()  # 1.7 was released, only not read
    releases = api_history.load()["horovod"][0]
    assert "0.16.4" in releases and "0.18.2" in releases and not any(r.startswith("0.17") for r in releases)


def test_pins_and_wording_cross_horovods_gap():
    releases, gaps = api_history.load()["horovod"][0], api_history.unreleased("horovod")
    assert follows(releases, "0.16.4", "0.18.2", gaps) and not follows(releases, "0.16.4", "0.18.2")
    assert below(releases, "0.16.4", "0.18.2", gaps) == "<0.18"
    assert below(releases, "0.16.4", "0.18.2") == "==0.16.*"
    assert came(releases, "0.18.2", "horovod", gaps) == "came in horovod 0.18"
    # a gap of minors read but skipped is still a gap (0.16 -> 0.19)
    assert not follows(releases, "0.16.4", "0.19.5", gaps)


@pytest.mark.parametrize(
    "line",
    [
        "AttributeError: module 'horovod.torch' has no attribute 'gloo_built'",
        f"ImportError: cannot import name 'nccl_built' from 'horovod.torch' ({SITE}/horovod/torch/__init__.py)",
    ],
)
def test_a_horovod_name_of_0_18_came_in_0_18(line):
    found = leads_with(line, "dependency_version", "certain", ["came in horovod 0.18", "horovod>=0.18"])
    assert "after 0.16" not in found.summary


def test_pytorch_lightnings_unread_1_7_is_still_a_gap():
    releases = api_history.load()["pytorch_lightning"][0]
    gaps = api_history.unreleased("pytorch_lightning")
    assert below(releases, "1.6.5.post0", "1.8.6", gaps) == "==1.6.*"


def test_the_generator_writes_the_unreleased_line(tmp_path):
    table = tmp_path / "t.tsv"
    generator.write(
        table,
        ["# header"],
        {"horovod": (["0.16.4", "0.18.2"], [("horovod.torch", "gloo_built", "0.18.2", "", "", "")])},
        generator.UNRELEASED,
    )
    assert table.read_text().splitlines()[1:3] == [
        "#releases\thorovod\t0.16.4\t0.18.2",
        "#unreleased\thorovod\t0.17",
    ]
    assert generator.UNRELEASED["horovod"][0] not in generator.MINORS["horovod"]
