"""``torchdoctor net --find-bad``: which link or which rank holds the job back, found in rounds.

Every rank of the smoke test, once it passed, runs the same rounds (`run_rounds`):

1. **the same seeded computation** on every rank, compared bit for bit through an order-sensitive hash: a rank
   whose result differs computes wrongly (silent data corruption);
2. **each rank's own speed**: a matrix multiply and a memory copy, one rank at a time where ranks share a CPU;
3. **halves**: on three hosts (where a half would be one host alone, whose all_reduce crosses no link) every pair
   of hosts is timed instead, twice when one host is in every slow pair, and that host's link is named; else,
   while more than two hosts are suspect (at first all), the suspect ranks are split in two halves
   by host, and each half times an ``all_reduce`` inside itself, both at once; the slower half stays suspect
   while it is several times slower than the other, and is split again;
4. **pairs**: each suspect host sends to a host already cleared (timed twice when it looks slow), and two
   cleared hosts to each other for reference (point-to-point bandwidth and latency); when nothing is suspect,
   one round of reference pairs only (host beside host, or on one host rank beside rank), the figures a
   healthy job is told and `torchdoctor.net.pair_matrix` draws.

Every test moves a fixed, small amount of data, so a link a hundred times slower is measured, not timed out.
Rank 0 keeps the measurements; `findings` judges them: the slow link (host, interface) or the slow rank, against
the median of its peers, and never the ranks that only waited for it.
"""

from __future__ import annotations

import fcntl
import hashlib
import socket
import statistics
import struct
import time
from collections.abc import Mapping
from typing import Any

from torchdoctor.findings import Finding
from torchdoctor.net.baseline import against_baseline, baseline_findings, baseline_for, sentence, where_is
from torchdoctor.rank_list import who

SEED = 20261124
LINK_BYTES = 4 * 2**20  # what each half's all_reduce and each pair's exchange moves
SLOWER = 3.0  # a half or a pair this many times slower than its reference is suspect
SLOW_RANK = 0.5  # a rank below this share of the median rank's matmul or copy speed is slow
MAX_ROUNDS = 8
PASSES = 3  # each rank's speed is the median of this many measurements, spread over the others' turns
WINDOW_SECONDS = 0.06  # one measurement: long enough that a core shared with a busy process shows


def run_rounds(rank: int, world: int, peers: Mapping[int, Mapping[str, Any]], device: Any, digest) -> dict:
    """Run the rounds on this rank; every rank returns the same measurements (``digest(device)`` hashes the
    seeded computation: the worker's, which a test may replace)."""
    import torch.distributed as dist

    started = time.monotonic()
    hosts = {r: str(peers[r].get("host", "?")) for r in range(world)}
    record: dict[str, Any] = {
        "hosts": {str(r): h for r, h in hosts.items()},
        "device": device.type,
        "rounds": [],
    }
    record["interfaces"] = _gather({"interface": used_interface()})
    record["devices"] = _gather(device_identity(device))
    record["digests"] = _gather(digest(device))
    record["speed"] = _speeds(rank, world, device, list(range(world)))
    record["rounds"].append({"what": "the same seeded computation and each rank's speed"})
    suspects = sorted({s["rank"] for s in slow_speeds(record["speed"])})
    if suspects:  # measured again beside the others, so that a passing load on the machine blames nobody
        record["speed_again"] = _speeds(
            rank, world, device, suspects + [r for r in range(world) if r not in suspects]
        )
        record["rounds"].append({"what": "the slow ranks' speed measured again", "ranks": suspects})
    suspects, cleared = list(range(world)), []
    if len(set(hosts.values())) == 3:
        # Halves of three hosts leave one alone, whose all_reduce crosses no link: time every pair instead
        record["rounds"] += _every_pair_of_hosts(rank, hosts, device)
        dist.barrier()
        record["seconds"] = round(time.monotonic() - started, 2)
        return record
    # Halves while more than three hosts are suspect (so that each half crosses a link), then pairs: each
    # suspect host beside a cleared one.
    while len({hosts[r] for r in suspects}) > 3 and len(record["rounds"]) < MAX_ROUNDS:
        first, second = split_by_host(suspects, hosts)
        seconds = _time_halves(rank, first, second, device)
        record["rounds"].append({"what": "halves", "halves": [first, second], "seconds": seconds})
        slow, fast = (first, second) if seconds[0] >= seconds[1] else (second, first)
        if min(seconds) <= 0 or max(seconds) / min(seconds) < SLOWER:
            suspects, cleared = [], suspects  # neither half stands out: no one link holds the job back
            break
        suspects, cleared = slow, cleared + fast
    if suspects and cleared:
        groups = pair_rounds(suspects, cleared, hosts)
        timed = [p for pairs in groups for p in _time_pairs(rank, pairs, device)]
        record["rounds"].append({"what": "pairs", "pairs": timed})
        if slow_pairs(timed):  # timed again: a passing load on the machine must not blame a link
            again = [p for pairs in groups for p in _time_pairs(rank, pairs, device)]
            record["rounds"].append({"what": "pairs again", "pairs": again})
    elif (
        world > 1
    ):  # nothing suspect (or two hosts: one link, no telling which end): reference pairs, for the figures
        record["rounds"].append(
            {"what": "pairs", "pairs": _time_pairs(rank, reference_pairs(list(range(world)), hosts), device)}
        )
    dist.barrier()
    record["seconds"] = round(time.monotonic() - started, 2)
    return record


