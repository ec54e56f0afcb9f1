"""The straggler watch's device time on CUDA (`torchdoctor.stragglers.device`): what the events' times become
(the device's surely busy time, collectives left out), how rows that carry it are judged, and that on CPU no
event is made. The events themselves are read on a GPU (benchmarks/gpu/record.sh, phase f)."""

import random

import pytest
import torch

from torchdoctor.stragglers.device import DeviceClock, busy_seconds, carried_lag
from torchdoctor.stragglers.record import FIELDS, StepRecord
from torchdoctor.stragglers.summary import findings, per_rank, summary_lines
from torchdoctor.stragglers.verdict import judge_stretch
from torchdoctor.stragglers.window import judge_window, on_device


def test_a_device_that_runs_behind_the_host_worked_all_the_time_between_two_points():
    # noted at 0 and at 1 ms on the host; the device reached the second 50 ms after the first: it was 49 ms
    # behind the host there, so it worked those 49 ms at least
    busy, lag = busy_seconds([(0.0, 0.0, ""), (0.001, 0.050, "")])
    assert busy == pytest.approx(0.049) and lag == pytest.approx(0.049)


def test_a_device_left_idle_by_a_slow_host_counts_only_the_work_queued():
    # the host worked 30 ms, then queued 20 ms of kernels by 31 ms: the device, idle meanwhile, reached the end
    # at 51 ms: 20 ms of work, not the 51 between the events
    busy, _ = busy_seconds([(0.0, 0.0, ""), (0.031, 0.051, "")])
    assert busy == pytest.approx(0.020)


def test_the_time_inside_a_collective_is_not_device_work():
    marks = [(0.0, 0.0, ""), (0.001, 0.010, "b"), (0.020, 0.040, "a"), (0.021, 0.050, "")]
    busy, _ = busy_seconds(marks)
    assert busy == pytest.approx(0.009 + 0.010)  # before it (9 ms behind) and after it (10 ms of kernels)


def test_the_previous_steps_lag_carries_over_to_the_next_step():
    # the step's own marks say the device may have been idle at its start; the previous step's end (the same
    # event) was 5 ms behind the host: the first 5 ms after it were work
    marks = [(0.0, 0.0, ""), (0.010, 0.010, "")]
    assert busy_seconds(marks)[0] == pytest.approx(0.0)
    assert busy_seconds(marks, start_lag=0.005)[0] == pytest.approx(0.005)


def test_on_cpu_no_event_is_made_and_the_rows_say_the_device_time_is_unknown(record, monkeypatch):
    def no_event(*args, **kwargs):
        raise AssertionError("a CUDA event was made on CPU")

    monkeypatch.setattr(torch.cuda, "Event", no_event)
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(5):
        model(torch.randn(2, 4)).sum().backward()
        optimizer.step()
    assert record.device is None and DeviceClock.on(model.parameters()) is None
    assert record.rows and all(len(row) == len(FIELDS) and row[-1] is None for row in record.rows)
    assert FIELDS[-1] == "device"


def test_the_rows_left_at_the_end_are_published_a_window_at_a_time():
    record = StepRecord(window=10)
    published = []
    record.publish = lambda number, payload: published.append(
        (number, payload["first_step"], payload["rows"])
    )
    record.rows = [[0.01 * n, 0.0, 0.0, 0.0, [], None, None, None, None] for n in range(25)]
    record.steps = 25
    record.flush()
    assert [(n, first, len(rows)) for n, first, rows in published] == [(0, 0, 10), (1, 10, 10), (2, 20, 5)]
    assert published[2][2][0][0] == pytest.approx(0.2) and not record.rows


