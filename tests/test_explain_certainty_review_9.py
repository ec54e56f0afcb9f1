"""The certainty review's ninth part (helper T36, issue 19): the certain leads whose anchor is a message several
causes print (a port in use, a timeout, "Killed", an exit code, an import error, a size mismatch), each read
against the code that prints it for another cause.

- "Address already in use" is the rendezvous port only as torch's store words it. The store is C++: its bind
  failure reaches Python as RuntimeError ("RuntimeError: Address already in use" before torch 1.9, the
  DistNetworkError "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use)"
  since). Python's socket module raises the same errno as ``OSError: [Errno 98] Address already in use``
  (socketserver, Flask, a multiprocessing manager, a script checking a port), and pyzmq as
  ``zmq.error.ZMQError: Address already in use (addr='tcp://...:5557')`` (its Socket.bind appends the address:
  vLLM's and DeepSpeed-MII's worker sockets): likely, the server's port named where the message gives it, not
  29500. Before this review the bare OSError was held certain (test_explain_certainty_review_7.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from explaining import certain, explained

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))

pytestmark = pytest.mark.usefixtures("every_message_seen")

# pyzmq's sugar/socket.py Socket.bind: `e.strerror += f" (addr={addr!r})"`, then re-raised
ZMQ_IN_USE = "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:5557')\n"
# CPython's socketserver.TCPServer.server_bind, as a Flask / http.server app prints it
SOCKETSERVER_IN_USE = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.10/socketserver.py", line 466, in server_bind\n'
    "    self.socket.bind(self.server_address)\n"
    "OSError: [Errno 98] Address already in use\n"
)
# torch's TCPStore before 1.9 (c10d's std::system_error, RuntimeError in Python), under rendezvous.py's frame
STORE_IN_USE = (
    '  File "/usr/lib/python3.8/site-packages/torch/distributed/rendezvous.py", line 179, in _env_rendezvous_handler\n'
    "    store = TCPStore(master_addr, master_port, world_size, start_daemon, timeout)\n"
    "RuntimeError: Address already in use\n"
)
# socket.cpp's SocketListenOp since torch 1.9
STORE_SOCKET_IN_USE = (
    "RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
    "failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to "
    "0.0.0.0:29500 (errno: 98 - Address already in use).\n"
)


@pytest.mark.parametrize(
    "text", [ZMQ_IN_USE, SOCKETSERVER_IN_USE, "socket.error: [Errno 48] Address already in use\n"]
)
def test_a_port_python_code_bound_is_likely_not_the_rendezvous_port(text):
    found = explained(text)
    assert (found.id, found.details["confidence"]) == ("log.rendezvous_or_port", "likely"), found.summary
    assert "29500" not in found.summary
    # both readings are named: another server's port, and the rendezvous port where the script binds it itself
    assert "MASTER_PORT" in found.summary and "--master_port" in found.fix


def test_zmqs_address_gives_the_port():
    found = explained(ZMQ_IN_USE)
    assert "port 5557" in found.summary and "ss -ltnp | grep :5557" in found.fix


@pytest.mark.parametrize("text", [STORE_IN_USE, STORE_SOCKET_IN_USE])
def test_the_stores_own_words_stay_certain(text):
    assert "29500" in certain(text, "rendezvous_or_port").fix


def test_the_stores_words_beside_a_python_servers_keep_the_rendezvous_reading():
    certain(SOCKETSERVER_IN_USE + STORE_IN_USE, "rendezvous_or_port")


def test_every_seen_measures_without_the_evidence_rule_and_restores_it():
    import explain_corpus

    from torchdoctor.explain.recognisers import Recogniser

    seen, contested = Recogniser.seen, Recogniser.contested
    with explain_corpus.every_anchor_seen():
        assert Recogniser.seen is not seen and Recogniser.contested is not contested
    assert (Recogniser.seen, Recogniser.contested) == (seen, contested)
