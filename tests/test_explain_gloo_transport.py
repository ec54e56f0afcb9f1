"""gloo's own transport messages (third_party/gloo/gloo/transport/tcp, vendored in torch) read from the source that
prints them (issue 19): each template of `torch_native.tsv`'s gloo rows filled the way gloo fills it (its
``GLOO_ERROR_MSG`` / ``GLOO_ENFORCE`` prefix "[file:line] ", a peer's address as ``Address::str`` writes it,
"[10.0.0.2]:44321") under the traceback of the call that raised it, and lines near them that must not fire."""

from __future__ import annotations

import pytest
from explaining import explained, template

from torchdoctor.explain.catalog import by_id

PEER = ("10.0.0.2", "44321")
CALL = 'Traceback (most recent call last):\n  File "train.py", line 52, in <module>\n    dist.all_reduce(stats)\n'
INIT = (
    'Traceback (most recent call last):\n  File "train.py", line 20, in <module>\n'
    '    dist.init_process_group(backend="gloo")\n'
)


def raised(where: str, message: str, call: str = CALL) -> str:
    """``message`` as ProcessGroupGloo re-raises it: a RuntimeError whose text is gloo's "[file:line] message"."""
    return f"{call}RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/{where}] {message}\n"


def test_the_other_pairs_of_a_process_whose_operation_timed_out_are_its_timeout():
    # unbound_buffer.cc: every other pair of a process is closed with this once one of its operations timed out
    assert by_id()["torch_native:gloo-application-timeout-pair-closure"].kind == "collective_timeout"
    text = CALL + "RuntimeError: " + template("torch_native:gloo-application-timeout-pair-closure") + "\n"
    found = explained(text)
    assert (found.id, found.details["confidence"]) == ("log.collective_timeout", "likely"), found.summary
    assert "Application timeout caused pair closure" in found.summary, found.summary
    assert "the cause is not in this log" in found.summary, found.summary
    assert "init_process_group(..., timeout=" in found.fix, found.fix


@pytest.mark.parametrize(
    ("ident", "where", "said"),
    (
        ("torch_native:gloo-read-timeout", "pair.cc:523", "gloo's read from 10.0.0.2:44321 timed out"),
        ("torch_native:gloo-write-timeout", "pair.cc:314", "gloo's write to 10.0.0.2:44321 timed out"),
    ),
)
def test_a_pair_read_or_write_past_the_timeout_is_a_collective_timeout(ident, where, said):
    found = explained(raised(where, template(ident, *PEER)))
    assert (found.id, found.details["confidence"]) == ("log.collective_timeout", "likely"), found.summary
    assert said in found.summary, found.summary


def test_gloos_timed_out_wait_still_reads_its_milliseconds():
    text = raised("unbound_buffer.cc:81", template("torch_native:gloo-timed-out-waiting-for-recv", "1800000"))
    found = explained(text + "RuntimeError: Application timeout caused pair closure\n")
    assert found.id == "log.collective_timeout", found.summary
    assert "timeout 30 min" in found.summary or "1800000" in found.summary, found.summary


@pytest.mark.parametrize(
    ("ident", "where", "values"),
    (
        ("torch_native:gloo-socket-closed", "pair.cc:812", PEER),
        ("torch_native:gloo-socket-unexpectedly-closed", "pair.cc:201", PEER),
        ("torch_native:gloo-writev-failed", "pair.cc:339", (*PEER, "Broken pipe")),
        ("torch_native:gloo-read-error-remote-hanging", "pair.cc:538", (*PEER, "Connection reset by peer")),
        ("torch_native:gloo-connection-closed-by-peer-remote-crashing", "pair.cc:554", PEER),
    ),
)
def test_a_socket_the_peer_closed_is_a_peer_gone_never_a_cause(ident, where, values):
    assert by_id()[ident].kind == "peer_closed"
    found = explained(raised(where, template(ident, *values)))
    assert (found.id, found.details["confidence"]) == ("log.peer_closed", "likely"), found.summary
    assert "(10.0.0.2:44321)" in found.summary and "the cause is not in this log" in found.summary, (
        found.summary
    )


def test_the_cause_on_the_same_log_leads_over_gloos_closed_pair():
    found = explained(
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
        "capacity of 79.10 GiB of which 1.02 GiB is free.\n"
        + raised("pair.cc:812", template("torch_native:gloo-socket-closed", *PEER))
    )
    assert found.id == "log.cuda_oom", found.summary


def test_a_pair_that_never_connected_is_an_interface_or_a_firewall():
    found = explained(raised("pair.h:311", template("torch_native:gloo-connect-timeout", *PEER), INIT))
    assert (found.id, found.details["confidence"]) == ("log.network_interface", "likely"), found.summary
    assert "gloo cannot connect to 10.0.0.2:44321 (Connect timeout)" in found.summary, found.summary
    assert "log.rendezvous_or_port" in found.details["alternatives"], found.details["alternatives"]


def test_a_host_name_resolving_to_an_address_not_this_hosts_names_both():
    message = "bind_rv == 0. -1 vs 0. " + template(
        "torch_native:gloo-unable-to-bind-hostname-address",
        "node7",
        "10.3.4.5:0",
        "Cannot assign requested address",
    )
    found = explained(
        INIT
        + f"RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] {message}\n"
    )
    assert found.id == "log.network_interface", found.summary
    assert "'node7', which resolves to 10.3.4.5:0: not an address of this host" in found.summary, (
        found.summary
    )
    assert "/etc/hosts" in found.fix and "GLOO_SOCKET_IFNAME" in found.fix, found.fix


def test_unable_to_find_address_tells_the_host_name_from_the_interface():
    ident = "torch_native:gloo-unable-to-find-address-for-interface"
    enforce = "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:{}] {} != nullptr. {}\n"
    by_name = explained(INIT + enforce.format(138, "rp", template(ident, "node7")))
    assert by_name.id == "log.network_interface", by_name.summary
    assert "no usable address for this host's name 'node7'" in by_name.summary, by_name.summary
    by_interface = explained(INIT + enforce.format(83, "ifa", template(ident, "eth0")))
    assert "no network interface 'eth0' on this host" in by_interface.summary, by_interface.summary


def test_gloos_size_check_with_its_2025_sentences_is_the_ranks_disagreeing():
    message = "op.preamble.length <= op.nbytes. 4096 vs 2048. Received data size doesn't match expected size."
    assert template("torch_native:gloo-collective-size-mismatch", "4096", "2048").startswith(message)
    found = explained(
        raised("pair.cc:459", template("torch_native:gloo-collective-size-mismatch", "4096", "2048"))
    )
    assert found.id == "log.rank_divergence", found.summary
    assert "4096 bytes here, 2048 on the peer" in found.summary, found.summary


@pytest.mark.parametrize(
    "line",
    (
        # an HTTP client's read timeout, a websocket closed: the same words, not gloo's pair
        "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. "
        "(read timeout=10)\n",
        "websocket._exceptions.WebSocketConnectionClosedException: socket is already closed.\n",
        "WARNING: Socket closed by client, reconnecting\n",
    ),
)
def test_like_words_elsewhere_are_not_gloos(line):
    found = explained(line)
    assert found.id not in ("log.collective_timeout", "log.peer_closed", "log.network_interface"), (
        found.summary
    )
