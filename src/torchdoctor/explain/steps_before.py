"""The training steps a log printed above an error: whether the run had been training, and up to which step.

An out-of-memory error after many steps at one batch size is memory that grew from step to step, not a batch
that never fitted; the log's own progress lines are the evidence (nanoGPT's ``iter 23: loss 5.61``, a loop's
``step 23/1000``, the tqdm bar of the Hugging Face ``Trainer`` or Lightning, ``23/1000 [00:05<...]``).
"""

from __future__ import annotations

import re

# a rank's prefix as torchrun (--tee), accelerate or a logger print it, then the step's word and number
_WORDED = re.compile(
    r"^(?:\[[^\]\n]{1,40}\]:?\s*)?(?:[\w.:\-]{1,40}\s+)?(?:epoch\s+\d+\s*[,|:]?\s*)?"
    r"(?P<word>iter(?:ation)?|step|global_step|batch)\s*[:=#]?\s*(?P<step>\d{1,9})(?:\s*/\s*\d{1,9})?\b[:,|\s]",
    re.IGNORECASE,
)
# a progress bar's count of the steps done: tqdm's "23/1000 [00:05<00:17, 4.40it/s" (the last update on a line that
# holds several \r-separated ones), rich's (Lightning's RichProgressBar) "7/200 0:00:04 • 0:02:07"
# and only in iterations (it/s, s/it): not a download's bytes or datasets' "examples/s" of a map over the data
_BAR = re.compile(
    r"(?P<step>\d{1,9})/(?P<total>\d{1,9}) (?:\[\d[\d:]*<|\d{1,3}:\d\d:\d\d •)[^\r\n]{0,40}?(?<![A-Za-z])(?:it/s|s/it)\b"
)
# what a bar's description says before its count: none (the Trainer's bare bar), or training's words (Lightning's
# "Epoch 0:"); any other words count something else: "Loading checkpoint shards", "Evaluating", "Validation
# DataLoader 0", whose iterations above an out-of-memory error are no training steps that fitted
_BAR_DRAWN = re.compile(r"\d{1,3}%\|[^|\n]{0,200}\||^\s*\[[^\]\n]{1,40}\]:?")
_TRAINING_WORDS = re.compile(r"epoch|train|step|iter|batch|loss", re.IGNORECASE)
OUT_OF_MEMORY = ("cpu_oom", "cuda_oom")  # the kinds whose reading the steps change
# progress lines the collector keeps as it reads, for an error whose traceback is longer than the lines kept above
# it (Lightning's, 133 lines on an out-of-memory error, pushes its progress bar out of them)
KEPT = 8
MIN_STEPS = 3  # distinct step numbers, rising, before a log is read as a run that had been training


def steps_before(lines: list[str]) -> dict[str, str]:
    """The progress ``lines`` (those printed above an error) show: ``{"steps_first", "steps_last",
    "steps_line"}`` where at least ``MIN_STEPS`` distinct step numbers of one kind rise to the last one, or a
    progress bar counts at least that many steps done, else {}.

    >>> steps_before(["iter 0: loss 5.6", "iter 1: loss 5.5", "iter 2: loss 5.5", "Traceback ..."])
    {'steps_first': 'iter 0', 'steps_last': 'iter 2', 'steps_line': 'iter 2: loss 5.5'}
    """
    seen: dict[str, list[tuple[int, str]]] = {}
    for line in lines:
        if (worded := _WORDED.match(line)) is not None:
            seen.setdefault(worded["word"].lower(), []).append((int(worded["step"]), line.strip()))
        elif (bar := _training_bar(line)) is not None:
            seen.setdefault("bar", []).append((int(bar["step"]), line.strip().rsplit("\r", 1)[-1].strip()))
    for word, steps in seen.items():
        numbers = [number for number, _ in steps]
        if numbers != sorted(numbers):
            continue  # a count that went back: another run, or another epoch's bar
        if len(set(numbers)) >= MIN_STEPS:
            first = numbers[0]
        elif word == "bar" and numbers[-1] >= MIN_STEPS:
            first = 1  # a bar counts the steps done: one line is enough
        else:
            continue
        label = "step" if word == "bar" else word
        return {
            "steps_first": f"{label} {first}",
            "steps_last": f"{label} {numbers[-1]}",
            "steps_line": steps[-1][1][:200],
        }
    return {}


def progress_read(lines: list[str]) -> dict[str, str]:
    """``steps_before(lines)``, else ``{"steps_seen": <the last progress line>}`` where ``lines`` show steps too few
    to tell (one or two), else {} (no progress line: nothing says the run had been stepping)."""
    found = steps_before(lines)
    if found:
        return found
    seen = next((line.strip() for line in reversed(lines) if is_progress(line)), None)
    return {"steps_seen": seen.rsplit("\r", 1)[-1].strip()[:200]} if seen else {}


def is_progress(line: str) -> bool:
    """Whether ``line`` is one of the progress lines ``steps_before`` reads: a progress bar, a step's line."""
    if "it/s" in line or "s/it" in line:
        return _training_bar(line) is not None
    return _WORDED.match(line) is not None


def _training_bar(line: str) -> re.Match | None:
    """The count of the last progress bar on ``line`` where that bar counts training steps (else None)."""
    if "/" not in line:
        return None
    bars = list(_BAR.finditer(line))
    return bars[-1] if bars and _counts_training(line, bars[-1].start()) else None


def ran_before(facts: dict) -> str:
    """For the summary: the step the log printed last before the one that ran out ("" where it shows none)."""
    if "steps_last" not in facts:
        return ""
    return f" after {facts['steps_last']} (the steps above it fitted: memory grew from step to step)"


def memory_grew(facts: dict) -> str:
    """The fix's lead where the log shows steps that fitted before the one that ran out ("" otherwise)."""
    if "steps_last" not in facts:
        return ""
    return (
        f"The steps printed above it ran ({facts['steps_first']} … {facts['steps_last']}: {facts['steps_line']!r}): "
        "the batch fits, and memory grew from step to step, so a smaller batch only postpones it. "
        "Something keeps every step's tensors: a running total of the loss with its graph (total += loss: write "
        "total += loss.item()), outputs, logits or activations appended to a list or kept by a forward hook "
        "(keep output.detach().cpu(), or remove the hook), evaluation without torch.no_grad() (decorate it with "
        "@torch.no_grad()). Print the memory each step to see it grow (torch.cuda.memory_allocated(); on the "
        "CPU, the process's resident memory). Unless this step's batch was larger than the others (sequences "
        "padded to a longer one) or it was the first evaluation or checkpoint save: then that step needs the room."
    )


def _counts_training(line: str, count_at: int) -> bool:
    """Whether the bar whose count starts at ``count_at`` counts training steps: its description (the words
    before the count on the line's last update, a rank's prefix and the drawn bar taken off) is none or
    names training."""
    described = _BAR_DRAWN.sub("", line[:count_at].rsplit("\r", 1)[-1])
    return not re.search(r"[A-Za-z]", described) or _TRAINING_WORDS.search(described) is not None
