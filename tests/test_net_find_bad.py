"""`torchdoctor net --find-bad`: the slow link, the slow rank and the rank that computes wrongly, found for real.

Ranks on one machine (forked by `net`, faults planted by tests/net_faults.py), and four network-namespace hosts
on one bridge with one host's link throttled by `tc` (root and iproute2 needed; skipped with the reason
otherwise). The verdict logic is also tried on its own with measurements of the shape the rounds record.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from torchdoctor.net.find_bad import findings, pairs_to_test, reference_pairs, split_by_host
from torchdoctor.net.pair_matrix import matrix_text, named_slow, pair_matrix, picture_finding

TESTS = Path(__file__).parent
WITH_FAULTS = str(TESTS / "net_faults.py")
RUN_LIMIT_S = 150


def _net_with_faults(faults: str, folder: Path, nproc: int = 4, here: bool = False) -> tuple[int, dict]:
    """A `net --find-bad --json` run with ``faults`` planted, in ``folder`` (where the pair picture goes);
    ``here``: through the same `main` in this process, the ranks forked from it as `net` forks them."""
    if here:
        from net_faults import run_here

        done = run_here(
            faults, "--json", "--find-bad", f"--nproc-per-node={nproc}", "--timeout=60", cwd=folder
        )
        return done.returncode, json.loads(done.stdout)
    env = {**os.environ, "NET_FAULTS": faults, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
    done = subprocess.run(
        [sys.executable, WITH_FAULTS, "--json", "--find-bad", f"--nproc-per-node={nproc}", "--timeout=60"],
        capture_output=True,
        text=True,
        env=env,
        timeout=RUN_LIMIT_S,
        cwd=folder,
    )
    return done.returncode, json.loads(done.stdout)


def _by_id(report: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["id"], []).append(finding)
    return found


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# what a machine shared with the rest of the suite can truly cause on healthy ranks: a rank, or a pair, slower
# in both of its measurements while another test's processes held its core (a CI run, 4 ranks beside 3 workers
# on 2 cores); never a corrupt rank
MACHINE_NOISE = ("net.slow_rank", "net.slow_link")


def test_healthy_ranks_are_told_so_with_their_pair_bandwidths_drawn_beside_the_run(tmp_path):
    code, report = _net_with_faults("", tmp_path)
    failed = [f for f in report["findings"] if f["status"] == "fail"]
    if failed and all(f["id"] in MACHINE_NOISE for f in failed):  # measured again, once, as a user would
        code, report = _net_with_faults("", tmp_path)
    found = _by_id(report)
    assert code == 0, [(f["id"], f["status"], f["summary"]) for f in report["findings"]]
    assert set(found) == {"net.smoke", "net.find_bad", "net.find_bad_picture"}, report
    (verdict,) = found["net.find_bad"]
    assert (
        verdict["status"] == "ok"
        and "no slow link, slow rank or silent corruption among 4 ranks" in verdict["summary"]
        and "2 pair(s)" in verdict["summary"]
    )
    (picture,) = found["net.find_bad_picture"]
    assert picture["status"] == "ok" and picture["details"]["picture"] == str(tmp_path / "find-bad-pairs.png")
    assert (tmp_path / "find-bad-pairs.png").read_bytes()[:8] == PNG_MAGIC
    matrix = picture["details"]["pair_matrix"]  # in --json: the reference pairs, ranks two by two on one host
    assert [p["ranks"] for p in matrix["pairs"]] == [[0, 1], [2, 3]] and all(
        p["gbs"] > 0 for p in matrix["pairs"]
    )


def test_the_pair_matrix_is_printed_and_drawn_where_asked(tmp_path, cli_here):
    # through the same `main` in this process, its ranks forked from here as `net` forks them from its own;
    # the healthy search above runs in a real process
    picture = tmp_path / "pairs" / "mine.png"
    picture.parent.mkdir()
    done = cli_here(
        "net", "--find-bad", "--nproc-per-node=2", "--timeout=60", f"--pairs-plot={picture}", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "point-to-point bandwidth between ranks, MB/s" in done.stdout, done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("rank 0 ("))
    assert row.split()[-2] == "·" and float(row.split()[-1]) > 0  # rank 0 to itself, rank 0 to rank 1
    assert f"drawn in {picture}" in done.stdout
    assert picture.read_bytes()[:8] == PNG_MAGIC
    assert not (tmp_path / "find-bad-pairs.png").exists()


def test_pairs_plot_without_find_bad_is_refused(tmp_path, cli_here):
    # refused before anything starts: the command line's `main` here, as test_cli's bad-input test runs every
    # command's (a usage error's status 2 from a process of its own: test_cli's piped-output test)
    done = cli_here("net", f"--pairs-plot={tmp_path / 'x.png'}")
    assert done.returncode == 2 and "--pairs-plot" in done.stderr and "--find-bad" in done.stderr, done.stderr


# The healthy run above is a real process; the faults of the same search run through the same `main` here
# (`here=True`), their ranks forked from this process as `net` forks them (a process each: 3 s of CPU).
def test_a_flipped_bit_names_its_rank(tmp_path):
    code, report = _net_with_faults("2:flip_bit", tmp_path, here=True)
    found = _by_id(report)
    assert code == 1, report
    (corrupt,) = found["net.silent_corruption"]
    assert corrupt["details"]["rank"] == 2
    assert "rank 2 (host" in corrupt["summary"] and "bit for bit" in corrupt["summary"]
    assert "dcgmi diag" in corrupt["fix"]


def test_a_rank_sharing_its_core_with_busy_processes_is_named(tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core only: every rank shares it")
    code, report = _net_with_faults("1:busy_core", tmp_path, nproc=3, here=True)
    found = _by_id(report)
    speeds = [(f["details"].get("speed"), f["details"].get("speed_again")) for f in report["findings"]]
    assert code == 1, speeds
    assert [f["details"]["rank"] for f in found["net.slow_rank"]] == [1], report
    assert "another process shares this rank's cores" in found["net.slow_rank"][0]["fix"]


# -- the verdict on its own ---------------------------------------------------------------------------------


def test_halves_keep_each_host_whole():
    hosts = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}
    assert split_by_host(list(hosts), hosts) == ([0, 1], [2, 3, 4, 5])


def test_pairs_put_each_suspect_host_beside_a_cleared_one_and_keep_a_reference():
    hosts = {0: "a", 1: "b", 2: "c", 3: "d"}
    assert pairs_to_test([2, 3], [0, 1], hosts) == [(2, 0, "suspect"), (3, 1, "suspect")]
    assert pairs_to_test([3], [0, 1, 2], hosts) == [(3, 0, "suspect"), (1, 2, "reference")]


def _record(pairs: list[dict], speed: dict | None = None, again: list[dict] | None = None) -> dict:
    rounds = [
        {"what": "halves", "halves": [[0, 1], [2, 3]], "seconds": [0.01, 0.9]},
        {"what": "pairs", "pairs": pairs},
    ]
    if again is not None:
        rounds.append({"what": "pairs again", "pairs": again})
    return {
        "hosts": {"0": "h0", "1": "h1", "2": "h2", "3": "h3"},
        "device": "cpu",
        "interfaces": {str(r): {"interface": f"eth{r}"} for r in range(4)},
        "digests": {str(r): {"digest": "same", "model": "cpu"} for r in range(4)},
        "speed": speed or {str(r): {"matmul_gflops": 40.0, "copy_gbs": 8.0} for r in range(4)},
        "rounds": rounds,
        "seconds": 3.0,
    }


def test_a_pair_slow_twice_beside_a_fast_reference_names_the_suspect_host_and_not_its_partner():
    pairs = [
        {"ranks": [2, 0], "kind": "suspect", "gbs": 0.012, "rtt_ms": 2.0},
        {"ranks": [3, 1], "kind": "suspect", "gbs": 0.9, "rtt_ms": 0.1},
    ]
    (slow,) = findings(_record(pairs, again=pairs))
    assert slow.id == "net.slow_link" and slow.details["host"] == "h2" and slow.details["interface"] == "eth2"
    assert slow.summary.endswith("ranks 0, 1, 3 only waited for it")
    assert "NCCL_SOCKET_IFNAME" in slow.fix and "ip -s link show eth2" in slow.fix
    fast_again = [dict(pairs[0], gbs=0.8), pairs[1]]
    (healthy,) = findings(_record(pairs, again=fast_again))  # slow once: a passing load, nobody is blamed
    assert healthy.id == "net.find_bad" and healthy.status == "ok"


def test_a_rank_slow_only_once_is_not_blamed():
    speed = {str(r): {"matmul_gflops": 40.0, "copy_gbs": 8.0} for r in range(4)}
    speed["3"] = {"matmul_gflops": 4.0, "copy_gbs": 8.0}
    record = _record([{"ranks": [2, 0], "kind": "suspect", "gbs": 0.9, "rtt_ms": 0.1}], speed)
    record["speed_again"] = {str(r): {"matmul_gflops": 40.0, "copy_gbs": 8.0} for r in range(4)}
    (verdict,) = findings(record)
    assert verdict.id == "net.find_bad" and verdict.status == "ok"
    record["speed_again"]["3"] = {"matmul_gflops": 5.0, "copy_gbs": 8.0}
    (slow,) = findings(record)
    assert slow.id == "net.slow_rank" and slow.details["rank"] == 3 and "0.10×" in slow.summary


def test_reference_pairs_when_nothing_is_suspect_go_host_beside_host_or_rank_beside_rank():
    assert reference_pairs([0, 1, 2, 3, 4], {0: "a", 1: "a", 2: "b", 3: "c", 4: "d"}) == [
        (0, 2, "reference"),
        (3, 4, "reference"),
    ]
    assert reference_pairs([0, 1, 2], {0: "a", 1: "a", 2: "a"}) == [(0, 1, "reference")]


def test_the_text_matrix_marks_the_slow_pair_at_its_best_timing():
    pairs = [
        {"ranks": [2, 0], "kind": "suspect", "gbs": 0.012, "rtt_ms": 2.0},
        {"ranks": [3, 1], "kind": "suspect", "gbs": 0.9, "rtt_ms": 0.1},
    ]
    again = [dict(pairs[0], gbs=0.014), dict(pairs[1], gbs=0.7)]
    record = _record(pairs, again=again)
    found = findings(record)
    assert named_slow(found) == {(0, 2): "h2"}
    text = matrix_text(pair_matrix(record), named_slow(found))
    lines = text.splitlines()
    assert lines[2].split() == ["rank", "0", "(h0)", "·", "·", "14.0!", "·"]
    assert lines[4].split() == ["rank", "2", "(h2)", "14.0!", "·", "·", "·"]
    assert lines[3].split()[-1] == "900.0"  # the pair of ranks 1 and 3 at its better timing
    nine = {"hosts": {str(r): f"h{r}" for r in range(9)}, "rounds": [{"what": "pairs", "pairs": [
        {"ranks": [r, r + 1], "kind": "reference", "gbs": 1.0, "rtt_ms": 0.1} for r in range(0, 8, 2)
    ] + [{"ranks": [7, 8], "kind": "reference", "gbs": 1.0, "rtt_ms": 0.1}]}]}  # fmt: skip
    assert matrix_text(pair_matrix(nine)) is None  # nine ranks: the picture and --json only


def test_without_matplotlib_the_picture_is_one_line_and_nothing_breaks(tmp_path, monkeypatch):
    pairs = [{"ranks": [2, 0], "kind": "reference", "gbs": 0.5, "rtt_ms": 0.1}]
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    matrix, said = picture_finding(_record(pairs), tmp_path / "p.png")
    assert (
        said.status == "skip" and "matplotlib is not installed" in said.summary and "\n" not in said.summary
    )
    assert matrix["pairs"] and not (tmp_path / "p.png").exists()


def test_a_picture_that_cannot_be_written_is_a_warning_naming_the_path(tmp_path):
    pairs = [{"ranks": [2, 0], "kind": "reference", "gbs": 0.5, "rtt_ms": 0.1}]
    where = tmp_path / "gone" / "p.png"
    _, said = picture_finding(_record(pairs), where)
    assert said.status == "warn" and str(where) in said.summary and "--pairs-plot" in said.fix


def test_no_measurements_is_said_plainly():
    (skipped,) = findings({})
    assert skipped.status == "skip" and "smoke test failed first" in skipped.summary


def run_on_hosts(hosts, limit: float = RUN_LIMIT_S, folder: Path | None = None) -> list[tuple[int, str, str]]:
    """``torchdoctor net --find-bad`` on every host at once, in ``folder`` (where rank 0's host draws the pair
    picture); (exit status, stdout, stderr) per host."""
    first = hosts[0]
    processes = []
    for namespace, name, _, inside, _ in hosts:
        net = [
            sys.executable,
            "-m",
            "torchdoctor",
            "net",
            "--json",
            "--find-bad",
            "--timeout=60",
            "--nnodes=4",
        ]
        net += ["--nproc-per-node=1", f"--rdzv-endpoint={first[1]}:{PORT}", f"--rdzv-id=fb-{first[0]}"]
        command = [
            "ip",
            "netns",
            "exec",
            namespace,
            "unshare",
            "--uts",
            "sh",
            "-c",
            'hostname "$0"; exec "$@"',
            name,
        ]
        env = {**os.environ, "GLOO_SOCKET_IFNAME": inside, "COLUMNS": "200"}
        processes.append(
            subprocess.Popen(
                [*command, *net],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                start_new_session=True,
                cwd=folder,
            )
        )
    outputs = []
    try:
        for process in processes:
            out, err = process.communicate(timeout=limit)
            outputs.append((process.returncode, out, err))
    except subprocess.TimeoutExpired:
        pytest.fail(f"a host's run did not end within {limit}s")
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    return outputs


# -- four hosts on a bridge, one link throttled ------------------------------------------------------------

PORT = 29460


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)


def _must(result: subprocess.CompletedProcess) -> None:
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(result.args)}`: {result.stderr.strip()}")


@pytest.fixture
def four_hosts_one_slow():
    """Four namespace hosts on one bridge (in a namespace of its own); host 2's link is throttled to 100 mbit
    both ways (`tc tbf`), the others run at the veth's speed."""
    if os.geteuid() != 0:
        pytest.skip(f"network namespaces need root (ip netns add); running as uid {os.geteuid()}")
    for tool in ("ip", "unshare", "tc"):
        if shutil.which(tool) is None:
            pytest.skip(f"no `{tool}` command to make network namespaces with")
    try:
        hosts, made = make_hosts(secrets.token_hex(2), slow=2)
    except (RuntimeError, OSError) as error:
        pytest.skip(f"cannot make network namespaces here: {error}")
    yield hosts
    _remove(made)


