"""The planted-fault corpus: every script of tests/hang_faults under `torchdoctor launch --watchdog`, scored.

For each fault: the rank the verdict names first (top-1 culprit), the file:line it names, the seconds from the
watchdog firing to the verdict; for the healthy jobs, whether anything was blamed. Then the same hangs judged
again from their kept folders with evidence taken away (stacks missing for some ranks, dumps missing or cut
for up to half of the ranks), as `torchdoctor explain FOLDER` reads them. Prints the README's table.

    python benchmarks/hang_corpus.py [--watchdog 4] [--only NAME ...] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAULTS = HERE.parent / "tests" / "hang_faults"


def header(script: Path) -> dict:
    """``# ranks: 2`` / ``# culprit: 1`` / ``# ends: hang`` and the line marked ``# <- culprit``."""
    text = script.read_text()
    said = dict(re.findall(r"^# (\w+): (\S+)$", text, re.M))
    marked = [i for i, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith("# <- culprit")]
    culprit = said.get("culprit", "none")
    return {
        "ranks": int(said.get("ranks", 2)),
        "culprit": None if culprit == "none" else int(culprit),
        "ends": said.get("ends", "hang"),
        "line": marked[0] if marked else None,
    }


def run_fault(script: Path, watchdog: float, timeout: float = 240) -> dict:
    """Run one fault under `torchdoctor launch --watchdog`; what came out."""
    expected = header(script)
    command = [
        sys.executable, "-m", "torchdoctor", "launch",
        "--nproc-per-node", str(expected["ranks"]), "--watchdog", str(watchdog), str(script),
    ]  # fmt: skip
    began = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"fault": script.stem, **expected, "returncode": None, "error": f"no end within {timeout:g}s"}
    result = {
        "fault": script.stem,
        **expected,
        "returncode": done.returncode,
        "wall": time.monotonic() - began,
    }
    kept = re.search(r"(?:Full stacks|What each rank left): (\S+)/rank\*", done.stderr)
    result["folder"] = kept[1] if kept else None
    verdict_file = Path(kept[1]) / "verdict.json" if kept else None
    result["verdict"] = (
        json.loads(verdict_file.read_text()) if verdict_file and verdict_file.exists() else None
    )
    result["stderr_tail"] = done.stderr[-3000:]
    return result


def score(result: dict, script: Path) -> dict:
    """Whether the verdict names the planted culprit rank and line."""
    verdict = result.get("verdict") or {}
    culprits = verdict.get("culprits") or []
    where = verdict.get("where") or {}
    named_line = (
        where.get("line")
        if where and os.path.realpath(where.get("file", "")) == str(script.resolve())
        else None
    )
    if result["culprit"] is None:  # a healthy job: nothing may be blamed
        return {
            "rank_ok": not culprits and result.get("returncode") == 0,
            "line_ok": None,
            "false": bool(culprits),
        }
    return {
        "rank_ok": bool(culprits) and culprits[0] == result["culprit"],
        "line_ok": None if result["line"] is None else named_line == result["line"],
        "false": bool(culprits) and culprits[0] != result["culprit"],
        "named": f"{Path(where['file']).name}:{where['line']}" if where else "-",
    }


