"""An out-of-memory error after steps that fitted is memory that grew (explain/steps_before.py); a Lightning run's
133-line traceback pushed its progress bar beyond the lines read above the error, so that was never said (USER8's
trial, recorded). And the cuda_oom fix's "If it ran for many steps..." was said where the log shows no step at all
(the README's own example): where a step is shown it is quoted; where none is, the sentence stays a condition
(a pasted traceback rarely keeps the steps above it, and memory kept from step to step is a common cause)."""

from __future__ import annotations

from pathlib import Path

from explaining import explained

FIXTURES = Path(__file__).parent / "fixtures" / "oom_consoles"
OOM = (
    'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    y = m(x)\n'
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 4.00 "
    "GiB of which 2.35 GiB is free.\n"
)


def test_the_progress_bar_above_lightnings_long_traceback_says_memory_grew():
    text = (FIXTURES / "u8_lightning_losses_kept.txt").read_text()
    lines = text.splitlines()
    assert len(lines) - next(i for i, line in enumerate(lines) if line.startswith("Traceback")) > 120
    found = explained(text)
    assert found.id == "log.cpu_oom", found.summary
    assert "after step 7 (the steps above it fitted: memory grew" in found.summary, found.summary
    assert "7/200 0:00:04" in found.fix, found.fix


def test_an_oom_with_no_step_in_the_log_does_not_say_it_shows_one():
    found = explained(OOM)
    assert found.id == "log.cuda_oom", found.summary
    assert "The log shows a step" not in found.fix and "If it ran for many steps before this" in found.fix, (
        found.fix
    )


def test_an_oom_after_a_step_the_log_shows_names_that_step():
    found = explained("step 1/100 loss 2.31\n" + OOM)
    assert "The log shows a step before this ('step 1/100 loss 2.31')" in found.fix, found.fix
