"""The status line ``torchdoctor net`` keeps on stderr while it works: what it waits for, and the bench's bar.

Shown only when stderr is a terminal, so that logs, pipes and ``--json`` output never carry it.
"""

from __future__ import annotations

from collections.abc import Mapping

from torchdoctor.net.rank_state import RankState


class Status:
    """A rich progress line on stderr; every method does nothing when stderr is not a terminal."""

    def __init__(self, enabled: bool = True) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            disable=not (enabled and console.is_terminal),
            transient=True,
        )
        self.task = self.progress.add_task("starting", total=None)

    def __enter__(self) -> Status:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def stop(self) -> None:
        self.progress.stop()

    def say(self, text: str) -> None:
        self.progress.update(self.task, description=text)

    def row(self, row: Mapping, total: int) -> None:
        """One more bandwidth measurement done (of ``total``)."""
        self.progress.update(self.task, total=total, advance=1, description=describe(row))

    def ranks(self, states: Mapping[int, RankState], world_size: int, timeout: float) -> None:
        """Whom the run waits for, from the ranks' states read so far."""
        rows = next((s.bench for _, s in sorted(states.items()) if s.bench), [])
        if rows:
            total = next(s.bench_total for s in states.values() if s.bench)
            self.progress.update(self.task, total=total, completed=len(rows), description=describe(rows[-1]))
            return
        absent = [r for r in range(world_size) if r not in states]
        behind = {r: s.stage for r, s in sorted(states.items()) if s.stage not in ("done", "bench")}
        if not absent and not behind:
            self.say(f"{world_size} ranks done")
            return
        waiting = [f"rank {r} ({stage})" for r, stage in behind.items()]
        waiting += [f"rank {r} (starting)" for r in absent]
        self.say(f"waiting for {', '.join(waiting)}, at most {timeout:g}s a stage")


def describe(row: Mapping) -> str:
    """``all_reduce 1 MiB: 2.345 GB/s busbw``."""
    from torchdoctor.net.bandwidth import human_size

    return f"{row['op']} {human_size(row['size'])}: {row['busbw']:.3f} GB/s busbw"
