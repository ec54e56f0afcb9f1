"""What the overflow detector costs: a small T5's training step with no detector, transformers', and ours.

A T5 built from a config (random weights, nothing downloaded) trains on random tokens. Each round runs every
variant for the same number of steps, in a rotating order, so drifts in machine load hit all of them alike;
the figure per variant is the median over rounds of its ms/step (CPU time of this process on CPU, so that
other work on a shared machine barely moves it; wall time on a GPU).

    python benchmarks/overflow_overhead.py            # CPU, ~1-2 minutes on 2 cores
    python benchmarks/overflow_overhead.py --quick    # fewer rounds, ~30 s
    python benchmarks/overflow_overhead.py --device cuda

Goals (issue 2 and 7): ours <= 1.10x on CPU (<= 1.05x on a GPU); with check_gradients=True <= 1.25x on CPU.
"""

from __future__ import annotations

import argparse
import statistics
import time

# T5 sizes: the config's sizes, batch and sequence length. "small" for a CPU; "t5-small" (60M parameters) and
# "t5-base" (223M, the size people debug) shaped for a GPU.
SIZES = {
    "small": (dict(vocab_size=512, d_model=128, d_kv=32, d_ff=512, num_layers=2, num_heads=4), 8, 64),
    "t5-small": (dict(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8), 16, 256),
    "t5-base": (
        dict(vocab_size=32128, d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_heads=12),
        16,
        512,
    ),
}


def build(device: str, size: str):
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    sizes, batch, length = SIZES[size]
    config = T5Config(**sizes, decoder_start_token_id=0, pad_token_id=0)  # as many decoder layers as encoder
    model = T5ForConditionalGeneration(config).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, config.vocab_size, (batch, length), device=device)
    labels = torch.randint(0, config.vocab_size, (batch, length // 2), device=device)
    return model, optimizer, ids, labels


def variants(check_gradients: bool):
    from transformers.debug_utils import DebugUnderflowOverflow as TransformersDetector

    from torchdoctor.numerics.detector import DebugUnderflowOverflow

    found = {
        "no detector": None,
        "transformers": TransformersDetector,
        "torchdoctor": DebugUnderflowOverflow,
    }
    if check_gradients:
        found["torchdoctor check_gradients"] = lambda model: DebugUnderflowOverflow(
            model, check_gradients=True
        )
    return found


def time_steps(model, optimizer, ids, labels, steps: int, device: str) -> float:
    import torch

    def sync():
        if device != "cpu":
            torch.cuda.synchronize()

    # on CPU count this process's CPU time: other work on a shared machine then barely moves the figures
    clock = time.process_time if device == "cpu" else time.perf_counter
    sync()
    start = clock()
    for _ in range(steps):
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    sync()
    return (clock() - start) / steps * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds and steps")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--size", choices=list(SIZES), default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 keeps timings steady)")
    parser.add_argument("--no-gradients", action="store_true", help="leave out the check_gradients=True row")
    args = parser.parse_args()

    import warnings

    import torch

    # PyTorch's notes about full backward hooks on modules whose inputs need no gradient: noise here
    warnings.filterwarnings("ignore", message="Full backward hook is firing")
    warnings.filterwarnings("ignore", message="For backward hooks to be called")
    torch.set_num_threads(args.threads)
    size = args.size or ("small" if args.device == "cpu" else "t5-small")
    rounds = args.rounds or (3 if args.quick else 15)  # 7 rounds left one-off outliers of 15%
    steps = args.steps or (3 if args.quick else 5)
    model, optimizer, ids, labels = build(args.device, size)
    try:
        found = variants(not args.no_gradients)
        # check_gradients may not exist in an older torchdoctor: measure what there is
        DetectorCheck = found.get("torchdoctor check_gradients")
        if DetectorCheck is not None:
            try:
                DetectorCheck(torch.nn.Linear(1, 1)).remove()
            except TypeError:
                del found["torchdoctor check_gradients"]
    except ImportError as error:
        raise SystemExit(f"overflow_overhead needs transformers: {error}") from error

    times: dict[str, list[float]] = {name: [] for name in found}
    time_steps(model, optimizer, ids, labels, 2, args.device)  # warm-up: allocator, kernels
    names = list(found)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            detector = found[name](model) if found[name] is not None else None
            try:
                time_steps(model, optimizer, ids, labels, 1, args.device)  # first step measures everything
                times[name].append(time_steps(model, optimizer, ids, labels, steps, args.device))
            finally:
                if detector is not None:
                    detector.remove() if hasattr(detector, "remove") else _remove_transformers_hooks(model)

    base = statistics.median(times["no detector"])
    ours = statistics.median(times["torchdoctor"])
    theirs = statistics.median(times["transformers"])
    params = sum(p.numel() for p in model.parameters())
    print(
        f"T5 ({size}, {params / 1e6:.1f}M parameters, batch {tuple(ids.shape)}) training step on {args.device}, "
        f"torch threads {args.threads}, median of {rounds} rounds x {steps} steps"
    )
    print(f"{'variant':30} {'ms/step':>9} {'vs none':>8}")
    for name in names:
        value = statistics.median(times[name])
        print(f"{name:30} {value:9.1f} {value / base:7.2f}x")
    print(f"transformers / none: {theirs / base:.2f}x   torchdoctor / none: {ours / base:.2f}x")
    print(f"transformers / torchdoctor: {theirs / ours:.2f}x")


def _remove_transformers_hooks(model) -> None:
    """transformers' detector has no remove(): take its forward hooks off by hand."""
    for module in model.modules():
        for key, hook in list(module._forward_hooks.items()):
            if getattr(hook, "__qualname__", "").startswith("DebugUnderflowOverflow"):
                del module._forward_hooks[key]


if __name__ == "__main__":
    main()
