"""The job-wide hang report's post through the store is made again on a new connection where the one in use broke
(hang/job.py JobExchange._post): under CI's load every node's post once failed with "Broken pipe" while the store
still ran, and each node reported only its own ranks. Here the store's server is a real TCPStore in another
process, stopped and started again on its port between the connection and the post."""

import socket
import subprocess
import sys

from torchdoctor.hang.job import JobExchange

SERVER = """
import sys, time
from datetime import timedelta
from torch.distributed import PrefixStore, TCPStore
store = TCPStore("127.0.0.1", int(sys.argv[1]), is_master=True, wait_for_workers=False, timeout=timedelta(seconds=60))
# the node hosting rank 0 has reported, under the exchange's prefix: the other nodes stop waiting for it
PrefixStore("torchdoctor/hang/job/0/", store).set("reported", "1")
print("up", flush=True)
time.sleep(60)
"""


def serve(port: int) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], stdout=subprocess.PIPE, text=True)
    assert server.stdout.readline().strip() == "up"
    return server


def test_a_post_on_a_broken_connection_is_made_again_on_a_new_one(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    worker = {"nodes": 2, "node": 1, "store": ["127.0.0.1", port], "run_id": "job", "restart": "0", "rank": 2,
              "world_size": 4, "host": "node-b"}  # fmt: skip
    first = serve(port)
    try:
        exchange = JobExchange.connect([worker], timeout=10)
        assert exchange is not None and not exchange.hosts_rank0
    finally:
        first.kill()
        first.wait()
    second = serve(port)  # the same store's address, a new server: the first connection is broken
    try:
        stopped = []
        report = exchange.report([], {}, tmp_path, 5.0, lambda: stopped.append(True), collect=0.5)
        assert "unreachable" not in report, report
        assert stopped == [True]
        from datetime import timedelta

        from torch.distributed import PrefixStore, TCPStore

        client = TCPStore("127.0.0.1", port, is_master=False, timeout=timedelta(seconds=10))
        assert PrefixStore("torchdoctor/hang/job/0/", client).check(["node/1", "asked"])
    finally:
        second.kill()
        second.wait()


def test_a_store_already_gone_is_no_exchange_and_leaves_no_error_of_torchs_on_the_console(capfd):
    """A short run on two namespace hosts ended before its launchers first looked for the store: the launcher's
    TCPStore client retried the refused port for its timeout, twice, and torch printed its connect error with a
    C++ stack on the console of a run that succeeded (which `explain` then read as an unreachable store)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there any more
    worker = {"nodes": 2, "node": 0, "store": ["127.0.0.1", port], "run_id": "job", "restart": "0", "rank": 0,
              "world_size": 2, "host": "node-a"}  # fmt: skip
    assert JobExchange.connect([worker], timeout=1) is None
    assert "client socket" not in capfd.readouterr().err
