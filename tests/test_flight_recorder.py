"""Flight-recorder dumps: real dumps written by a real 3-rank gloo job in which rank 1 skips an
all_reduce, the same dumps with a rank's file missing, cut off, or edited for a size or dtype mismatch (gloo
aborts on a real one), NCCL's layout, and pickles that must be refused without running anything."""

import ast
import os
import pickle
import shutil
from pathlib import Path

import pytest
import torch
from rank_runner import run_ranks

from torchdoctor.explain import safe_pickle
from torchdoctor.explain.flight_recorder.findings import explain_dumps
from torchdoctor.explain.flight_recorder.records import looks_like_dump
from torchdoctor.hang.flight_records import has_flight_recorder
from torchdoctor.hang.source import _taken_by_few, rank_condition
from torchdoctor.rank_list import ranks_text

FIXTURES = Path(__file__).parent / "fixtures" / "flight_recorder"
JOB = FIXTURES / "skip_job.py"
SKIPPED_LINE = next(
    i for i, line in enumerate(JOB.read_text().splitlines(), 1) if "rank 1 never comes" in line
)
CONDITION_LINE = next(i for i, line in enumerate(JOB.read_text().splitlines(), 1) if line == "if rank != 1:")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """Run skip_job.py on 3 ranks with a ring buffer of 6 entries (ranks 0 and 2 record 8, so their oldest
    two are dropped); the folder holding rank{0,1,2}.fr. The ranks start as torchrun starts them, the store
    hosted by this process as torchrun's agent hosts it (`run_ranks`): each rank's dump is its own, and
    torchrun's own process would only add an import of torch (~3 s of CPU)."""
    if not has_flight_recorder(torch._C._distributed_c10d):  # torch 2.4: nothing for the job to dump
        pytest.skip(f"torch {torch.__version__} has no flight recorder to dump (no _dump_fr_trace)")
    out = tmp_path_factory.mktemp("dumps")
    as_a_script = f"import runpy, sys\nsys.argv = [{str(JOB)!r}, {str(out)!r}]\nrunpy.run_path(sys.argv[0], run_name='__main__')\n"
    ranks = run_ranks(
        as_a_script,
        tmp_path_factory.mktemp("ranks"),
        nprocs=3,
        env={"TORCH_FR_BUFFER_SIZE": "6"},
        timeout=300,
    )
    assert [r.returncode for r in ranks] == [0, 0, 0], [r.output[-3000:] for r in ranks]
    return out


def copy(job, tmp_path, ranks=(0, 1, 2)) -> list[Path]:
    paths = []
    for rank in ranks:
        paths.append(tmp_path / f"rank{rank}.fr")
        shutil.copy(job / f"rank{rank}.fr", paths[-1])
    return paths


def edit(path: Path, change) -> None:
    data = pickle.loads(path.read_bytes())  # our own dump, just written by the job: trusted here
    change(data)
    path.write_bytes(pickle.dumps(data, protocol=2))


def by_id(findings):
    return {f.id: f for f in findings}


def test_the_rank_that_skipped_an_all_reduce_is_named_with_the_collective_and_the_line(job):
    findings = explain_dumps(sorted(job.glob("*.fr")))
    first = findings[0]
    assert first.id == "log.rank_divergence" and first.status == "fail"
    assert first.summary.startswith(
        "process group 0 (default_pg): rank 1 never entered all_reduce #7 [4] Float"
    )
    assert f"{JOB}:{SKIPPED_LINE} in <module>" in first.summary
    assert "which ranks 0, 2 entered" in first.summary
    assert "rank 1's last was broadcast #6 [2, 3] Double" in first.summary
    assert f"line {CONDITION_LINE}: `if rank != 1:`:" in first.fix  # the condition on the rank, named
    assert first.details["never_entered"] == [1]
    assert any(f"{JOB}:{SKIPPED_LINE}" in line for line in first.details["stacks"]["ranks 0, 2"])
    # the subgroup of ranks 0 and 2 agrees: no finding of its own
    assert [f.id for f in findings] == ["log.rank_divergence"]


def test_ring_buffers_that_dropped_old_entries_are_compared_where_they_overlap(job):
    record_ids = {
        rank: [e["record_id"] for e in pickle.loads((job / f"rank{rank}.fr").read_bytes())["entries"]]
        for rank in range(3)
    }
    assert record_ids[0][0] == 2 and record_ids[1][0] == 0  # ranks 0 and 2 dropped two, as the job planned
    assert explain_dumps(sorted(job.glob("*.fr")))[0].details["sequence_number"] == 7


