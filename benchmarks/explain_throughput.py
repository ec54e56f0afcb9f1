"""How fast `torchdoctor explain` reads a big log next to `grep -E -c` of the same failure patterns, in one run.

A log of healthy training output (progress lines, NCCL INFO lines, Megatron and Trainer metrics, warnings) is
generated with a few failure lines buried in it (an out-of-memory error on rank 0, then watchdog timeouts on
ranks 1-3). Both tools read the same file, in alternating order over a few rounds (the file is read once
before, so both find it in the page cache): `torchdoctor explain --json FILE` as a user runs it, and
`grep -E -c -f` with every literal text the recognisers anchor on, one extended regular expression a line.
Printed: the median wall time and the median CPU time (user + system, steadier on a shared machine) of each,
both ratios, and the machine's load average before and after (on a busy machine, CPU time still grows a little
with the load: caches and cores are shared; compare ratios taken under similar loads).

    python benchmarks/explain_throughput.py            # 500 MB, 3 rounds
    python benchmarks/explain_throughput.py --mb 100 --rounds 5

Goal (issues 11 and 19): explain within 3x of grep's CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILLER = (
    "2026-11-23 01:{m:02d}:{s:02d},{ms:03d} - INFO - trainer.py:412 - epoch {e} step {st}/50000 loss={l:.4f} "
    "lr=1.00e-04 grad_norm={g:.3f} tokens/s={t}",
    "Epoch {e}:  45%|████▌     | {st}/10000 [12:03<14:44,  6.22it/s, loss={l:.3f}, v_num=1]",
    "node{e:02d}:12345:12399 [3] NCCL INFO Channel {m:02d}/0 : 3[3] -> 4[4] via P2P/IPC/read",
    "[rank{e}]:[2026-11-23 01:23:45] INFO - Saving checkpoint to /ckpt/step_{st} (took {g:.2f}s)",
    "{{'loss': {l:.4f}, 'grad_norm': {g:.4f}, 'learning_rate': 1.9e-05, 'epoch': {e}.{st}}}",
    "/usr/lib/python3/site-packages/transformers/trainer.py:1234: FutureWarning: `tokenizer` is deprecated and "
    "will be removed in version 5.0.0",
    "[rank{e}]: iteration {st} | consumed samples: {t} | elapsed time per iteration (ms): 512.3 | learning rate: "
    "1.2E-04 | lm loss: {l:.6E} | loss scale: 65536.0 | grad norm: {g:.3f} | number of skipped iterations: 0 | "
    "number of nan iterations: 0 |",
)
FAILURE = (
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
    "of 79.15 GiB of which 1.06 GiB is free. Of the allocated memory 60.12 GiB is allocated by PyTorch, and "
    "17.31 GiB is reserved by PyTorch but unallocated.\n"
    + "".join(
        f"[rank{r}]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
        f"operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, "
        f"Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n"
        for r in (1, 2, 3)
    )
)


def generate(path: Path, size: int, seed: int = 1) -> None:
    """Write about ``size`` bytes of healthy output to ``path`` with `FAILURE` buried at 80% of it."""
    rng = random.Random(seed)
    block = "".join(
        rng.choice(FILLER).format(
            m=rng.randrange(60),
            s=rng.randrange(60),
            ms=rng.randrange(1000),
            e=rng.randrange(8),
            st=rng.randrange(50000),
            l=rng.random() * 4,
            g=rng.random(),
            t=rng.randrange(100000),
        )
        + "\n"
        for _ in range(20000)
    ).encode()
    written, buried = 0, False
    with path.open("wb") as out:
        while written < size:
            out.write(block)
            written += len(block)
            if not buried and written >= 0.8 * size:
                out.write(FAILURE.encode())
                buried = True


def grep_patterns() -> str:
    """Every anchor of every recogniser as an extended regular expression, one a line, for ``grep -E -f``: a line
    matches when any of them does, as one alternation would (which, joined, outgrew the 128 KiB the kernel allows
    a single argument once the anchors passed a few thousand)."""
    from torchdoctor.explain.kinds import RECOGNISERS

    anchors = sorted({a for r in RECOGNISERS for a in r.anchors})
    return "".join(re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", a) + "\n" for a in anchors)


def timed(command: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the command, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"{command[0]} exited {done.returncode}: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=500, help="size of the generated log in MB (default 500)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    grep = shutil.which("grep")
    if grep is None:
        sys.exit("grep is not installed: nothing to compare with")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "train.log"
        generate(log, args.mb * 10**6)
        print(
            f"log: {log.stat().st_size / 1e6:.0f} MB with an OOM on rank 0 and timeouts on ranks 1-3 at 80%"
        )
        patterns = Path(folder) / "anchors.txt"
        patterns.write_text(grep_patterns(), encoding="utf-8")
        commands = {
            "torchdoctor explain": [sys.executable, "-m", "torchdoctor", "explain", "--json", str(log)],
            "grep -E -c": [grep, "-E", "-c", "-f", str(patterns), str(log)],
        }
        log.read_bytes()  # into the page cache for both
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        outputs = {}
        for round_ in range(args.rounds):
            order = list(commands) if round_ % 2 == 0 else list(reversed(commands))
            for name in order:
                elapsed, cpu, outputs[name] = timed(commands[name])
                times[name].append(elapsed)
                cpus[name].append(cpu)
    found = [f["id"] for f in json.loads(outputs["torchdoctor explain"])["findings"]]
    print(f"explain found: {', '.join(found)}; grep counted {outputs['grep -E -c'].strip()} matching lines")
    medians = {name: statistics.median(values) for name, values in times.items()}
    cpu = {name: statistics.median(values) for name, values in cpus.items()}
    for name, value in medians.items():
        print(
            f"{name:22s} wall {value:7.2f} s, CPU {cpu[name]:7.2f} s  "
            f"(rounds: wall {', '.join(f'{v:.2f}' for v in times[name])}; "
            f"CPU {', '.join(f'{v:.2f}' for v in cpus[name])})"
        )
    wall_ratio = medians["torchdoctor explain"] / medians["grep -E -c"]
    cpu_ratio = cpu["torchdoctor explain"] / cpu["grep -E -c"]
    print(f"explain / grep: {wall_ratio:.2f}x wall, {cpu_ratio:.2f}x CPU  (goal <= 3x)")
    load_after = os.getloadavg()
    print(
        f"load average (1, 5, 15 min) before: {', '.join(f'{v:.1f}' for v in load_before)}; "
        f"after: {', '.join(f'{v:.1f}' for v in load_after)}; {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
