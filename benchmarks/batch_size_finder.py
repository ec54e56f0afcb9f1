"""Batch-size finders side by side: tries needed and batch size found, torchdoctor vs accelerate.

torchdoctor's default search is accelerate's (×0.9), so its row must match accelerate's try for try; "halve"
and "binary" are the options.

The same training function runs out of memory (a real ``torch.OutOfMemoryError``) above a threshold; each
finder starts from the same size. A try on a GPU costs a real forward/backward (seconds to minutes), so the
number of tries is the cost; the batch size found, as a share of the largest that fits, is the gain.

    python benchmarks/batch_size_finder.py [--start 512] [--quick]
"""

from __future__ import annotations

import argparse
import logging

import torch

logging.disable(logging.INFO)  # the finders' per-try lines would bury the table


def training_function(limit: int, tries: list[int]):
    def train(batch_size: int) -> int:
        tries.append(batch_size)
        if batch_size > limit:
            raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {batch_size} MiB.")
        return batch_size

    return train


def run(finder, limit: int, start: int, **options) -> tuple[int, list[int]]:
    tries: list[int] = []
    found = finder(training_function(limit, tries), start, **options)()
    return found, tries


FINDERS = ("accelerate", "default", "halve", "binary")
HEADINGS = {
    "accelerate": "accelerate",
    "default": "torchdoctor default",
    "halve": "torchdoctor halve",
    "binary": "torchdoctor binary",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", type=int, default=512, help="starting batch size (default 512)")
    parser.add_argument("--quick", action="store_true", help="three thresholds only")
    args = parser.parse_args()

    import accelerate
    from accelerate.utils import find_executable_batch_size as accelerate_finder

    from torchdoctor import find_executable_batch_size as ours

    start = args.start
    limits = [37, 300, 500] if args.quick else [3, 37, 100, 200, 300, 400, 500, 511]
    limits = [limit for limit in limits if limit < start]
    print(f"starting batch size {start}; accelerate {accelerate.__version__} (×0.9 per out-of-memory)")
    header = f"{'fits up to':>10} | " + " | ".join(f"{HEADINGS[key]:>19}" for key in FINDERS)
    print(header)
    print("-" * len(header))
    totals = {key: [0, 0.0] for key in FINDERS}
    same_sizes = True
    for limit in limits:
        rows = {
            "accelerate": run(accelerate_finder, limit, start),
            "default": run(ours, limit, start),
            "halve": run(ours, limit, start, search="halve"),
            "binary": run(ours, limit, start, search="binary"),
        }
        same_sizes &= rows["default"] == rows["accelerate"]
        for key, (found, tries) in rows.items():
            totals[key][0] += len(tries)
            totals[key][1] += found / limit
        cells = [f"{found:>4} in {len(tries):>2} tries" for found, tries in rows.values()]
        print(f"{limit:>10} | " + " | ".join(f"{cell:>19}" for cell in cells))
    n, acc_tries = len(limits), totals["accelerate"][0]
    print("-" * len(header))
    print(
        "tries in all:  "
        + ", ".join(
            f"{HEADINGS[key]} {totals[key][0]} ({totals[key][0] / acc_tries:.2f}×)" for key in FINDERS
        )
    )
    print(
        "batch found, mean share of the largest that fits:  "
        + ", ".join(f"{HEADINGS[key]} {100 * totals[key][1] / n:.1f}%" for key in FINDERS)
    )
    print(
        f"torchdoctor's default tried the same sizes as accelerate, in the same order: {'yes' if same_sizes else 'NO'}"
    )


if __name__ == "__main__":
    main()
