"""`net --bench` over two hosts with one rank each: the host of rank 0 prints the table and judges it. Before,
it counted the ranks whose states it read (its own: 1) and said "not measured: 1 rank, so nothing crosses a
link" under a table of two-rank figures. Two namespace hosts; skipped without root."""

import json

from namespace_hosts import finish, start, two_hosts

PORT = 29434


def test_a_bench_of_one_rank_per_host_is_judged_as_the_jobs_two_ranks():
    with two_hosts("u33b") as hosts:
        a = hosts[0]
        net = ["-m", "torchdoctor", "net", "--json", "--timeout=30", "--nnodes=2", "--nproc-per-node=1"]
        net += [f"--rdzv-endpoint={a.name}:{PORT}", "--bench", "--ops=all_reduce", "--sizes=64K"]
        net += ["--iters=2", "--warmup=1", "--expect-busbw=0.000001"]
        results = finish([start(h, *net, env={"GLOO_SOCKET_IFNAME": h.interface}) for h in hosts])
    assert [code for code, _, _ in results] == [0, 0], results
    reports = [json.loads(out) for _, out, _ in results]
    (judged,) = [
        r for r in reports if any(f["id"] == "net.bandwidth" and f["status"] != "skip" for f in r["findings"])
    ]
    (bandwidth,) = [f for f in judged["findings"] if f["id"] == "net.bandwidth"]
    assert bandwidth["status"] == "ok" and "2 ranks" in bandwidth["summary"], bandwidth
    assert not any(
        "1 rank, so nothing crosses a link" in f["summary"] for r in reports for f in r["findings"]
    )
