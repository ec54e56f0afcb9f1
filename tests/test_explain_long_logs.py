"""`explain` on long logs: real failure lines and real fixture logs buried in megabytes of real healthy output,
read from a file and a pipe (and a folder) — the same verdict from each, at sizes past the 256 KB read line by
line and past the reader's chunk, with a line cut by a chunk's end; and the fast searches the reader uses
against the plain ones they replace.

The healthy output is NCCL's and an all-reduce benchmark's from two complete runs (tests/fixtures/nccl, see its
SOURCES.md), repeated to the size wanted.
"""

from __future__ import annotations

import io
import json
import os
import random
import threading
from pathlib import Path

import pytest

from torchdoctor.explain.collect import any_anchor, literal_tree, places
from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.inputs import HEAD
from torchdoctor.explain.kinds import RECOGNISERS
from torchdoctor.explain.literals import finder
from torchdoctor.explain.reader import _FIRST_ROOM, CHUNK, MAX_LINE, TAIL, TRIGGERS, windows

FIXTURES = Path(__file__).parent / "fixtures"
HEALTHY = b"".join(
    (FIXTURES / "nccl" / name).read_bytes()
    for name in ("multi-node-ib-4x8gpu.log", "single-node-p2p-ipc.log")
)


def healthy(size: int) -> bytes:
    """At least ``size`` bytes of real healthy output, whole lines."""
    return HEALTHY * (size // len(HEALTHY) + 1)


def test_the_healthy_output_holds_no_trigger(tmp_path):
    """Otherwise the tests below would not show that the end of a log is read line by line."""
    assert not any(trigger in HEALTHY for trigger in TRIGGERS)
    assert [f.id for f in explain_bytes(healthy(2 * TAIL), "file", tmp_path)] == ["log.unrecognised"]


def through_a_pipe(data: bytes):
    """``cat log | torchdoctor explain``: findings read from a real pipe that a thread fills."""
    read_end, write_end = os.pipe()

    def fill() -> None:
        with os.fdopen(write_end, "wb") as pipe:
            try:
                pipe.write(data)
            except BrokenPipeError:  # the reader stopped early: the test fails on what it found
                pass

    writer = threading.Thread(target=fill, daemon=True)
    writer.start()
    with os.fdopen(read_end, "rb") as pipe:
        found = explain(["-"], stdin=pipe)
    writer.join(timeout=60)
    assert not writer.is_alive(), "the pipe's writer is still blocked 60 s after explain returned"
    return found


def explain_bytes(data: bytes, how: str, folder: Path):
    """The findings for ``data`` given as a file, a pipe or a folder holding it (written under ``folder``)."""
    if how == "pipe":
        return through_a_pipe(data)
    log = folder / "logs" / "LOG"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(data)
    return explain([str(log.parent if how == "folder" else log)])


def verdict(found, folder: Path) -> list[tuple]:
    """What a user reads, the log's name taken out (``<stdin>`` for a pipe, the path for a file)."""
    name = str(folder / "logs" / "LOG")
    return [(f.id, f.status, f.summary.replace(name, "LOG").replace("<stdin>", "LOG"), f.fix) for f in found]


def same_from_a_file_and_a_pipe(data: bytes, folder: Path) -> list[tuple]:
    """The verdict from a file, asserted to be the verdict from a pipe too.

    A pipe's reads come back short and its end is not known ahead, so its chunks are cut and joined otherwise
    than a file's. A folder is not read again here: `inputs.logs` opens each file of a folder as it opens a file
    named alone (`open_path`, then `as_log`), and `Collector.read` reads either stream alike, so what a long log
    makes of the reader is the file's; the folder is read beside the file and the pipe where a line is cut by a
    chunk's end (test_a_death_cut_by_a_chunks_end_is_found_from_a_file_a_pipe_and_a_folder), and its own
    choices (which files, their ranks, a binary file left out) are test_explain_inputs.py's."""
    from_file = verdict(explain_bytes(data, "file", folder), folder)
    assert verdict(explain_bytes(data, "pipe", folder), folder) == from_file
    return from_file


# -- the end of a log (issue 19: a pipe lost it past 256 KB) ---------------------------------------------

ENDS = {
    # torchrun's line for a worker the kernel killed (ERROR in capitals: no trigger holds it)
    "exitcode -9": (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 4711) "
        "of binary: /usr/bin/python3",
        "log.worker_killed",
    ),
    "SIGKILL": ("  traceback : Signal 9 (SIGKILL) received by PID 4711", "log.worker_killed"),
    "nvcc fatal": ("nvcc fatal   : Unsupported gpu architecture 'compute_90'", "log.cuda_build"),
}
SIZES = {"past 256 KB": TAIL + 40_000, "past a chunk": HEAD + CHUNK + 100_000}


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("end", sorted(ENDS))
def test_the_last_line_of_a_long_log_is_found_from_a_file_and_a_pipe(tmp_path, end, size):
    line, kind = ENDS[end]
    data = healthy(SIZES[size])[: SIZES[size]]
    data = data[: data.rfind(b"\n") + 1] + line.encode() + b"\n"
    assert len(data) > SIZES[size] - len(HEALTHY)
    found = same_from_a_file_and_a_pipe(data, tmp_path)
    assert found[0][0] == kind, found