EVERY_PAIR = "pairs of every host"


def _every_pair_of_hosts(rank: int, hosts: Mapping[int, str], device: Any) -> list[dict]:
    """The rounds for three hosts: each pair of hosts (their first ranks) timed on its own, and again when a
    host stands out, so that a passing load blames nobody."""
    from itertools import combinations

    firsts = list(dict.fromkeys(hosts.values()))
    ranks = [min(r for r in hosts if hosts[r] == host) for host in firsts]
    pairs = [(a, b, "between") for a, b in combinations(ranks, 2)]
    timed = [p for pair in pairs for p in _time_pairs(rank, [pair], device)]
    rounds = [{"what": EVERY_PAIR, "pairs": timed}]
    if odd_host_out(timed, hosts) is not None:
        again = [p for pair in pairs for p in _time_pairs(rank, [pair], device)]
        rounds.append({"what": EVERY_PAIR + " again", "pairs": again})
    return rounds


def odd_host_out(pairs: list[dict], hosts: Mapping[int, str]) -> tuple[str, list[dict], float] | None:
    """Among pairs of every host: (the host in every slow pair, its slow pairs, the other pairs' bandwidth),
    when the pairs without it are `SLOWER` times faster; else None."""
    measured = [p for p in pairs if "gbs" in p]
    if len(measured) < 3:
        return None
    slow = []
    for pair in measured:
        others = [p["gbs"] for p in measured if p is not pair]
        if pair["gbs"] * SLOWER <= statistics.median(others):
            slow.append(pair)
    common = set.intersection(*({hosts[r] for r in p["ranks"]} for p in slow)) if slow else set()
    if len(common) != 1:
        return None
    (host,) = common
    fast = [p["gbs"] for p in measured if host not in {hosts[r] for r in p["ranks"]}]
    if not fast or any(p["gbs"] * SLOWER > min(fast) for p in slow):
        return None
    return host, slow, statistics.median(fast)


