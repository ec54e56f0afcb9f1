"""What the straggler watch's kept windows of a CUDA run say of the device time (benchmarks/gpu/record.sh, phase f):
per rank, how many steps carry it (record's last field, from CUDA events), its median against the step's, and
the run judged again from the windows (its verdict lines).

    python benchmarks/gpu/device_rows.py DIR/stragglers-windows.jsonl...
"""

import json
import statistics
import sys
from pathlib import Path

from torchdoctor.stragglers.aggregate import judge_kept


def main() -> None:
    for path in map(Path, sys.argv[1:]):
        print(f"== {path.parent.name}")
        rows: dict[str, list] = {}
        for line in path.read_text().splitlines():
            for rank, figures in json.loads(line)["ranks"].items():
                rows.setdefault(rank, []).extend(figures.get("rows") or [])
        for rank, table in sorted(rows.items()):
            known = [row[8] for row in table if len(row) > 8 and row[8] is not None]
            half = len(table) // 2
            device = f"median {statistics.median(known) * 1000:.1f} ms" if known else "none"
            later = [row[8] for row in table[half:] if len(row) > 8 and row[8] is not None]
            print(
                f"rank {rank}: {len(table)} steps, {len(known)} with a device time ({device}; "
                f"steps {half}+: {statistics.median(later) * 1000 if later else float('nan'):.1f} ms), "
                f"step median {statistics.median(row[0] for row in table) * 1000:.1f} ms, "
                f"CPU time {statistics.median(row[3] for row in table) * 1000:.1f} ms"
            )
        for said in judge_kept(path).said:  # the run's own end summary is in its output (rec/<step>.txt)
            print(said["line"])


if __name__ == "__main__":
    main()