# -- a death in the middle, wherever a chunk ends (item 5) ---------------------------------------------

DEATHS = {
    "Segmentation fault": ("Segmentation fault (core dumped)", "log.worker_crash"),
    "Bus error": ("Bus error (core dumped)", "log.worker_crash"),
    "Killed": (
        "/var/spool/slurmd/job42/slurm_script: line 9: 4711 Killed  python train.py",
        "log.worker_killed",
    ),
    "exitcode -9": (
        "E1124 20:21:45.417000 9070 torch/distributed/elastic/multiprocessing/api.py:1002] failed "
        "(exitcode: -9) local_rank: 1 (pid: 9319) of binary: /usr/bin/python",
        "log.worker_killed",
    ),
    # lines no "Error" is on, that can be alone in the middle of a long log (issue 19, round 3): nvcc's own
    # line as it prints it ("%s fatal   : %s"), a JIT build printing on and a restarted job writing after it
    "nvcc fatal": ("nvcc fatal   : Unsupported gpu architecture 'compute_90'", "log.cuda_build"),
    # the capitalised value, as the torchvision reference scripts print it and as json.dumps writes a float NaN
    "Loss is NaN": ("Loss is NaN, stopping training", "log.nan_overflow"),
    "JSON NaN": (
        json.dumps({"loss": float("nan"), "learning_rate": 1.9e-05, "step": 1200}),
        "log.nan_overflow",
    ),
}
# where the line starts, against where a chunk of the reader ends: the head is read first, then CHUNKs
PLACES = {
    "cut by the head's end": HEAD - 10,
    "cut by a chunk's end": HEAD + CHUNK - 10,
    "right after a chunk's end": HEAD + CHUNK,
}


def death_at(death: str, place: str) -> bytes:
    """Healthy output with ``death``'s line starting at ``place``, and more than `TAIL` bytes after it."""
    before = healthy(PLACES[place])[: PLACES[place]]
    data = before + DEATHS[death][0].encode() + b"\n" + healthy(2 * TAIL)
    assert len(data) - PLACES[place] > TAIL and PLACES[place] > TAIL  # far from both ends
    return data


@pytest.fixture(scope="module")
def from_a_file(tmp_path_factory):
    """The findings for a death's log at a place, read from a file once for the module (two tests read two of
    them: 10 MB each): ``from_a_file(death, place)`` is (the log's folder, the findings)."""
    found: dict[tuple[str, str], tuple[Path, list]] = {}

    def read(death: str, place: str) -> tuple[Path, list]:
        if (death, place) not in found:
            folder = tmp_path_factory.mktemp("death")
            found[death, place] = folder, explain_bytes(death_at(death, place), "file", folder)
        return found[death, place]

    return read


# a file, a pipe and a folder share one reader of chunks: two deaths, a line with a trigger and one found by
# its value, show each input cuts and joins chunks alike (every death is read at every place from a file below)
@pytest.mark.parametrize("death", ["Segmentation fault", "JSON NaN"])
def test_a_death_cut_by_a_chunks_end_is_found_from_a_file_a_pipe_and_a_folder(tmp_path, death, from_a_file):
    data, (folder, in_a_file) = (
        death_at(death, "cut by a chunk's end"),
        from_a_file(death, "cut by a chunk's end"),
    )
    from_file = verdict(in_a_file, folder)
    assert verdict(explain_bytes(data, "pipe", tmp_path), tmp_path) == from_file
    assert verdict(explain_bytes(data, "folder", tmp_path), tmp_path) == from_file
    assert from_file[0][0] == DEATHS[death][1], from_file


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("death", sorted(DEATHS))
def test_a_death_in_the_middle_of_a_long_log_is_found_wherever_a_chunk_ends(death, place, from_a_file):
    """The line is found, and numbered right: the lines of every chunk before it are counted."""
    data = death_at(death, place)
    tmp_path, found = from_a_file(death, place)
    assert found[0].id == DEATHS[death][1], [(f.id, f.summary) for f in found]
    line_number = data.count(b"\n", 0, PLACES[place]) + 1
    assert found[0].details["where"][0] == f"{tmp_path / 'logs' / 'LOG'}:{line_number}", found[0].details