def window(
    number,
    slow=None,
    late=0.01,
    device_extra=0.0,
    ranks=3,
    steps=10,
    known=True,
    cpu_device=False,
    unknown_every=0,
    spent="cpu",
):
    """Window ``number`` as CUDA ranks publish it: each rank's own work 35 ms (±1 ms), 20 ms of it device time
    (±0.3 ms); ``slow`` reaches the step's collective ``late`` later, spending it on the CPU (its training
    thread's CPU time: a host that works more, or spins while it waits for its device), its device time
    ``device_extra`` longer; the others wait for it. ``known=False``: rank 0's device time unknown on every
    step (None); ``cpu_device``: no rank's rows carry the field (as on CPU, or recorded before it);
    ``unknown_every``: every rank's device time unknown on every such step (events given up on); ``spent``: where
    the slow rank's ``late`` goes instead (``"asleep"``: its thread asleep or blocked; ``"data"``: in next())."""
    rng = random.Random(number)
    published = {}
    own = {(r, s): 0.035 + rng.uniform(-0.001, 0.001) for r in range(ranks) for s in range(steps)}
    gpu = {(r, s): 0.020 + rng.uniform(-0.0003, 0.0003) for r in range(ranks) for s in range(steps)}
    for rank in range(ranks):
        rows = []
        for step in range(steps):
            mine = {r: own[r, step] + (late if r == slow else 0.0) for r in range(ranks)}
            latest = max(mine.values())
            t = 1000.0 + (number * steps + step) * 0.1
            device = gpu[rank, step] + (device_extra if rank == slow else 0.0)
            elsewhere = late if rank == slow and spent != "cpu" else 0.0
            data = 0.002 + (elsewhere if spent == "data" else 0.0)
            row = [latest + 0.005, data, 0.005 + latest - mine[rank], mine[rank] - 0.003 - elsewhere,
                   [["world", t + mine[rank]]], 0.001, None, 1]  # fmt: skip
            if not cpu_device:
                unknown = (rank == 0 and not known) or (unknown_every and step % unknown_every == 0)
                row.append(None if unknown else device)
            rows.append(row)
        published[rank] = {"host": f"h{rank}", "rows": rows, "first_step": number * steps}
    return published


def stretch(**kwargs):
    return [judge_window(n, window(n, **kwargs)) for n in range(3, 7)]


def test_a_rank_whose_device_works_longer_is_named_device_from_its_gpu_time():
    rank, _, cause, text, *_ = judge_stretch(stretch(slow=1, late=0.01, device_extra=0.01))
    assert (rank, cause) == (1, "device")
    assert text.startswith("device (GPU time 30 ms vs median 20 ms per step, from CUDA events")


def test_on_cuda_more_cpu_time_with_the_device_no_busier_is_the_host():
    rank, _, cause, text, *_ = judge_stretch(stretch(slow=1, late=0.01))
    assert (rank, cause) == (1, "host")
    assert text.startswith("host (the training thread's CPU time 42 ms vs median 32 ms, its GPU time 20 ms")


def test_rows_without_a_device_time_are_judged_as_before():
    windows = stretch(slow=1, late=0.01, cpu_device=True)
    assert not any(v.on_device or v.on_cuda for v in windows)
    rank, _, cause, text, *_ = judge_stretch(windows)
    assert (rank, cause) == (1, "device") and text.startswith("device (compute 42 ms vs median 32 ms")


def test_on_cuda_without_every_ranks_device_time_the_cpu_time_names_nobody():
    # rank 0's device time unknown: more CPU time on rank 1 may be its host spinning for a slower GPU, or more
    # CPU work; nothing tells which
    windows = stretch(slow=1, late=0.01, known=False)
    assert all(v.on_cuda and not v.on_device for v in windows)
    assert judge_stretch(windows).rank is None


def test_a_few_steps_whose_device_time_is_unknown_take_the_ranks_median():
    windows = stretch(slow=1, late=0.01, device_extra=0.01, unknown_every=5)  # 2 steps in 10 unknown
    assert all(v.on_device for v in windows)
    rank, _, cause, *_ = judge_stretch(windows)
    assert (rank, cause) == (1, "device")
    assert not any(v.on_device for v in stretch(slow=1, unknown_every=3))  # 4 in 10: not enough