def make_hosts(tag: str, slow: int | None) -> tuple[list[tuple[str, str, str, str, str]], list[str]]:
    """(namespace, host name, address, its interface, the bridge's end) per host, and the namespaces made."""
    switch = f"findbad-{tag}-sw"  # every name starts findbad: other tests may make namespaces beside these
    hosts = [
        (
            f"findbad-{tag}-{i}",
            f"fbhost-{tag}-{i}",
            f"10.233.7.{i + 1}",
            f"findbad{tag}h{i}",
            f"findbad{tag}s{i}",
        )
        for i in range(4)
    ]
    made: list[str] = []
    try:
        _must(_ip("netns", "add", switch))
        made.append(switch)
        _must(_ip("-n", switch, "link", "add", "br0", "type", "bridge"))
        _must(_ip("-n", switch, "link", "set", "br0", "up"))
        for namespace, _, address, inside, outside in hosts:
            _must(_ip("netns", "add", namespace))
            made.append(namespace)
            etc = Path("/etc/netns") / namespace
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "hosts").write_text("127.0.0.1 localhost\n" + "".join(f"{h[2]} {h[1]}\n" for h in hosts))
            _must(_ip("link", "add", inside, "type", "veth", "peer", "name", outside))
            _must(_ip("link", "set", inside, "netns", namespace))
            _must(_ip("link", "set", outside, "netns", switch))
            _must(_ip("-n", switch, "link", "set", outside, "master", "br0"))
            _must(_ip("-n", switch, "link", "set", outside, "up"))
            _must(_ip("-n", namespace, "addr", "add", f"{address}/24", "dev", inside))
            _must(_ip("-n", namespace, "link", "set", inside, "up"))
            _must(_ip("-n", namespace, "link", "set", "lo", "up"))
        throttled = [] if slow is None else [hosts[slow]]
        for namespace, device in [(h[0], h[3]) for h in throttled] + [(switch, h[4]) for h in throttled]:
            tbf = [
                "tc",
                "qdisc",
                "add",
                "dev",
                device,
                "root",
                "tbf",
                "rate",
                "100mbit",
                "burst",
                "32kbit",
                "latency",
                "400ms",
            ]
            _must(
                subprocess.run(
                    ["ip", "netns", "exec", namespace, *tbf], capture_output=True, text=True, timeout=20
                )
            )
    except (RuntimeError, OSError):
        _remove(made)
        raise
    return hosts, made