# -- real failure logs padded to megabytes: same verdict, same kinds as the log alone --------------------

PADDED = (
    "002_nccl_watchdog_timeout.txt",
    "032_cuda_oom.txt",
    "037_dataloader_shm.txt",
    "062_duplicate_gpu.txt",
)
# the out-of-memory line is found by its "OutOfMemoryError", with no trigger of its own
IN_THE_MIDDLE = ("002_nccl_watchdog_timeout.txt", "032_cuda_oom.txt", "037_dataloader_shm.txt")


@pytest.mark.parametrize("name", PADDED)
def test_a_real_failure_after_a_megabyte_of_healthy_output_reads_the_same_both_ways(tmp_path, name):
    """The log at the end of 1.2 MB of healthy output: the same kinds as the log alone, from either input."""
    alone = explain([str(FIXTURES / "logs" / name)])
    data = healthy(1_200_000) + (FIXTURES / "logs" / name).read_bytes()
    assert len(data) > 1_000_000
    found = same_from_a_file_and_a_pipe(data, tmp_path)
    assert [f[0] for f in found] == [f.id for f in alone]


@pytest.mark.parametrize("name", IN_THE_MIDDLE)
def test_a_real_failure_in_the_middle_of_healthy_output_reads_the_same_both_ways(tmp_path, name):
    """The log across a chunk's end with megabytes of healthy output on both sides: the kind it leads with is
    still found from either input, far from both ends where only lines with a trigger are read."""
    alone = explain([str(FIXTURES / "logs" / name)])
    data = healthy(HEAD + CHUNK - 2000) + (FIXTURES / "logs" / name).read_bytes() + healthy(2 * TAIL)
    found = same_from_a_file_and_a_pipe(data, tmp_path)
    assert found[0][0] == alone[0].id, found


def test_a_sigkill_summary_in_the_middle_is_found_by_the_exitcode_line_above_it(tmp_path):
    """torchrun's "traceback : Signal 9 (SIGKILL)" holds no trigger: it is read among the lines after
    "exitcode : -9" (a real paste, train/110 of the corpus), megabytes from both ends."""
    paste = (FIXTURES / "corpus" / "train" / "110.txt").read_bytes()
    assert not any(trigger in paste.splitlines()[-1] for trigger in TRIGGERS)
    data = healthy(HEAD + CHUNK - 2000) + paste + b"\n" + healthy(2 * TAIL)
    found = same_from_a_file_and_a_pipe(data, tmp_path)
    assert found[0][0] == "log.worker_killed", found


# -- the fast searches give what the plain ones give --------------------------------------------------


def test_memmem_finds_what_bytes_find_finds():
    rng = random.Random(19)
    for _ in range(3000):
        buf = bytes(rng.choice(b"rorEx\nnan ") for _ in range(rng.randrange(0, 80)))
        literal = bytes(rng.choice(b"rorEx\nna") for _ in range(rng.randrange(1, 5)))
        start, end = rng.randrange(0, len(buf) + 2), rng.randrange(0, len(buf) + 3)
        expected = buf.find(literal, start, end)
        assert finder(buf)(literal, start, end) == expected, (buf, literal, start, end)
        assert finder(bytearray(buf))(literal, start, end) == expected, (buf, literal, start, end)
    big = healthy(3 * 2**20) + b"RuntimeError: boom\n"
    for trigger in TRIGGERS:
        assert finder(big)(trigger, 0, len(big)) == big.find(trigger), trigger