def split_by_host(ranks: list[int], hosts: Mapping[int, str]) -> tuple[list[int], list[int]]:
    """Two halves of ``ranks`` with no host split across them (by host name, in rank order).

    >>> split_by_host([0, 1, 2, 3], {0: "a", 1: "b", 2: "c", 3: "d"})
    ([0, 1], [2, 3])
    """
    names = list(dict.fromkeys(hosts[r] for r in ranks))
    first = set(names[: len(names) // 2])
    return [r for r in ranks if hosts[r] in first], [r for r in ranks if hosts[r] not in first]


def pairs_to_test(
    suspects: list[int], cleared: list[int], hosts: Mapping[int, str]
) -> list[tuple[int, int, str]]:
    """Disjoint pairs: one rank of each suspect host with a rank of a cleared host, and two cleared hosts for
    reference; ``(a, b, "suspect" | "reference")``."""
    free = [r for r in cleared]
    pairs = []
    for host in dict.fromkeys(hosts[r] for r in suspects):
        mine = next(r for r in suspects if hosts[r] == host)
        partner = next((r for r in free if hosts[r] != host), None)
        if partner is None:
            break
        free.remove(partner)
        pairs.append((mine, partner, "suspect"))
    first = next(iter(free), None)
    second = next((r for r in free if first is not None and hosts[r] != hosts[first]), None)
    if first is not None and second is not None:
        pairs.append((first, second, "reference"))
    return pairs


def pair_rounds(
    suspects: list[int], cleared: list[int], hosts: Mapping[int, str]
) -> list[list[tuple[int, int, str]]]:
    """`pairs_to_test` again for the suspect hosts left unpaired, until each has a cleared partner: more suspect
    hosts than cleared ones take several rounds (the cleared hosts serve again), none is left untimed.

    >>> pair_rounds([2, 3, 4], [0, 1], {0: "a", 1: "b", 2: "c", 3: "d", 4: "e"})
    [[(2, 0, 'suspect'), (3, 1, 'suspect')], [(4, 0, 'suspect')]]
    """
    rounds, left = [], list(suspects)
    while left:
        pairs = pairs_to_test(left, cleared, hosts)
        paired = {hosts[a] for a, _, kind in pairs if kind == "suspect"}
        if not paired:
            break
        rounds.append(pairs)
        left = [r for r in left if hosts[r] not in paired]
    return rounds


def reference_pairs(ranks: list[int], hosts: Mapping[int, str]) -> list[tuple[int, int, str]]:
    """Disjoint pairs for reference when nothing is suspect: the first rank of each host beside the next host's
    (two by two, in host order); on one host, its ranks two by two.

    >>> reference_pairs([0, 1, 2, 3], {0: "a", 1: "a", 2: "b", 3: "c"})
    [(0, 2, 'reference')]
    >>> reference_pairs([0, 1, 2, 3], {0: "a", 1: "a", 2: "a", 3: "a"})
    [(0, 1, 'reference'), (2, 3, 'reference')]
    """
    first_of: dict[str, int] = {}
    for r in ranks:
        first_of.setdefault(hosts[r], r)
    chosen = list(first_of.values()) if len(first_of) > 1 else ranks
    return [(chosen[i], chosen[i + 1], "reference") for i in range(0, len(chosen) - 1, 2)]


def used_interface() -> str:
    """The interface this rank's traffic leaves by: ``GLOO_SOCKET_IFNAME``/``NCCL_SOCKET_IFNAME`` when set,
    else the one whose address routes to ``MASTER_ADDR``."""
    import os

    for variable in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
        if os.environ.get(variable):
            return os.environ[variable]
    target = os.environ.get("MASTER_ADDR", "127.0.0.1")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((target, 9))
            address = probe.getsockname()[0]
            for _, name in socket.if_nameindex():
                packed = struct.pack("256s", name[:15].encode())
                try:
                    mine = socket.inet_ntoa(fcntl.ioctl(probe.fileno(), 0x8915, packed)[20:24])  # SIOCGIFADDR
                except OSError:
                    continue
                if mine == address:
                    return name
    except OSError:  # no route, no IPv4: the interface is unknown, which the verdict says
        return ""
    return ""


def seeded_result(device: Any) -> Any:
    """A seeded computation every rank runs alike: sixteen matrix multiplies of a seeded 256×256 matrix."""
    import torch

    generator = torch.Generator().manual_seed(SEED)
    values = torch.randn(256, 256, generator=generator).to(device)
    for _ in range(16):
        values = torch.tanh(values @ values * (1 / 16))
    return values


def device_identity(device: Any) -> dict:
    """``{"model", "index", "pci_bus"}`` of this rank's device (``"cpu"``, None, None on a CPU): what the
    verdict names a GPU by."""
    import torch

    if device.type != "cuda":
        return {"model": "cpu", "index": None, "pci_bus": None}
    properties = torch.cuda.get_device_properties(device)
    bus = getattr(properties, "pci_bus_id", None)  # newer torch only: the verdict then names the index alone
    pci = None
    if bus is not None:
        domain, slot = getattr(properties, "pci_domain_id", 0), getattr(properties, "pci_device_id", 0)
        pci = f"{domain:04x}:{bus:02x}:{slot:02x}.0"
    return {"model": torch.cuda.get_device_name(device), "index": device.index, "pci_bus": pci}


def digest_of(values: Any, device: Any) -> dict:
    """An order-sensitive hash of ``values``' bits, with the device model (results compare within one model)."""
    import torch

    data = values.detach().cpu().contiguous().view(torch.int32)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    return {"digest": hashlib.sha256(data.numpy().tobytes()).hexdigest(), "model": name}


# -- measuring ------------------------------------------------------------------------------------------------


def _gather(value: dict) -> dict[str, dict]:
    import torch.distributed as dist

    values: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(values, value)
    return {str(r): v for r, v in enumerate(values)}


def _speeds(rank: int, world: int, device: Any, order: list[int]) -> dict[str, dict]:
    """Matmul GFLOP/s and copy GB/s per rank, the median of `PASSES` passes spread over time (a passing spike of
    load on the machine slows one pass, a rank that is slow stays slow); on CPUs one rank at a time in ``order``,
    each on one thread (ranks there share the cores)."""
    import torch
    import torch.distributed as dist

    passes: list[dict[str, float]] = []
    threads, precision = torch.get_num_threads(), torch.get_float32_matmul_precision()
    try:
        if device.type == "cpu":
            torch.set_num_threads(1)
        torch.set_float32_matmul_precision(
            "highest"
        )  # plain FP32, not TF32: what the baseline's peaks are for
        for turn in range(PASSES * world):
            if device.type == "cuda" or order[(turn + turn // world) % world] == rank:
                passes.append(_speed(device))
            if device.type == "cpu":
                dist.barrier()
            elif len(passes) == PASSES:
                break  # GPUs measure at once: no turns
    finally:
        torch.set_num_threads(threads)
        torch.set_float32_matmul_precision(precision)
    return _gather({k: round(statistics.median(p[k] for p in passes), 2) for k in passes[0]})


def _speed(device: Any) -> dict[str, float]:
    import torch

    n = 2048 if device.type == "cuda" else 192
    a = torch.randn(n, n, device=device)
    source = torch.ones(4 * 2**20 // 4 if device.type == "cpu" else 256 * 2**20 // 4, device=device)
    target = torch.empty_like(source)

    def timed(step) -> float:
        """Seconds per step, over at least `WINDOW_SECONDS` (long enough for a shared core to show)."""
        step()
        _sync(device)
        began, steps = time.perf_counter(), 0
        while time.perf_counter() - began < WINDOW_SECONDS:
            step()
            steps += 1
            if device.type == "cuda" and steps % 8 == 0:
                _sync(device)
        _sync(device)
        return (time.perf_counter() - began) / steps

    matmul = timed(lambda: a @ a)
    copy = timed(lambda: target.copy_(source))
    return {
        "matmul_gflops": round(2 * n**3 / matmul / 1e9, 2),
        "copy_gbs": round(2 * source.nbytes / copy / 1e9, 2),
    }


def _sync(device: Any) -> None:
    if device.type == "cuda":
        import torch

        torch.cuda.synchronize(device)


def _time_halves(rank: int, first: list[int], second: list[int], device: Any) -> list[float]:
    """Seconds of an all_reduce of `LINK_BYTES` inside each half, both at once (the slowest member's time)."""
    import torch
    import torch.distributed as dist

    groups = [dist.new_group(first), dist.new_group(second)]
    spent = 0.0
    for members, group in zip((first, second), groups, strict=True):
        if rank in members and len(members) > 1:
            payload = torch.ones(LINK_BYTES // 4, device=device)
            dist.all_reduce(payload, group=group)  # warm-up: the connections are made here
            _sync(device)
            began = time.perf_counter()
            for _ in range(2):
                dist.all_reduce(payload, group=group)
            _sync(device)
            spent = (time.perf_counter() - began) / 2
    times = _gather({"seconds": spent})
    return [max(times[str(r)]["seconds"] for r in members) for members in (first, second)]


def _time_pairs(rank: int, pairs: list[tuple[int, int, str]], device: Any) -> list[dict]:
    """Each pair at once: bandwidth of `LINK_BYTES` there and back, and the round trip of 8 bytes."""
    import torch

    mine: dict[str, float] = {}
    for a, b, _ in pairs:
        if rank not in (a, b):
            continue
        other = b if rank == a else a
        big, small = torch.ones(LINK_BYTES // 4, device=device), torch.ones(2, device=device)

        first = rank == a
        _there_and_back(big, other, first)  # warm-up
        began = time.perf_counter()
        _there_and_back(big, other, first)
        _sync(device)
        seconds = time.perf_counter() - began
        began = time.perf_counter()
        for _ in range(5):
            _there_and_back(small, other, first)
        mine = {
            "gbs": round(2 * LINK_BYTES / seconds / 1e9, 4),
            "rtt_ms": round((time.perf_counter() - began) / 5 * 1e3, 3),
        }
    measured = _gather(mine)
    return [{"ranks": [a, b], "kind": kind, **measured[str(a)]} for a, b, kind in pairs]


def _there_and_back(tensor: Any, other: int, first: bool) -> None:
    import torch.distributed as dist

    if first:
        dist.send(tensor, other)
        dist.recv(tensor, other)
    else:
        dist.recv(tensor, other)
        dist.send(tensor, other)


# -- judging --------------------------------------------------------------------------------------------------


def findings(record: Mapping[str, Any] | None) -> list[Finding]:
    """The verdicts on rank 0's measurements: silent corruption, a slow rank, a slow link, or a healthy job."""
    if not record:
        return [
            Finding("net.find_bad", "skip", "--find-bad did not run: the smoke test failed first (see above)")
        ]
    hosts = {int(r): h for r, h in record["hosts"].items()}
    found = corrupt_ranks(record, hosts) + slow_ranks(record, hosts)
    slow_hosts = {hosts[int(f.details["rank"])] for f in found if f.id == "net.slow_rank"}
    found += [f for f in slow_links(record, hosts) if f.details["host"] not in slow_hosts]
    below = [f for f in baseline_findings(record, hosts) if f.details.get("rank") not in _ranks(found)]
    for finding in found + below:
        finding.details.update(rounds=len(record["rounds"]), seconds=record["seconds"])
    if found:
        return found + below
    pairs = [p for r in record["rounds"] if r["what"] in ("pairs", EVERY_PAIR) for p in r["pairs"]]
    halves = [r for r in record["rounds"] if r["what"] == "halves"]
    speed = record["speed"]
    matmul = sorted(s["matmul_gflops"] for s in speed.values())
    timed = sorted(p["gbs"] for p in pairs if "gbs" in p)
    # What the ranks at hand can show: a digest that differs needs a majority (3 ranks) to be told wrong, and
    # a slow pair needs another pair beside it; left out of "no ..." and said, rather than claimed healthy.
    judged = ["slow link"] if len(timed) > 1 else []
    judged += ["slow rank"] + (["silent corruption"] if len(hosts) > 2 else [])
    names = judged[0] if len(judged) == 1 else ", ".join(judged[:-1]) + " or " + judged[-1]
    summary = (
        f"no {names} among {len(hosts)} ranks on {len(set(hosts.values()))} "
        f"host(s): {len(record['rounds'])} round(s), {record['seconds']:g} s; matmul {matmul[0]:g}–{matmul[-1]:g} "
        "GFLOP/s per rank"
    )
    unjudged = []
    if len(timed) == 1:
        unjudged.append(
            f"a slow link is not judged: the one pair timed ({_rate(timed[0])}) has no other pair to compare it "
            "with"
            + (
                " (set it beside the link's own speed, `ethtool <interface>`, or run on 3 or more hosts)"
                if len(set(hosts.values())) > 1
                else ""
            )
        )
    if len(hosts) < 3:
        unjudged.append(
            f"silent corruption is not judged with {len(hosts)} ranks (3 are needed to tell which differs)"
        )
    if halves:
        seconds = halves[0]["seconds"]
        summary += f"; halves' all_reduce {_ms(seconds[0])} and {_ms(seconds[1])}"
    summary += "; " + _baseline_words(record)
    if len(timed) > 1:
        summary += f"; {len(timed)} pair(s) {_rate(timed[0])}" + (
            f"–{_rate(timed[-1])}" if len(timed) > 1 else ""
        )
    summary += "".join(f"; {words}" for words in unjudged)
    return [Finding("net.find_bad", "ok", summary, {**record, "pairs": pairs})] + below


def _ranks(found: list[Finding]) -> set[int]:
    return {int(f.details["rank"]) for f in found if "rank" in f.details}


def _baseline_words(record: Mapping[str, Any]) -> str:
    """The ranks' matmul against their GPU model's stored baseline, in a few words (or why there is none)."""
    models = {str(d.get("model", "cpu")) for d in (record.get("devices") or {}).values()} or {"cpu"}
    if models == {"cpu"}:
        return "no stored baseline on CPUs (the ranks are compared with each other only)"
    known = {m: baseline_for(m) for m in models}
    unknown = sorted(m for m, row in known.items() if row is None)
    if unknown:
        return f"no stored baseline for {', '.join(unknown)} (compared with each other only)"
    devices = record["devices"]
    shares = sorted(
        s["matmul_gflops"] / known[devices[r]["model"]].expected("matmul_gflops")
        for r, s in record["speed"].items()
        if s and r in devices
    )
    if not shares:
        return "no speed measured to set beside the stored baseline"
    names = ", ".join(sorted({row.model for row in known.values() if row}))
    return f"matmul at {shares[0]:.0%}–{shares[-1]:.0%} of what the {names} does (stored baseline)"


def corrupt_ranks(record: Mapping[str, Any], hosts: Mapping[int, str]) -> list[Finding]:
    """Ranks whose seeded result differs from the majority of ranks with the same device model."""
    by_model: dict[str, dict[int, str]] = {}
    for rank, value in record["digests"].items():
        by_model.setdefault(value["model"], {})[int(rank)] = value["digest"]
    found = []
    for model, digests in by_model.items():
        if len(digests) < 3:
            continue  # two that differ cannot say which is wrong
        common = statistics.mode(digests.values())
        for rank, value in sorted(digests.items()):
            if value != common:
                found.append(
                    Finding(
                        "net.silent_corruption",
                        "fail",
                        f"rank {rank} (host {hosts[rank]}, {model}) computed a different result from the other "
                        f"{len(digests) - 1} ranks for the same seeded computation (bit for bit)",
                        {"rank": rank, "host": hosts[rank], "digest": value, "expected": common},
                        f"Take host {hosts[rank]} out of the job until it is checked: on a GPU, "
                        "`nvidia-smi -q -d ECC,PAGE_RETIREMENT` and `dcgmi diag -r 3`; on a CPU, `memtester` and "
                        "the machine's own diagnostics. Rerun `torchdoctor net --find-bad` to see if it repeats.",
                    )
                )
    return found


def slow_speeds(speed: Mapping[str, Mapping[str, float]]) -> list[dict]:
    """``{"rank", "measure", "value", "median"}`` for each rank below `SLOW_RANK` of the other ranks' median
    matmul or copy speed (the worse measure first)."""
    found = {}
    values = {int(r): s for r, s in speed.items() if s}
    if len(values) < 3:
        return []
    for measure in ("matmul_gflops", "copy_gbs"):
        for rank, value in values.items():
            others = statistics.median(s[measure] for r, s in values.items() if r != rank)
            share = value[measure] / others if others > 0 else 1.0
            if share < SLOW_RANK and (rank not in found or share < found[rank]["share"]):
                found[rank] = {
                    "rank": rank,
                    "measure": measure,
                    "value": value[measure],
                    "median": others,
                    "share": share,
                }
    return [found[r] for r in sorted(found)]


def slow_ranks(record: Mapping[str, Any], hosts: Mapping[int, str]) -> list[Finding]:
    """Ranks slow in the first measurement and again when measured a second time."""
    again = {s["rank"] for s in slow_speeds(record.get("speed_again") or {})}
    found = []
    for slow in slow_speeds(record["speed"]):
        rank = slow["rank"]
        if rank not in again:
            continue
        what, unit = ("matmul", "GFLOP/s") if slow["measure"] == "matmul_gflops" else ("memory copy", "GB/s")
        device = (record.get("devices") or {}).get(str(rank)) or {}
        model = str(device.get("model", "cpu"))
        summary = (
            f"rank {rank} ({where_is(rank, hosts[rank], device)}) is slow: {what} {slow['value']:g} {unit} against "
            f"a median of {slow['median']:g} for the other ranks ({slow['share']:.2f}×, the same when measured "
            "again); the job runs at its pace"
        )
        details = {**slow, "host": hosts[rank], **{k: v for k, v in device.items() if v is not None}}
        compared = against_baseline(slow["measure"], slow["value"], model) if model != "cpu" else None
        if compared is not None:
            summary += "; " + sentence(
                rank, f"GPU {device.get('index')}", model, slow["measure"], slow["value"]
            )
            details["baseline"] = compared
        found.append(
            Finding("net.slow_rank", "fail", summary, details, _slow_rank_fix(hosts[rank], record["device"]))
        )
    return found


def slow_pairs(pairs: list[dict]) -> list[tuple[dict, float]]:
    """(suspect pair, reference bandwidth) for each suspect pair `SLOWER` times below the median of the others."""
    measured = [p for p in pairs if "gbs" in p]
    found = []
    for pair in measured:
        others = [p["gbs"] for p in measured if p is not pair]
        if pair["kind"] == "suspect" and others and pair["gbs"] * SLOWER <= statistics.median(others):
            found.append((pair, statistics.median(others)))
    return found


def slow_links(record: Mapping[str, Any], hosts: Mapping[int, str]) -> list[Finding]:
    """A suspect host whose pair with a cleared host is `SLOWER` times below the other pairs, and again when
    timed a second time: its link is slow. The cleared ranks only waited for it."""
    rounds = {r["what"]: r["pairs"] for r in record["rounds"] if r["what"].startswith("pairs")}
    again = {tuple(p["ranks"]) for p, _ in slow_pairs(rounds.get("pairs again", []))}
    found = []
    named = []
    for pair, reference in slow_pairs(rounds.get("pairs", [])):
        if tuple(pair["ranks"]) in again:
            named.append((pair, reference, pair["ranks"][0]))
    odd, odd_again = (
        odd_host_out(rounds.get(what, []), hosts) for what in (EVERY_PAIR, EVERY_PAIR + " again")
    )
    if odd is not None and odd_again is not None and odd[0] == odd_again[0]:
        host, slow, reference = odd
        pair = min(slow, key=lambda p: p["gbs"])
        named.append((pair, reference, next(r for r in pair["ranks"] if hosts[r] == host)))
    for pair, reference, rank in named:
        partner = next(r for r in pair["ranks"] if r != rank)
        interface = record["interfaces"].get(str(rank), {}).get("interface") or "its network interface"
        found.append(
            Finding(
                "net.slow_link",
                "fail",
                f"the link of host {hosts[rank]} ({interface}, rank {rank}) is slow: {_rate(pair['gbs'])} to host "
                f"{hosts[partner]} against {_rate(reference)} between the other hosts "
                f"({reference / pair['gbs']:.0f}× slower, the same when timed again), round trip "
                f"{pair['rtt_ms']:g} ms; {who([r for r in hosts if hosts[r] != hosts[rank]])} only waited for it",
                {
                    "rank": rank,
                    "host": hosts[rank],
                    "interface": interface,
                    "partner": partner,
                    "gbs": pair["gbs"],
                    "reference_gbs": reference,
                },
                _slow_link_fix(hosts[rank], interface),
            )
        )
    return found


def _slow_rank_fix(host: str, device: str) -> str:
    if device == "cuda":
        return (
            f"On {host}: `nvidia-smi -q -d PERFORMANCE,CLOCK,TEMPERATURE,ECC` (throttle reasons, clocks, ECC errors); "
            f"a GPU that stays slow: drain the node (`scontrol update nodename={host} state=drain reason=slow-gpu`) "
            "or leave that GPU out (CUDA_VISIBLE_DEVICES)."
        )
    return (
        f"On {host}: another process shares this rank's cores (`top`, `ps -eo pid,psr,pcpu,comm --sort=-pcpu`), "
        "or its CPU is throttled; give each rank cores of its own (taskset, cgroups, SLURM --cpus-per-task) or "
        "drain the node."
    )


def _slow_link_fix(host: str, interface: str) -> str:
    name = interface if interface != "its network interface" else "IFACE"
    return (
        f"On {host}: `ip -s link show {name}` and `ethtool {name}` (speed, errors, drops), the cable and switch port; "
        f"to route around it, pick another interface (NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME), on InfiniBand "
        f"another HCA (NCCL_IB_HCA=^mlx5_N); or drain the node (`scontrol update nodename={host} state=drain "
        "reason=slow-link`)."
    )


def _rate(gbs: float) -> str:
    return f"{gbs:.2f} GB/s" if gbs >= 1 else f"{gbs * 1000:.1f} MB/s"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"
