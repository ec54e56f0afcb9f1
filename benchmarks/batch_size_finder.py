"""Batch-size finders side by side: tries needed and batch size found, torchdoctor vs accelerate.

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


def run(finder, limit: int, start: int, **options) -> tuple[int, int]:
    tries: list[int] = []
    found = finder(training_function(limit, tries), start, **options)()
    return found, len(tries)


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
    header = f"{'fits up to':>10} | {'accelerate':>17} | {'torchdoctor halve':>17} | {'torchdoctor binary':>18} | binary vs accelerate"
    print(header)
    print("-" * len(header))
    totals = {"acc": [0, 0.0], "halve": [0, 0.0], "binary": [0, 0.0]}
    for limit in limits:
        rows = {
            "acc": run(accelerate_finder, limit, start),
            "halve": run(ours, limit, start),
            "binary": run(ours, limit, start, search="binary"),
        }
        for key, (found, tries) in rows.items():
            totals[key][0] += tries
            totals[key][1] += found / limit
        (acc_found, acc_tries), (_, _), (bin_found, bin_tries) = rows.values()
        cells = [f"{found:>4} in {tries:>2} tries" for found, tries in rows.values()]
        print(
            f"{limit:>10} | {cells[0]:>17} | {cells[1]:>17} | {cells[2]:>18} | "
            f"{bin_tries / acc_tries:.2f}× tries, {bin_found / acc_found:.2f}× batch"
        )
    n, acc_tries = len(limits), totals["acc"][0]
    print("-" * len(header))
    tries = ", ".join(
        f"{name} {totals[key][0]} ({totals[key][0] / acc_tries:.2f}×)"
        for key, name in (("acc", "accelerate"), ("halve", "halve"), ("binary", "binary"))
    )
    shares = ", ".join(
        f"{name} {100 * totals[key][1] / n:.1f}%"
        for key, name in (("acc", "accelerate"), ("halve", "halve"), ("binary", "binary"))
    )
    print(f"tries in all: {tries}")
    print(f"batch found, mean share of the largest that fits: {shares}")


if __name__ == "__main__":
    main()