def test_the_tree_of_anchors_and_the_index_by_first_letters_find_what_the_list_of_anchors_finds():
    anchors = sorted({a for r in RECOGNISERS for a in r.anchors})
    tree = any_anchor(RECOGNISERS)
    starts = {a: {place for place, r in enumerate(RECOGNISERS) if a in r.anchors} for a in anchors}
    lines = [line for line in HEALTHY.decode().splitlines()[:300]]
    # the pre-filter passes over a healthy run's lines (it looks for the anchors' beginnings only)
    assert not [line for line in lines if tree.search(line)]
    rng = random.Random(19)
    for anchor in anchors:
        lines.append(f"{rng.choice(lines)} {anchor}{rng.choice(['', ' x', ':'])}")
        lines.append(anchor[:-1])  # an anchor cut short is not an anchor (unless a shorter one is in it)
    # the list's answer, every anchor asked of every line, asked of the anchors whose first two letters the line
    # holds (every anchor in it is among them; a regular expression of the whole list took 7 s of this test)
    by_pair: dict[str, list[str]] = {}
    for anchor in anchors:
        by_pair.setdefault(anchor[:2], []).append(anchor)
    for line in lines:
        pairs = {line[i : i + 2] for i in range(len(line) - 1)} | set(line)
        found = [anchor for pair in pairs.intersection(by_pair) for anchor in by_pair[pair] if anchor in line]
        # every line with an anchor passes the pre-filter (a cut anchor may pass too: `places` finds none in it)
        assert tree.search(line) or not found, line
        # the recognisers a line with anchors runs: those with an anchor in it, found by the anchors' beginnings
        assert places(line) == {place for anchor in found for place in starts[anchor]}, line
    assert literal_tree(["ab", "abc"]).search("xabx") and not literal_tree(["abc"]).search("ab")


class ReadOnly:
    """A stream with ``read`` and nothing else (no ``readinto``), as some wrappers are."""

    def __init__(self, data: bytes) -> None:
        self._stream = io.BytesIO(data)

    def read(self, size: int = -1) -> bytes:
        return self._stream.read(size)


def test_a_stream_that_can_only_read_gives_the_same_windows_and_a_long_held_back_end_fits():
    """The reader fills one buffer in place where the stream can, reads and copies where it cannot; the buffer
    starts small and grows to what a chunk and a long end held back need."""
    # the end held back (every_line_last) is four chunks long: read line by line, as the whole of it is, it is
    # the test's cost, so it is no longer than that
    held_back = 4 * 2**18
    data = healthy(2**20) + b"RuntimeError: boom\n" + healthy(held_back - 2**18) + b"Killed\n"
    options = {"chunk_size": 2**18, "every_line_to": TAIL, "every_line_last": held_back}
    assert len(data) > 8 * _FIRST_ROOM
    into = [(w.number, w.line, w.following) for w in windows(io.BytesIO(data), **options)]
    read = [(w.number, w.line, w.following) for w in windows(ReadOnly(data), **options)]
    assert into == read
    numbers = {line: number for number, line, _ in into if line in ("RuntimeError: boom", "Killed")}
    assert numbers == {
        "RuntimeError: boom": data[: data.index(b"RuntimeError")].count(b"\n") + 1,
        "Killed": data.count(b"\n"),
    }


def test_a_long_line_dense_with_triggers_gives_a_window_per_cut_not_per_trigger():
    """One 4 MB line (no newline) with "Error" every 2 KB: each window reads up to MAX_LINE of the line, so
    the triggers inside it start no window of their own (there were 2,000 windows of 9 x 64 KB here, and
    gigabytes of memory for a 20 MB log)."""
    data = (b"x" * 2000 + b"RuntimeError ") * 2000
    found = list(windows(io.BytesIO(data), every_line_to=0, every_line_last=0))
    assert 0 < len(found) <= 2 * len(data) // MAX_LINE + 2, len(found)
    assert all("RuntimeError" in w.line for w in found)


def test_a_long_utf16_log_with_letters_that_grow_in_utf8_reads_as_its_utf8_twin(tmp_path):
    """PowerShell's ``>`` writes UTF-16: "é" and "训" take 2 bytes there and 2 and 3 in UTF-8, so a read of N
    bytes decodes to more than N; the reader's buffer gets no more than it asked for, and nothing is lost."""
    text = "é训" * 40 + "\n"  # as many letters with a NUL in UTF-16 as without: still read as UTF-16
    text = text * 100_000 + "Killed\n"
    assert len(text[:4096].encode("utf-8")) > len(text[:4096].encode("utf-16-le"))
    as_utf8, as_utf16 = tmp_path / "utf8.log", tmp_path / "utf16.log"
    as_utf8.write_bytes(text.encode())
    as_utf16.write_bytes(text.encode("utf-16"))
    assert len(text.encode("utf-16")) > HEAD + CHUNK + TAIL
    found = [(f.id, f.summary) for f in explain([str(as_utf16)])]
    assert found[0][0] == "log.worker_killed", found
    assert found == [
        (i, s.replace(str(as_utf8), str(as_utf16)))
        for i, s in ((f.id, f.summary) for f in explain([str(as_utf8)]))
    ]