def test_a_missing_ranks_file_is_named_and_the_rest_still_speak(job, tmp_path):
    paths = copy(job, tmp_path, ranks=(1, 2))
    found = by_id(explain_dumps(paths))
    assert found["log.missing_dumps"].summary.startswith("no dump from rank 0")
    assert "rank 1 never entered all_reduce #7" in found["log.rank_divergence"].summary

    other = tmp_path / "four_ranks"
    other.mkdir()
    paths = copy(job, other, ranks=(0, 2))
    (other / "rank3.fr").write_bytes((job / "rank1.fr").read_bytes())  # as if from a world of 4
    found = by_id(explain_dumps([*paths, other / "rank3.fr"]))
    assert "no dump from rank 1" in found["log.missing_dumps"].summary
    assert "rank 3 never entered all_reduce #7" in found["log.rank_divergence"].summary
    assert "rank 1: no dump that reaches #7, so unknown" in found["log.rank_divergence"].summary


def test_without_the_culprits_file_the_verdict_says_it_cannot_know(job, tmp_path):
    found = by_id(explain_dumps(copy(job, tmp_path, ranks=(0, 2))))
    assert "log.rank_divergence" not in found  # nobody is blamed on no evidence
    pending = found["log.collective_pending"]
    assert pending.status == "warn" and "ranks 0, 2 entered all_reduce #7" in pending.summary
    assert "rank 1 left no dump" in pending.summary


