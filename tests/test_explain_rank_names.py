"""Which file names give a rank (explain/ranks.py): only forms that say so — torchrun's --log-dir
(``attempt_0/3/stderr.log``), a name with rank/worker in it (``rank3.log``, ``rank-3``, ``worker_3.log``,
``node0_rank3.log``), SLURM's ``%t`` before the extension (``job_42.0.out``, ``job_42.1.out``). A folder of
unrelated logs numbered as a list (``010_rendezvous_or_port.txt``, ``011_...``) or dated names are no ranks."""

from __future__ import annotations

import shutil
from pathlib import Path

from torchdoctor.explain.diagnose import explain
from torchdoctor.explain.inputs import files_under
from torchdoctor.explain.ranks import ranks_from_paths

LOGS = Path(__file__).parent / "fixtures" / "logs"


def test_a_folder_of_numbered_unrelated_logs_gives_no_ranks():
    assert ranks_from_paths(files_under(LOGS)) == {}
    summaries = [f.summary for f in explain([str(LOGS)])]
    assert not [s for s in summaries if "on ranks 10, 11" in s or "on ranks 32, 33" in s], summaries


def test_names_that_say_rank_give_it(tmp_path):
    oom = (LOGS / "033_cuda_oom.txt").read_text()
    names = {
        "rank3.log": 3,
        "rank-4.txt": 4,
        "worker_5.log": 5,
        "node0_rank6.log": 6,
        "run/attempt_0/7/stderr.log": 7,
    }
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(oom)
    found = ranks_from_paths(files_under(tmp_path))
    assert {p.relative_to(tmp_path).as_posix(): r for p, r in found.items()} == names
    # torchrun's attempt is read as its own; the named files are ranks 3 to 6 of one failure
    summaries = [f.summary for f in explain([str(tmp_path)]) if f.id == "log.cuda_oom"]
    assert any("on ranks 3-6:" in s for s in summaries) and any("on rank 7:" in s for s in summaries), (
        summaries
    )


def test_slurm_task_numbers_give_ranks_and_list_numbers_or_dates_do_not(tmp_path):
    for name in ("job_42.0.out", "job_42.1.out", "010_cuda_oom.txt", "011_cuda_oom.txt"):
        shutil.copy(LOGS / "033_cuda_oom.txt", tmp_path / name)
    for day in ("2024-01-01", "2024-01-02"):
        shutil.copy(LOGS / "033_cuda_oom.txt", tmp_path / f"train_{day}.log")
    found = {p.name: r for p, r in ranks_from_paths(files_under(tmp_path)).items()}
    assert found == {"job_42.0.out": 0, "job_42.1.out": 1}
    # a number in a folder's name is a local rank only in torchrun's layout
    (tmp_path / "exp" / "1").mkdir(parents=True)
    shutil.copy(LOGS / "033_cuda_oom.txt", tmp_path / "exp" / "1" / "train.txt")
    assert ranks_from_paths([tmp_path / "exp" / "1" / "train.txt"]) == {}