def test_the_end_summary_and_the_json_say_each_ranks_device_time_where_known():
    windows = stretch(slow=1, late=0.01, device_extra=0.01)
    assert on_device(window(3, slow=1))
    ranks = per_rank(windows)
    assert ranks[1]["device"] == pytest.approx(30, abs=0.5) and ranks[0]["device"] == pytest.approx(
        20, abs=0.5
    )
    assert any(
        "compute 42.95 (device 29.99, from CUDA events)" in line for line in summary_lines(windows, [])
    )
    rank1 = next(f for f in findings(windows, []) if f.id == "dist.straggler.rank1")  # --json
    assert rank1.details["device"] == ranks[1]["device"] and "compute 42.95 (device 29.99)" in rank1.summary
    assert "device" not in per_rank(stretch(slow=1, cpu_device=True))[0]


def test_the_step_hook_asks_once_whether_the_training_runs_on_cuda(record):
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
    assert record._device_asked and record.device is None


def stream(ops, host=0.0, free=0.0):
    """One CUDA stream driven by a host, as a list of (op, seconds): ``cpu`` host work; ``kernel`` a kernel queued
    (10 µs of the host's time to launch; the stream runs it once free); ``peer`` the stream waiting inside a
    collective for a peer; ``sync`` the host waiting for the stream (``loss.item()``); ``mark`` an event (kind in
    place of seconds). Returns the marks as `busy_seconds` takes them (from the first: host, device, kind), the
    first mark's true lag, and the seconds the stream truly worked between the first mark and the last outside the
    collectives."""
    marks, work = [], []
    for op, value in ops:
        if op == "cpu":
            host += value
        elif op in ("kernel", "peer"):
            host += 1e-5
            start = max(free, host)
            free = start + value
            if op == "kernel":
                work.append((start, free))
        elif op == "sync":
            host = max(host, free)
        else:
            marks.append((host, max(free, host), value))
    (h0, d0, _), dn = marks[0], marks[-1][1]
    busy = sum(max(0.0, min(end, dn) - max(start, d0)) for start, end in work)
    return [(h - h0, d - d0, kind) for h, d, kind in marks], d0 - h0, busy


def test_the_device_time_is_a_lower_bound_of_the_streams_work_on_any_timeline():
    rng = random.Random(44)
    for _ in range(300):
        ops = [("mark", "")]
        for _ in range(rng.randrange(1, 30)):
            op = rng.choice(("cpu", "kernel", "kernel", "sync", "collective", "mark"))
            if op == "collective":
                ops += [("mark", "b"), ("peer", rng.uniform(0, 0.01)), ("mark", "a")]
            else:
                ops.append((op, "" if op == "mark" else rng.uniform(0, 0.005)))
        ops.append(("mark", ""))
        marks, lag, busy = stream(ops, free=rng.choice((0.0, rng.uniform(0, 0.05))))
        assert busy_seconds(marks, lag)[0] <= busy + 1e-9  # the first mark's lag known
        assert busy_seconds(marks)[0] <= busy + 1e-9  # or not


def test_concrete_timelines_gpu_bound_host_bound_synced_or_never():
    kernels = [("kernel", 0.002)] * 10  # 20 ms of forward and backward, queued in 100 µs
    # GPU-bound, loss.item() each step (after the optimizer step, which starts the step): the device idle after
    # it, the forward and backward counted but what ran while the host was still queuing (100 µs)
    marks, lag, busy = stream([("mark", ""), ("kernel", 0.001), ("sync", 0), *kernels, ("mark", "")])
    assert busy == pytest.approx(0.021) and busy_seconds(marks, lag)[0] == pytest.approx(
        0.020 - 1e-4, abs=2e-5
    )
    # host-bound: 30 ms of Python first (the device idle), the same kernels: the same device time
    marks, lag, _ = stream([("mark", ""), ("sync", 0), ("cpu", 0.030), *kernels, ("mark", "")])
    assert busy_seconds(marks, lag)[0] == pytest.approx(0.020 - 1e-4, abs=2e-5)
    # never synced, 100 ms behind the host, which queues at the device's pace (its launch queue full): every
    # second of the step is work where the lag is known...
    paced = [("cpu", 0.00199), ("kernel", 0.002)] * 10
    marks, lag, busy = stream([("mark", ""), *paced, ("mark", "")], free=0.1)
    assert lag == pytest.approx(0.1) and busy_seconds(marks, lag)[0] == pytest.approx(busy)
    assert busy_seconds(marks)[0] == pytest.approx(0.0)  # ...and none where it is not (a lower bound)
    # a healthy rank waiting 40 ms in a collective for its peer: not its work
    marks, lag, busy = stream(
        [("mark", ""), *kernels, ("mark", "b"), ("peer", 0.040), ("mark", "a"), ("mark", "")]
    )
    assert busy_seconds(marks, lag)[0] == pytest.approx(0.020 - 1e-4, abs=2e-5)