def test_a_truncated_file_is_named_and_what_it_holds_is_used(job, tmp_path):
    paths = copy(job, tmp_path)
    whole = paths[2].read_bytes()
    for cut in (len(whole) // 3, len(whole) // 2, len(whole) - 20):
        paths[2].write_bytes(whole[:cut])
        found = by_id(explain_dumps(paths))
        truncated = found["log.truncated_dump"]
        assert str(paths[2]) in truncated.summary and truncated.details["rank"] == 2
        divergence = found["log.rank_divergence"]
        assert divergence.summary.startswith(
            "process group 0 (default_pg): rank 1 never entered all_reduce #7"
        )
        assert "log.collective_mismatch" not in found  # a half-written entry is not a mismatch


def test_a_size_mismatch_names_each_ranks_size_and_stack(job, tmp_path):
    paths = copy(job, tmp_path)

    def resize(data):
        for entry in data["entries"]:
            if entry["collective_seq_id"] == 5 and entry["process_group"][0] == "0":
                entry["input_sizes"] = entry["output_sizes"] = [[5]]

    edit(paths[2], resize)
    first = explain_dumps(paths)[0]
    assert first.id == "log.collective_mismatch"
    assert "collective #5 has different sizes" in first.summary
    assert (
        "ranks 0, 1: all_reduce #5 [4] Float" in first.summary
        and "rank 2: all_reduce #5 [5] Float" in first.summary
    )
    assert "pad_across_processes" in first.fix
    assert set(first.details["stacks"]) == {"ranks 0, 1", "rank 2"}


def test_a_dtype_mismatch_and_an_operation_mismatch(job, tmp_path):
    paths = copy(job, tmp_path)

    def to_double(data):
        for entry in data["entries"]:
            if entry["collective_seq_id"] == 4 and entry["process_group"][0] == "0":
                entry["input_dtypes"] = entry["output_dtypes"] = ["Double"]

    edit(paths[0], to_double)
    first = explain_dumps(paths)[0]
    assert first.id == "log.collective_mismatch" and "#4 has different dtypes" in first.summary
    assert "rank 0: all_reduce #4 [4] Double" in first.summary

    (tmp_path / "op").mkdir()
    paths = copy(job, tmp_path / "op")

    def to_broadcast(data):
        for entry in data["entries"]:
            if entry["collective_seq_id"] == 3:
                entry["profiling_name"] = "gloo:broadcast"

    edit(paths[1], to_broadcast)
    first = explain_dumps(paths)[0]
    assert "#3 has different operations" in first.summary and "rank 1: broadcast #3" in first.summary


def test_nccl_dumps_with_their_group_ranks_and_states(job, tmp_path):
    """An NCCL dump has the same entries, with ``nccl:`` names, started/completed states and each group's
    ranks in ``pg_config`` (no GPU here to write one: the gloo dumps are rewritten in that layout)."""
    paths = copy(job, tmp_path, ranks=(0, 2))

    def as_nccl(data):
        data["pg_config"] = {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2]"}}
        for entry in data["entries"]:
            entry["profiling_name"] = entry["profiling_name"].replace("gloo:", "nccl:")
            entry["state"] = "completed" if entry["retired"] else "started"

    for path in paths:
        edit(path, as_nccl)
    found = by_id(explain_dumps(paths))
    assert "no dump from rank 1" in found["log.missing_dumps"].summary  # known from pg_config, not file names
    assert "ranks 0, 2 entered all_reduce #7" in found["log.collective_pending"].summary


@pytest.mark.parametrize(
    "name, payload",
    [
        ("reduce", lambda marker: _Reduce(marker)),
        ("protocol0", lambda marker: _Reduce(marker)),
        ("class", lambda marker: {"entries": [safe_pickle.Loaded(marker)]}),
        ("global", lambda marker: {"entries": [print]}),
    ],
)
def test_a_malicious_pickle_is_refused_without_running_anything(tmp_path, name, payload):
    marker = tmp_path / "ran"
    path = tmp_path / "rank0.fr"
    path.write_bytes(pickle.dumps(payload(marker), protocol=0 if name == "protocol0" else 4))
    (finding,) = explain_dumps([path])
    assert finding.id == "log.unreadable_dump" and finding.status == "warn"
    assert "only plain data is read" in finding.summary and "\n" not in finding.summary
    assert not marker.exists()


class _Reduce:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize(
    "name, raw",
    [
        ("GLOBAL+REDUCE, protocol 0", b"cos\nsystem\n(S'touch {m}'\ntR."),
        ("INST", b"(S'touch {m}'\nios\nsystem\n."),
        ("OBJ", b"\x80\x02(cos\nsystem\nS'touch {m}'\no."),
        ("STACK_GLOBAL+REDUCE", b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x08touch {m}\x85R."),
        ("NEWOBJ", b"\x80\x02cbuiltins\nobject\n)\x81."),
        ("extension code", b"\x80\x02\x82\x01."),
        ("persistent id", b"\x80\x02Pfoo\n."),
        ("BUILD on a dict", b"\x80\x02}}b."),
        ("bad opcode", b"\x80\x02\xff\xff"),
        ("empty", b""),
        ("only a header", b"\x80\x02"),
        ("huge length", b"\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\x7f."),
    ],
)
def test_every_way_a_pickle_can_call_or_break_is_one_refusal(tmp_path, name, raw):
    marker = tmp_path / "ran"
    path = tmp_path / "rank0.fr"
    raw = raw.replace(b"{m}", str(marker).encode())
    if b"\x8c\x08touch" in raw:  # fix the length byte of the command for the marker's path
        command = b"touch " + str(marker).encode()
        raw = raw.replace(b"\x8c\x08touch " + str(marker).encode(), b"\x8c" + bytes([len(command)]) + command)
    path.write_bytes(raw)
    (finding,) = explain_dumps([path])
    assert finding.id == "log.unreadable_dump", (name, finding)
    assert "\n" not in finding.summary and len(finding.summary) < 400
    assert not marker.exists()


def test_pickles_too_deep_or_too_large_to_be_a_dump_are_refused():
    deep = b"\x80\x02" + b"]" * 200 + b"a" * 199 + b"."  # 200 nested lists
    with pytest.raises(safe_pickle.UnsafePickle, match="nested more than"):
        safe_pickle.loads(deep)
    # a list holding itself shared 30 levels deep: 2**30 visits for a naive reader
    laughs = b"\x80\x02]q\x00" + b"h\x00h\x00\x86q\x00" * 30 + b"."
    with pytest.raises(safe_pickle.UnsafePickle, match="objects"):
        safe_pickle.loads(laughs)
    assert safe_pickle.loads(pickle.dumps({"a": [1, 2.5, None, (True, b"x")]})).data == {
        "a": [1, 2.5, None, (True, b"x")]
    }


def test_files_that_are_not_dumps_are_told_apart_and_named(tmp_path, job):
    assert looks_like_dump((job / "rank0.fr").read_bytes()[:64])
    assert looks_like_dump(b'{"version": "2.10", "pg_config": {}, "entries": []}')
    assert not looks_like_dump(b"[rank0]: Traceback (most recent call last):\n")
    assert not looks_like_dump(b"PK\x03\x04 a zip, as torch.save writes")
    anonymous = tmp_path / "dump.pickle"
    anonymous.write_bytes((job / "rank0.fr").read_bytes())
    (finding,) = explain_dumps([anonymous])
    assert finding.id == "log.unreadable_dump" and "which rank wrote it" in finding.summary


def test_the_json_form_of_a_dump_is_read_too(job, tmp_path):
    import json

    for rank in range(3):
        data = pickle.loads((job / f"rank{rank}.fr").read_bytes())
        for entry in data["entries"]:
            entry["process_group"] = list(entry["process_group"])
        (tmp_path / f"rank{rank}.json").write_text(json.dumps(data))
    first = explain_dumps(sorted(tmp_path.glob("*.json")))[0]
    assert "rank 1 never entered all_reduce #7" in first.summary


def test_the_committed_real_dump_reads_as_when_it_was_made():
    first = explain_dumps(sorted((FIXTURES / "skip_one_all_reduce").glob("*.fr")))[0]
    assert first.id == "log.rank_divergence"
    assert "rank 1 never entered all_reduce #7 [4] Float" in first.summary
    assert "skip_job.py:" in first.summary and "which ranks 0, 2 entered" in first.summary


def test_rank_conditions_are_found_in_the_users_source(tmp_path):
    source = tmp_path / "train.py"
    source.write_text(
        "class Trainer:\n"
        "    def save(self):\n"
        "        if self.gpu_id == 0:\n"
        "            for _ in range(2):\n"
        "                dist.barrier()\n"
        "        if epoch % 10 == 0:\n"
        "            dist.barrier()\n"
    )
    assert rank_condition(str(source), 5) == (3, "if self.gpu_id == 0:", False, True)  # a branch few take
    assert rank_condition(str(source), 7) is None  # a condition, but not on the rank
    assert rank_condition(str(tmp_path / "gone.py"), 1) is None
    assert ranks_text([5, 0, 1, 2, 3, 7, 8]) == "0-3, 5, 7, 8"


def test_which_ranks_take_a_branch_is_read_from_the_condition(tmp_path):
    def few(test: str):
        return _taken_by_few(ast.parse(test, mode="eval").body)

    assert few("rank == 0") is True and few("dist.get_rank() == 3") is True
    assert few("self.gpu_id == 0 and epoch % self.save_every == 0") is True  # narrowed further
    assert few("rank != 1") is False and few("not accelerator.is_main_process") is False
    assert few("trainer.is_global_zero") is True
    # neither: half the ranks, a range, a value that is the same on every rank
    assert few("rank % 2 == 0") is None and few("rank < 4") is None and few("args.local_rank == -1") is None
    source = tmp_path / "train.py"
    source.write_text("if rank != 1:\n    dist.all_reduce(x)\nelse:\n    dist.barrier()\n")
    assert rank_condition(str(source), 2).few is False  # most ranks take the if
    assert rank_condition(str(source), 4).few is True  # so few take the else


def test_nanogpts_master_process_is_a_condition_on_the_rank(tmp_path):
    """nanoGPT's train.py (and scripts written from it) names rank 0 ``master_process``; session 40 planted an
    all_reduce under ``if master_process:`` against a barrier in its ``else``, and nothing named the condition."""
    source = tmp_path / "train.py"
    source.write_text("if master_process:\n    dist.all_reduce(x)\nelse:\n    dist.barrier()\n")
    assert rank_condition(str(source), 2) == (1, "if master_process:", False, True)
    assert rank_condition(str(source), 4) == (1, "if master_process:", True, False)
    assert _taken_by_few(ast.parse("args.is_master", mode="eval").body) is True


def test_a_cut_anywhere_is_a_truncated_dump_never_a_mismatch(tmp_path):
    """Every byte a writer can stop at: the file is named as cut off, never unreadable, and the half-written
    entry (keys missing, or a size/dtype list cut short) never reads as a mismatch."""
    paths = []
    for path in sorted((FIXTURES / "skip_one_all_reduce").glob("rank*.fr")):
        paths.append(tmp_path / path.name)
        shutil.copy(path, paths[-1])
    whole = paths[2].read_bytes()
    wrong = []
    for cut in range(3, len(whole)):  # the first bytes hold no data at all
        paths[2].write_bytes(whole[:cut])
        found = by_id(explain_dumps(paths))
        if "log.truncated_dump" not in found or "log.collective_mismatch" in found:
            wrong.append((cut, sorted(found)))
    assert not wrong, wrong[:5]
