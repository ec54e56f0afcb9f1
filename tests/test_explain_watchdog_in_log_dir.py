"""`explain LOG_DIR` where `launch --watchdog --log-dir LOG_DIR` kept its folder beside the ranks' logs (session 43).

Until session 43 the watchdog's folder went to the system's temporary folder whatever `--log-dir` said, and
`explain LOG_DIR` read only the report written beside the logs, back as a "likely" verdict whose fix pointed to a
`/tmp` folder "while that folder is kept". Now the folder is in the log dir and is read as `explain FOLDER` reads it.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

from torchdoctor.explain.diagnose import explain

GPU = Path(__file__).parent / "fixtures" / "gpu"  # an H200 run the watchdog stopped (SOURCES.md there)


def _log_dir_of_the_hang(tmp_path: Path) -> tuple[Path, Path]:
    logs = tmp_path / "logs"
    kept = logs / "torchdoctor-watchdog-_6vdflfc"
    shutil.copytree(GPU / "watchdog", kept)
    report = (GPU / "watchdog-nccl-hang.txt").read_text()
    (logs / "torchdoctor-report.txt").write_text(report[report.index("torchdoctor: hang:") :])
    return logs, kept


def test_a_hang_folder_kept_in_the_log_dir_is_read_with_its_stacks_and_the_report_beside_it_is_not(tmp_path):
    logs, kept = _log_dir_of_the_hang(tmp_path)
    alone = explain([str(kept)])
    found = explain([str(logs)])
    assert [(f.id, f.summary) for f in found] == [(f.id, f.summary) for f in alone], [
        f.summary for f in found
    ]
    assert not any(f.summary.startswith("likely: torchdoctor's watchdog stopped") for f in found)


def test_the_report_alone_is_still_read_where_the_folder_is_not_there(tmp_path):
    # near miss: the same log dir with the folder gone (kept elsewhere, or removed): the report is the evidence
    logs, kept = _log_dir_of_the_hang(tmp_path)
    shutil.rmtree(kept)
    (lead, *_) = explain([str(logs)])
    assert lead.id == "log.hang_verdict" and lead.summary.startswith("likely: "), lead.summary


def test_a_folder_named_like_ours_without_the_ranks_files_is_read_as_logs(tmp_path):
    # near miss: only a folder with a rank's .json or .stack is the watchdog's; anything else is read as logs
    logs = tmp_path / "logs"
    other = logs / "torchdoctor-watchdog-notes"
    other.mkdir(parents=True)
    (other / "train.log").write_text("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    (lead, *_) = explain([str(logs)])
    assert lead.id == "log.cuda_oom", lead.summary


def test_a_failed_jobs_folder_kept_in_the_log_dir_leaves_the_lead_to_the_ranks_traceback(cli, tmp_path):
    # a real launch: every rank raises at its start; the watchdog keeps its folder in the log dir (not /tmp) and
    # its failed-job verdict has no fix of its own, so the ranks' logs beside it lead with theirs
    script = tmp_path / "train.py"
    script.write_text("import torch.distributed as dist\n\ndist.init_process_group('nccl-typo')\n")
    logs = tmp_path / "logs"
    result = cli(
        "launch", "--nproc-per-node", "2", "--watchdog", "30", "--log-dir", str(logs), "--redirects", "3",
        str(script), timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr[-2000:]
    (kept,) = logs.glob("torchdoctor-watchdog-*")
    assert (kept / "verdict.json").exists()
    assert f"What each rank left: {kept}/rank*" in result.stderr, result.stderr[-2000:]
    found = explain([str(logs)])
    assert found[0].id != "log.hang_verdict" and found[0].fix, [(f.id, f.summary) for f in found]
    assert "nccl-typo" in found[0].summary + (found[0].fix or ""), (found[0].id, found[0].summary)


def _hang_written_at(folder: Path, when: float) -> None:
    for path in [*folder.iterdir(), folder]:
        os.utime(path, (when, when))


def test_of_two_runs_kept_in_one_log_dir_only_the_newest_folder_is_read_and_the_older_is_named(tmp_path):
    # a second run with the same --log-dir keeps a second folder beside the first: the report there is the last
    # run's, so is the verdict read; the older folder is named, not read as this run's
    logs, kept = _log_dir_of_the_hang(tmp_path)
    older = logs / "torchdoctor-watchdog-zzolder1"  # sorts after the newer one by name
    shutil.copytree(kept, older)
    # a file of that run's not read by the folder's reader (a rank's faulthandler output when it was stopped)
    (older / "interrupted.1").write_text("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    # the times as two runs leave them (copytree keeps the fixture's times, which are the checkout's)
    _hang_written_at(older, time.time() - 3600)
    _hang_written_at(kept, time.time())
    found = explain([str(logs)])
    assert [f.details.get("folder") for f in found if f.id == "log.hang_verdict"] == [str(kept.resolve())], [
        (f.id, f.summary) for f in found
    ]
    assert not any(f.id == "log.cuda_oom" for f in found), [(f.id, f.summary) for f in found]
    (note,) = [f for f in found if f.id == "log.earlier_watchdog_folders"]
    assert str(older.resolve()) in note.summary and note.status == "skip", note.summary


def test_a_failed_job_without_tee_after_a_hang_in_the_same_log_dir_leads_with_its_own_verdict(cli, tmp_path):
    # a real launch: the ranks' output went to the console (no --tee), so the log dir holds no traceback of this
    # run; an earlier run's hang folder is there too. Its verdict must not stand for this run, and this run's
    # failed-job verdict (rank 1's ValueError) is what explain LOG_DIR says
    logs, kept = _log_dir_of_the_hang(tmp_path)
    _hang_written_at(kept, time.time() - 3600)
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\nimport torch.distributed as dist\n\ndist.init_process_group('gloo')\n"
        "dist.all_reduce(torch.ones(1))\nif dist.get_rank() == 1:\n    raise ValueError('bad batch on rank 1')\n"
        "dist.all_reduce(torch.ones(1))\n"
    )
    result = cli(
        "launch", "--nproc-per-node", "2", "--watchdog", "30", "--log-dir", str(logs), str(script), timeout=120
    )  # fmt: skip
    assert result.returncode == 1, result.stderr[-2000:]
    found = explain([str(logs)])
    assert "ValueError: bad batch on rank 1" in found[0].summary, [(f.id, f.summary) for f in found]
    assert found[0].details["kind"] == "failed", found[0].details
    assert not any(f.details.get("folder") == str(kept.resolve()) for f in found), [f.summary for f in found]


def test_a_relative_log_dir_keeps_the_dumps_of_a_script_that_changes_its_working_directory(cli, tmp_path):
    # a real launch from the user's folder with --log-dir logs; the script moves into outputs/run1 (as Hydra does)
    # before the hang: the workers were told the folder's absolute path, so their dumps land in it
    script = tmp_path / "train.py"
    script.write_text(
        "import os, time\nimport torch\nimport torch.distributed as dist\n\n"
        "os.makedirs('outputs/run1', exist_ok=True)\nos.chdir('outputs/run1')\n"
        "dist.init_process_group('gloo')\ndist.all_reduce(torch.ones(1))\n"
        "if dist.get_rank() == 1:\n    time.sleep(600)\ndist.all_reduce(torch.ones(1))\n"
    )
    result = cli(
        "launch", "--nproc-per-node", "2", "--watchdog", "5", "--log-dir", "logs", "train.py", timeout=120,
        cwd=tmp_path, env={"PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert result.returncode == 1, result.stderr[-2000:]
    (kept,) = (tmp_path / "logs").glob("torchdoctor-watchdog-*")
    assert sorted(p.name for p in kept.glob("rank*.fr")) == ["rank0.fr", "rank1.fr"], sorted(os.listdir(kept))
    assert not (tmp_path / "outputs" / "run1" / "logs").exists()


def test_the_log_dir_and_its_kept_folder_both_given_read_the_folder_once(tmp_path):
    logs, kept = _log_dir_of_the_hang(tmp_path)
    found = explain([str(logs), str(kept)])
    assert [f.id for f in found].count("log.hang_verdict") == 1, [(f.id, f.summary) for f in found]


def test_the_folders_own_files_written_as_ranks_stop_are_not_read_as_logs(tmp_path):
    # faulthandler's rank<N>.fatal, the Ctrl-C places (interrupted.N, said.N) and the call counts are the folder
    # reader's evidence: read again as logs they added findings of their own beside the folder's verdict
    kept = tmp_path / "torchdoctor-watchdog-x"
    shutil.copytree(GPU / "watchdog", kept)
    alone = [(f.id, f.summary) for f in explain([str(kept)])]
    (kept / "rank0.fatal").write_text(
        'Fatal Python error: Segmentation fault\n\nCurrent thread 0x0000 (most recent call first):\n  File "train.py", '
        "line 3 in <module>\n"
    )
    (kept / "interrupted.0").write_text("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    (kept / "said.0").write_text("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert [(f.id, f.summary) for f in explain([str(kept)])] == alone