def test_a_lag_read_steps_before_is_carried_through_the_device_time_not_taken_as_it_was():
    # a step read with its end 30 ms behind the host; the next ones given up on (or captured into a graph);
    # meanwhile the device caught up (a loss.item()): the next step read starts 100 ms later on the host and 75
    # ms later on the device, 5 ms behind
    start = carried_lag(0.030, 0.100, 0.075)
    assert start == pytest.approx(0.005)
    # that step: 40 ms of Python, then 6 ms of kernels queued at its end: 6 ms of work, not the 31 ms the stale
    # lag would count (the device idle while the host worked)
    marks = [(0.0, 0.0, ""), (0.040, 0.041, "")]
    assert busy_seconds(marks, start)[0] == pytest.approx(0.006)
    assert busy_seconds(marks, 0.030)[0] == pytest.approx(0.031)
    assert carried_lag(0.030, 0.100, 0.060) == 0.0  # never below nothing


def test_ddps_buffer_broadcast_is_wrapped_and_on_cpu_changes_nothing(one_rank, record):
    from torch.nn.parallel import DistributedDataParallel

    model = DistributedDataParallel(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)))
    assert DistributedDataParallel._sync_buffers.__wrapped__ is not None  # bracketed by events on CUDA
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(4):
        model(torch.randn(8, 4)).sum().backward()
        optimizer.step()
    assert record.device is None and len(record.rows) == 3 and all(row[-1] is None for row in record.rows)


def test_on_cuda_without_every_ranks_device_time_the_time_asleep_names_nobody_either():
    # asleep 10 ms a step longer: a loop that sleeps, or a host asleep in a synchronisation for a slower GPU
    windows = stretch(slow=1, late=0.01, spent="asleep", known=False)
    assert judge_stretch(windows).rank is None
    rank, _, cause, *_ = judge_stretch(
        stretch(slow=1, late=0.01, spent="asleep")
    )  # the GPU no busier: the host
    assert (rank, cause) == (1, "host")
    rank, _, cause, *_ = judge_stretch(stretch(slow=1, late=0.01, spent="asleep", device_extra=0.01))
    assert (rank, cause) == (1, "device")
    rank, _, cause, *_ = judge_stretch(stretch(slow=1, late=0.01, spent="asleep", cpu_device=True))
    assert (rank, cause) == (1, "host")  # on CPU as before


def test_a_rank_waiting_far_longer_for_data_than_its_gpu_works_longer_is_named_for_its_input():
    rank, _, cause, *_ = judge_stretch(stretch(slow=1, late=0.01, spent="data", device_extra=0.002))
    assert (rank, cause) == (1, "input")
    rank, _, cause, *_ = judge_stretch(stretch(slow=1, late=0.01, spent="data", device_extra=0.01))
    assert (rank, cause) == (1, "device")


def test_a_gpu_habit_learned_without_the_device_time_is_not_read_as_a_rise_once_it_is_known():
    # rank 1's GPU works 6 ms longer than its peers' by habit; from window 10 its host does 10 ms more CPU work:
    # the host. Where its usual steps lacked rank 0's device time (its part 0 there), that habit would read as a
    # rise (it was named device): then neither the GPU time nor the CPU time is judged, as where it is not known
    from torchdoctor.stragglers.verdict import Tracker

    def lines(known_before):
        tracker, said = Tracker(), []
        for n in range(16):
            slowed = n >= 10
            published = window(
                n, slow=1, late=0.01 if slowed else 0.0, device_extra=0.006, known=slowed or known_before
            )
            said.append(tracker.feed(judge_window(n, published)))
        return [line for line in said if line]

    assert lines(False) == []
    named = lines(True)
    assert named and all("rank 1" in line and ": host (" in line for line in named)
