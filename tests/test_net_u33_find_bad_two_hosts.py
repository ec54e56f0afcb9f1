"""`net --find-bad` on two hosts times one pair, with nothing to compare it with, and two ranks cannot say
which of two differing results is wrong. Before, the verdict said "no slow link, slow rank or silent
corruption" there, with a 20 mbit link (4.8 MB/s) among its figures. Now it says what it could not judge."""

from torchdoctor.net.find_bad import findings


def _record(hosts: dict[str, str], pairs: list[dict]) -> dict:
    return {
        "hosts": hosts,
        "device": "cpu",
        "interfaces": {r: {"interface": "eth0"} for r in hosts},
        "digests": {r: {"digest": "same", "model": "cpu"} for r in hosts},
        "speed": {r: {"matmul_gflops": 40.0, "copy_gbs": 8.0} for r in hosts},
        "rounds": [{"what": "pairs", "pairs": pairs}],
        "seconds": 4.45,
    }


def test_one_link_between_two_hosts_is_said_unjudged_not_healthy():
    pair = {"ranks": [0, 1], "kind": "reference", "gbs": 0.0048, "rtt_ms": 0.4}
    (verdict,) = findings(_record({"0": "node1", "1": "node2"}, [pair]))
    assert verdict.status == "ok" and verdict.summary.startswith("no slow rank among 2 ranks on 2 host(s)")
    assert "no slow link" not in verdict.summary
    assert "a slow link is not judged: the one pair timed (4.8 MB/s) has no other pair" in verdict.summary
    assert "`ethtool <interface>`, or run on 3 or more hosts" in verdict.summary
    assert "silent corruption is not judged with 2 ranks" in verdict.summary


def test_four_hosts_with_two_pairs_are_judged_on_all_three():
    pairs = [
        {"ranks": [0, 2], "kind": "reference", "gbs": 0.2, "rtt_ms": 0.1},
        {"ranks": [1, 3], "kind": "reference", "gbs": 0.21, "rtt_ms": 0.1},
    ]
    (verdict,) = findings(_record({"0": "h0", "1": "h1", "2": "h2", "3": "h3"}, pairs))
    assert verdict.summary.startswith(
        "no slow link, slow rank or silent corruption among 4 ranks on 4 host(s)"
    )
    assert "not judged" not in verdict.summary