def _remove(namespaces: list[str]) -> None:
    for namespace in namespaces:
        _ip("netns", "del", namespace)
        shutil.rmtree(Path("/etc/netns") / namespace, ignore_errors=True)


@pytest.mark.timeout(RUN_LIMIT_S + 60)
def test_a_throttled_link_among_four_hosts_is_named(four_hosts_one_slow, tmp_path):
    hosts = four_hosts_one_slow
    outputs = run_on_hosts(hosts, folder=tmp_path)
    reports = [json.loads(out) for _, out, _ in outputs if out.strip()]
    verdicts = [
        f
        for report in reports
        for f in report["findings"]
        if f["id"].startswith("net.") and f["id"] != "net.smoke"
    ]
    slow = [f for f in verdicts if f["id"] == "net.slow_link"]
    assert len(slow) == 1, outputs
    assert slow[0]["details"]["host"] == hosts[2][1] and slow[0]["details"]["interface"] == hosts[2][3]
    assert slow[0]["details"]["rounds"] <= 5  # the speeds, ceil(log2 4) halves and pairs, and the pairs again
    (picture,) = [f for f in verdicts if f["id"] == "net.find_bad_picture"]
    assert (tmp_path / "find-bad-pairs.png").read_bytes()[:8] == PNG_MAGIC
    pair = tuple(sorted((slow[0]["details"]["rank"], slow[0]["details"]["partner"])))
    text = matrix_text(picture["details"]["pair_matrix"], {pair: hosts[2][1]})
    row = next(line for line in text.splitlines() if line.startswith(f"rank 2 ({hosts[2][1]})"))
    assert row.count("!") == 1, text  # the slow pair is marked in the matrix, on host 2's row
