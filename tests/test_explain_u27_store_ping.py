"""A store address that reaches a program speaking another protocol: TCPStore's ping reads the first 4 bytes of
the answer as a number (an HTTP server's or a proxy's "HTTP", an ssh server's "SSH-"). Found with pytorch/examples'
DDP tutorial (multinode.py) under torchrun --master_addr naming an address nobody of the run has, which this
machine's proxy answered; read here from a real TCPStore client whose port an HTTP-speaking server holds, its console
recorded (fixtures/recorded_runs/; benchmarks/recorded_runs.py runs it again)."""

import io
import textwrap
from pathlib import Path

import pytest
from explaining import explained
from rank_runner import run_script
from recorded import recorded

from torchdoctor.explain.diagnose import explain

# a TCPStore client whose port is answered by a server that speaks HTTP (as a web service or a proxy does)
HTTP_ANSWERS = textwrap.dedent(
    """
    import socket, threading
    from datetime import timedelta
    import torch.distributed as dist

    listener = socket.create_server(("127.0.0.1", 0))

    def answer():
        while True:
            conn, _ = listener.accept()
            conn.recv(64)
            conn.sendall(b"HTTP/1.1 400 Bad Request\\r\\nContent-Length: 0\\r\\n\\r\\n")
            conn.close()

    threading.Thread(target=answer, daemon=True).start()
    dist.TCPStore("127.0.0.1", listener.getsockname()[1], is_master=False, timeout=timedelta(seconds=2))
    """
)


def run(folder: Path) -> str:
    done = run_script(["-c", HTTP_ANSWERS], timeout=60)
    assert done.returncode != 0, done.stdout + done.stderr
    return done.stdout + done.stderr


RECORDED_RUNS = {"u27_store_ping_http": run}


def test_a_store_address_answered_by_an_http_server_says_so_and_to_check_the_address():
    log = recorded("u27_store_ping_http")
    found = explain(["-"], stdin=io.BytesIO(log.encode()))[0]
    assert found.id == "log.rendezvous_or_port", (found.summary, log[-2000:])
    assert "an HTTP server" in found.summary and "'HTTP' (Got: 1347703880)" in found.summary, found.summary
    assert "MASTER_ADDR" in found.fix and "the node of rank 0" in found.fix, found.fix
    assert found.details["confidence"] == "likely"


@pytest.mark.parametrize(
    ("got", "phrase"),
    [("759714643", "an ssh server, not this run's TCPStore: the store's ping read back the text 'SSH-'")],
)
def test_other_protocols_answering_the_store_are_named_by_their_text(got, phrase):
    line = f"torch.distributed.DistNetworkError: Ping failed, invalid value returned from server. Expected: 4242, Got: {got}\n"
    assert phrase in explained(line).summary


def test_a_ping_answered_with_a_number_that_is_not_text_is_another_store_as_before():
    # near miss: an older store, or another run's, answers with a number whose bytes are not text
    line = "torch.distributed.DistNetworkError: Ping failed, invalid value returned from server. Expected: 4242, Got: 17\n"
    found = explained(line)
    assert found.id == "log.rendezvous_or_port"
    assert "its ping came back with another value" in found.summary and "HTTP" not in found.summary