def take_away(folder: Path, ranks: int, how: str, seed: int) -> Path:
    """A copy of ``folder`` with evidence taken away: ``stacks`` (the stack files of some ranks, never all),
    ``dumps`` (up to half of the dumps gone), ``cut`` (up to half of the dumps cut in the middle)."""
    copy = Path(tempfile.mkdtemp(prefix="hang-corpus-"))
    shutil.copytree(folder, copy, dirs_exist_ok=True)
    chosen = random.Random(seed).sample(range(ranks), max(1, ranks // 2))
    for rank in chosen:
        if how == "stacks":
            (copy / f"rank{rank}.stack").unlink(missing_ok=True)
        elif how == "dumps":
            (copy / f"rank{rank}.fr").unlink(missing_ok=True)
        elif how == "cut":
            dump = copy / f"rank{rank}.fr"
            if dump.exists():
                data = dump.read_bytes()
                dump.write_bytes(data[: len(data) // 2])
    return copy


def rejudge(folder: Path) -> dict:
    """The verdict `torchdoctor explain FOLDER` gives for a kept folder (in this process)."""
    from torchdoctor.hang.folder import folder_verdict

    _, _, found = folder_verdict(folder)
    return found.to_dict()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchdog", type=float, default=4.0)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    scripts = sorted(FAULTS.glob("*.py"))
    if args.only:
        scripts = [s for s in scripts if s.stem in args.only]
    rows, variants = [], []
    for script in scripts:
        result = run_fault(script, args.watchdog)
        result.update(score(result, script))
        rows.append(result)
        print(_row(result), flush=True)
        if result.get("folder") and result["culprit"] is not None:
            for how in ("stacks", "dumps", "cut"):
                for seed in range(2):
                    copy = take_away(Path(result["folder"]), result["ranks"], how, seed)
                    try:
                        again = {**result, "verdict": rejudge(copy)}
                    except Exception as error:  # noqa: BLE001 - a crash on cut evidence is what this counts
                        again = {**result, "verdict": None, "crash": f"{type(error).__name__}: {error}"}
                    finally:
                        shutil.rmtree(copy, ignore_errors=True)
                    again.update(score(again, script), how=how, seed=seed)
                    variants.append(again)
        if result.get("folder"):
            shutil.rmtree(result["folder"], ignore_errors=True)
    print()
    print(_table(rows, variants))
    if args.json:
        args.json.write_text(json.dumps({"runs": rows, "variants": variants}, indent=1, default=str))
    return 0


def _row(r: dict) -> str:
    v = r.get("verdict") or {}
    return (
        f"{r['fault']:<22} rc={r.get('returncode')} culprits={v.get('culprits')} named={r.get('named', '-')} "
        f"rank_ok={r.get('rank_ok')} line_ok={r.get('line_ok')} seconds={v.get('seconds', '-')} kind={v.get('kind')}"
    )


def _table(rows: list[dict], variants: list[dict]) -> str:
    lines = [
        "| fault | ranks | planted culprit | top-1 rank | file:line named | line right | s to verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        v = r.get("verdict") or {}
        planted = (
            "none"
            if r["culprit"] is None
            else f"rank {r['culprit']}" + (f", line {r['line']}" if r["line"] else "")
        )
        top = (v.get("culprits") or ["-"])[0]
        line_ok = {True: "yes", False: "no", None: "n/a"}[r.get("line_ok")]
        seconds = (
            "failed job"
            if v.get("kind") in ("failed", "mismatch") and r["ends"] != "hang"
            else v.get("seconds", "-")
        )
        lines.append(
            f"| {r['fault']} | {r['ranks']} | {planted} | {top} {'✓' if r.get('rank_ok') else '✗'} | "
            f"{r.get('named', '-')} | {line_ok} | {seconds} |"
        )
    faulty = [r for r in rows if r["culprit"] is not None]
    healthy = [r for r in rows if r["culprit"] is None]
    with_line = [r for r in faulty if r.get("line_ok") is not None]
    seconds = [r["verdict"]["seconds"] for r in faulty if r.get("verdict") and r["ends"] == "hang"]
    lines += [
        "",
        f"top-1 culprit rank: {sum(r['rank_ok'] for r in faulty)}/{len(faulty)}; "
        f"culprit file:line: {sum(r['line_ok'] for r in with_line)}/{len(with_line)} (where a line can be known); "
        f"seconds from the watchdog firing to the verdict (hangs): max {max(seconds, default=0):.1f}; "
        f"false verdicts on healthy jobs: {sum(r['false'] or not r['rank_ok'] for r in healthy)}/{len(healthy)}",
    ]
    for how in ("stacks", "dumps", "cut"):
        these = [v for v in variants if v["how"] == how]
        if these:
            crashes = sum("crash" in v for v in these)
            wrong = sum(v["false"] for v in these)
            lines.append(
                f"evidence taken away ({how}): top-1 rank {sum(v['rank_ok'] for v in these)}/{len(these)}, "
                f"a wrong rank blamed {wrong}, crashes {crashes}"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
