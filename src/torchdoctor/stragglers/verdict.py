"""Which rank holds the others back, and why: plain functions over the windows the ranks published.

In synchronous training every rank's step takes as long as the slowest rank's, so the step time names nobody.
What differs is each rank's *own* work in the step: waiting for data, its compute, and its time in collectives
besides waiting for the peers (the arrival skew at the step's collectives tells the wait). The straggler's own
work is longer; its victims' is not — their extra time is all waiting, so they are never named.

Every rank is compared with its peers on the *same* step: its own work minus the median of the peers' on that
step. Load that slows every rank alike (a busy shared machine, a noisy neighbour) cancels out step by step, and
a one-off stall of one rank (a garbage collection) is one step of many. A rank is named when, over the last
`STRETCH` steps, its excess is positive in at least `MAJORITY` of them, its median excess is at least `SLOWER`
of the peers' own work and stands `NOISE_MARGIN` standard errors clear of the step-to-step spread of that
difference (so a 5% slowdown is named where steps vary by 5%, and noise of the same size alone is not).

The cause is the part of the straggler's step that carries the excess (medians of the same per-step
differences): waiting for data (input), its compute (host when it got no more CPU time for it than the peers
— a core shared with another process — else device), or its collectives besides waiting (communication).

Some differences to the peers are the rank's own habit in a healthy job, not a slowdown: with gloo, who leaves
a collective last depends on the rank's place in the algorithm (one rank leaves ~5 ms after the others, step
after step, and so starts its next step later), and rank 0 also reads and judges the windows. So each part is
judged against the rank's *usual* difference to its peers (`Usual`): the median over the first `BASELINE`
steps after warm-up, then over the latest `HISTORY` steps that named nobody for `SETTLE` windows after them.
A rank that always leaves 5 ms last is not a straggler; one that becomes 5% slower than its own usual is. A
rank slower from its very start is therefore not named here (its medians are in the end summary, its device
in ``gpu.balance``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from torchdoctor.rank_list import ranks_text
from torchdoctor.stragglers.stats import (
    lower_quartile,
    mean_and_error,
    median,
    median_and_error,
    median_without,
)
from torchdoctor.stragglers.window import (
    AWAKE,
    CAUSE_OF,
    CAUSE_ON_DEVICE,
    COUNT_PARTS,
    GPU,
    OFFCPU,
    PARTS,
    PREEMPTED,
    TRANSFER,
    WORK,
    RankWindow,
    WindowVerdict,
    sharing_cpus,
)

# The steps compared: the latest STRETCH (at least MIN_STEPS of them on two ranks before any verdict).
STRETCH = 40
MIN_STEPS = 30
# The first WARMUP steps are never judged (start-up: the first batches, allocations, the devices measured).
WARMUP = 20
# A rank is named when its own work exceeds the peers' median on at least MAJORITY of those steps...
MAJORITY = 0.7
# ...its median excess is at least SLOWER of the peers' own work and MIN_SECONDS (timer noise)...
SLOWER = 0.025
MIN_SECONDS = 0.0003
# The rank's whole step must be longer by about as much as the part: within two standard errors of it or
# ELSEWHERE of it, whichever is more. Two standard errors alone shrink to nothing on a steady stretch, and a
# shift elsewhere too small to matter then hides a large one (the lagged test job at load 4-6, 2026-11-29,
# 2 runs of 40: next() 60 ms longer at 3,000 standard errors, never named, its work 2.6 ms short of that at
# 56 se — it waited less for a CPU while it slept, and its peer's compute slowed on the shared cores).
ELSEWHERE = 0.25
# ...and NOISE_MARGIN standard errors of that median (from the step-to-step spread of the difference).
NOISE_MARGIN = 3.5
# The rank's own work as a whole must be longer too, on OWN_MAJORITY of the steps and OWN_MARGIN standard
# errors clear (looser: it carries every part's noise), so that a part that differs by the rank's role in the
# collectives (who leaves a ring last) names nobody whose step is not longer.
OWN_MAJORITY = 0.65
OWN_MARGIN = 2.5
# Parts a rank sleeps in (waiting for data, a slow link): it hands its core to the others and later waits less
# for it, so its work without the waiting for a CPU (`WORK`) may stand for its own work in the test of the whole.
SLEEPING = ("data", "transfer", "blocked")
# ...but for a slow link only where its own waiting for a CPU per step did not rise against its own usual
# median (`Usual.own_usual`, not against its peers') by OWN_RISE of the collectives' excess, nor by
# MIN_SECONDS: the stand-in is for a rank that handed its core over, and one that waits longer for a CPU than
# it used to handed nothing over. If its own work is not longer then, its later exits did not lengthen its
# step: they follow the CPU it was kept off. 4 ranks on a 2-core VM (2026-11-30, session 23): in a healthy
# run, a rank that had waited 10 ms per step for a CPU against its peers' 21-27 (steps 20-160) came to wait
# about as long as they did and left the loss all-reduce 4-9 ms later: 8 `communication` false alarms in 1,000
# steps, its own work not longer by the whole-step test in 7, its work less its waiting 3.4-4.5 standard
# errors out. 4 of the 8 had its waiting 5-14 ms above its own usual; without the first, its later steps
# became its usual, and from step ~340 it left collectives last by habit (`HABIT`), as rank 1 does in the
# other runs of that recording: none of the 8 is said. A usual difference to the peers that is negative counts
# as none (`Usual.figures`), so the rise held against its exits (`_waiting_rise`) did not see its own. Waiting
# for data is not held to it: its whole-step test is waived (`CONSISTENT_ONLY`), and on those recordings the
# rule cost a planted 10% slow next().
HANDED_OVER = ("transfer",)
# For these parts the rank's own work need not be longer by OWN_MARGIN standard errors, only not shorter than the
# part's excess by two (quiet parts: a next() longer by 6 ms at 26 standard errors is plain where the whole step,
# ten times noisier on a busy machine, is not). The loop asleep or blocked is as quiet where the machine is: a
# loop asleep 0.75 ms per step more (5% of the step, on a quiet 2-core VM) stood 3-5 standard errors out on 75-85%
# of the steps, its own work 0.2-2.1 (the kept recording s35-2r-quiet: 4 of 4 episodes named with this, 0 before;
# no healthy step of it or of the loaded s35-2r named). On a loaded machine a rank's time asleep or blocked rises
# as its waiting for a CPU falls (both follow the run-queue wait outside the compute, `window.BLOCKED`), up to 6
# standard errors on 70-88% of the steps in healthy runs, but then its own work is shorter by far more (6-33 ms,
# its excess 2-10 ms): the test of not shorter elsewhere holds against it.
CONSISTENT_ONLY = ("data", "blocked")
# CPU time is as quiet where it stands far out: the extra CPU time of more work is clear at once (10-30 standard
# errors in 40 steps on a loaded 2-core VM), the rank's own work, which carries the noise of its waiting for a
# CPU (7-12 ms from one step to the next there), is not. CPU time at least CLEAR_MARGIN standard errors longer
# than usual on CLEAR_MAJORITY of the steps is held to the same test as waiting for data; less far out it is
# held to the whole-step test: a healthy rank's CPU time drifts too (up to 9 standard errors out on 65% of the
# steps on that VM; this test named such a drift once in ~18,000 healthy steps judged again).
CLEAR_PARTS = ("cpu", "gpu")
CLEAR_MARGIN = 8.0
CLEAR_MAJORITY = 0.9
# The part named as the cause must carry at least this share of the excess, else the line says it is unclear.
EXPLAINED = 0.5
# Each rank's usual difference to its peers: the first BASELINE steps judged (taken as healthy: nothing is named
# before they are in), then a window joins once SETTLE windows after it named nobody (the onset of a slowdown,
# named within them, never becomes usual); the latest HISTORY steps kept.
BASELINE = 40
SETTLE = 5
HISTORY = 200
# The usual figures are worked out again once REFRESH steps joined them (rank 0's reader judges every window;
# working them out from HISTORY steps per rank at every window cost it 3.8 ms per window at 8 ranks).
REFRESH = 50
# A rank that left its collectives later than the peers' median on at least HABIT of its usual steps leaves
# them last by its place in the algorithm (gloo): how much later grows and shrinks with the machine's load
# (0.2 ms on a quiet machine, 5 ms on a busy one, within one run), so its exits say nothing of its link:
# they are not judged, and left out of its own work (usual and judged alike).
HABIT = 0.6
# Its exits are judged beyond LEAVER_MARGIN standard errors, not NOISE_MARGIN: they follow the machine's load
# in bursts that last many steps, so its steps are not independent and their standard error is too small.
# Kept runs (2026-11-29): the lagged test job's healthy stretches reached 4.1 standard errors (3 of 52 runs
# at 3.5 or more); the sweep's 6,000 healthy steps of validate-1129 had two false alarms from them at 3.8;
# the slow links the sweeps named through them stood at 4.9 or more (at 5.0, 2 of threads-planted-1129's
# 8 10% slow links were lost).
LEAVER_MARGIN = 4.5
# On a loaded VM its exits come in two modes, switching every few tens or hundreds of steps: with its peers (or at
# its usual lag), or a fixed amount later (3.3 ms on this 2-core VM, about 4 ms in the lagged test job: a thread that
# blocked in the collective, or slept after it, resumes that much later, its waiting for a CPU as counted unchanged:
# the scheduling of the VM or of its host). A stretch mostly in the
# later mode is the machine's, however many standard errors out; a slow link delays every step. So its exits name it
# only where (`Usual.exits`) their median over the stretch is later than the latest median of any STRETCH usual
# steps of the run by LEAVER_WORST of that, and their lower quartile (the steps in the earlier mode) moved beyond
# its usual lower quartile by LEAVER_FLOOR of the median's move. The kept loaded recording s37-2r (2026-12-03,
# session 37): all 5 false alarms in its 4,000 healthy steps were rank 1's exits 2.7-3.8 ms later than usual at
# 6-60 standard errors, each after a healthy stretch of the run about as late (3.0-3.8 ms late against at most
# 3.1-3.8 before: within a quarter of it), two of them with the lower quartile of their exits moved by 0.0-0.2 ms.
# None is named with these, and no planted episode is lost (22 of 40; the one slow link named through the habitual
# leaver's exits: 6.0 ms late against at most 3.2, lower quartile +6.6 ms). The lagged test job that failed in CI
# that day (rank 1 lagging 5.6 ms by design; from step 60 about 6 steps in 10 at 9.5-10.5 ms, the rest at 5.6:
# median +3.5 ms at 7 standard errors, lower quartile +0.5) said `communication` before its planted fault; with
# these its first line is the fault's, `input` (tests/fixtures/stragglers/lagged-leaver-two-modes).
LEAVER_WORST = 0.25
LEAVER_FLOOR = 0.25
CAUSES = ("input", "host", "device", "communication")
# Causes said only once the stretches of two windows in a row name the rank for them: its CPU time and its
# waiting for a CPU are what the machine's other work moves, for tens of steps at a time, and gives back.
# Chosen on 26,000 healthy steps kept on a shared 2-core VM (2026-11-29): 12 of their 26 verdicts came and went
# in one window, all `device` or `host`. A slowdown that stays is named one window (10 steps) later: 2 of 64
# planted episodes then fell past the 50th step, and 2 of 64 in a fresh sweep whose 6,000 healthy steps had no
# such verdict to spare (docs/stragglers-measurements.md). Waiting for data and a slow link are said at once
# (one such verdict of the 26 came and went in one window; in the kept 5% slow-link runs three of four
# episodes were named at the 50th step, which one more window would miss).
PERSIST = ("device", "host")
# ...but not where the part is the loop asleep or blocked (`BLOCKED`): the machine's other work moves a rank's CPU
# time and its waiting for a CPU, not the time it sleeps (the kept recordings' healthy steps: never named for it)
AT_ONCE = ("blocked",)
# For these parts the rank's own figure must have risen against its own usual by OWN_RISE of its excess over the
# peers: with two ranks a rank is "longer than its peer" as much when the peer got faster. On a shared 2-core VM a
# rank's CPU time for the same compute falls by a quarter for tens of steps (the other vCPU idle) and rises
# back, and its peer was named `device` for it (2026-11-30: 5 of 10 false alarms in 4,000 healthy steps).
ROSE_ITSELF = ("cpu", "offcpu", "blocked", "gpu")
OWN_RISE = 0.5
# For these parts the rank is not named where its peers' own figure fell, against their own usual medians, by
# TRADED of its own rise or more: the same work took one rank more CPU time and its peers as much less, which is
# the machine handing CPU cycles from one to the other (two vCPUs of one physical core, a host's scheduler), not
# more work on one rank. 2-rank recordings on a shared 2-core VM (2026-11-30, session 23, second helper): 4
# `device` false alarms in 12,000 healthy steps (loaded and quiet) had the peer's CPU time fall by 0.7-1.0 of the
# named rank's rise; the planted compute slowdowns named on the 2-rank recordings had their peer's fall by 0.21 of
# it at most. Not for ranks that take turns at their CPUs (`sharing_cpus`): there a rank's longer compute
# leaves its peers the CPUs to themselves, and their CPU time falls for its reason (4 ranks on 2 CPUs, a planted 5%
# compute slowdown: rank 2 +1.2 ms, its peers -0.8 ms; the rule cost its naming at step 400). Not for waiting for a
# CPU: in the `host` false alarms the peer's fell by under a third of the named rank's rise.
TRADED_PARTS = ("cpu",)
TRADED = 0.5
# Nor for its CPU time where its waiting for a CPU rose, against its own usual and beyond its peers' rise, by
# KEPT_OFF times its CPU time's rise or more: a rank kept off its core by another process spends a little more
# CPU time on the same work (cold caches after each preemption), and where the preemptions do not confirm the
# busy core (`PREEMPTED_TOO`) that little was named `device`. nanoGPT's train.py with a busy process on rank 1's
# core (2026-12-03, session 41): `device` 3% slower, its CPU time +3 ms and its waiting for a CPU +90 ms per step,
# 27 times; its planted CPU work of 10% and 30% (as `device`): 1.3-5 times.
KEPT_OFF = 8.0
# Where the ranks of a host outnumber the CPUs they may run on (each rank publishes its CPUs, `record`), they take
# the CPUs from each other: which of them waits for one is the kernel's choice of the moment, not the rank's
# fault. Where one of them has waiting for a CPU (host) as its first cause, none of them is named for it, nor for
# its CPU time (`device`): the ranks switched on and off a busy CPU spend more CPU time on the same work, and once
# the waiting rank was left out, its co-runner on a pinned CPU was named `device` at 3% (a busy process planted
# on that CPU). 4 ranks on a 2-core VM (2026-11-30): all 5 false alarms in 2,000 healthy steps were `host` lines
# naming a rank kept off a CPU 2-3 times longer than its peers; 0 with this rule, 2 planted episodes lost of 32.
SHARED_PART = "offcpu"
SHARED_PARTS = ("offcpu", "cpu")
# A busy core is a rank kept off its CPU by something else, which the kernel counts twice: the time the training
# thread waited in the run queue (`offcpu`) and the times it was taken off its CPU while it could still run (its
# involuntary context switches, `PREEMPTED`; a sleep in next() or a collective adds wake-ups to the first, not to
# the second). Where both stand `OWN_MARGIN` standard errors beyond the rank's usual, on the same steps, the
# waiting is judged at `OWN_MARGIN`, not `NOISE_MARGIN` (the rest of the test unchanged: `MAJORITY`, `SLOWER`,
# the whole step, its own rise, `PERSIST`, `sharing_cpus`): two readings of one cause that far out by chance
# together are rarer than one at `NOISE_MARGIN` (2.5 standard errors one-sided: 0.6% each, 0.004% both if
# independent; 3.5: 0.02%). On a quiet 2-core VM a busy process taking 5-10% of a rank's CPU time raised its
# preemptions by 1.6-2.2 per step (4.7-6.9 standard errors over its 232 slowed steps) where its waiting for a CPU
# stood 1.7-3.2 (2026-11-30, session 24: docs/stragglers-measurements.md). On the eight kept recordings it named
# one more planted busy core (of 64) and changed no other line; three single windows of loaded healthy steps named
# a rank `host` that were not said (`PERSIST`); at 2.25 standard errors for the waiting, a loaded healthy run
# gained a `host` line.
CONFIRMED = ("offcpu",)
# For ranks with CPUs of their own (not `sharing_cpus`) that count their preemptions, the waiting for a CPU names
# the rank (`host`) only where that second reading stands `OWN_MARGIN` beyond its usual too (`CONFIRMED`'s test):
# a busy process on its core takes the CPU from it while it could run; waiting that rose without that is waiting
# at wake-ups (after each sleep in next() or a collective), which follows the machine's load moving from core to
# core. The busy cores planted on the quiet 2-rank recordings, over each episode's last 40 steps: where the
# waiting stood 2 standard errors out or more (5 of 16; never beyond 3.6, +1.5-2.9 ms per step) the preemptions
# stood 3.3-4.3 (+1.8-2.6 per step). The `host` false alarms of the loaded ones had the waiting 5-12 ms per step
# longer at 4-12 standard errors, the preemptions at -1.8 to +1.9 (2026-11-30, session 24: 4 of 5 not said, one
# of them said `device` instead; none of the ten kept recordings' 304 planted episodes lost, one said `device`,
# its right cause, for `host`; docs/stragglers-measurements.md). Not for ranks that take turns at their CPUs:
# `SHARED_PART` needs their `host` candidates (held to it, 4 ranks on 2 CPUs gained 3 false alarms and lost a
# planted episode). A rank whose preemptions read 0 on every step of the stretch (not counted: not Linux) is
# judged as before.
PREEMPTED_TOO = ("offcpu",)
# For a slow link the rank's own work less its time asleep or blocked (`window.AWAKE`) may stand for its own work in
# the test of the whole step too: its peers wait for its late exits partly asleep in their compute, not in a
# collective whose arrivals are compared, and that waiting lengthens the own work they are compared by. The kept
# loaded 2-rank recording s37-2r (2026-12-03, session 37, load 3-8): a slow link of 5% left its rank's all-reduce
# 3.3 ms late at 9 standard errors on every step of its first 40, its own work +18% at 1.7 standard errors (not
# named), its peer's time asleep 2.2 ms per step longer than usual; its own work less it +4.0 ms at 2.6: named
# (1 more of 8 slow links), no healthy step and no other rank named more. The other parts are not given it: for
# the CPU time, the waiting for a CPU and the time asleep too, the same stand-in gave 6 false alarms there against
# 5, two of them `host` (a loaded rank's time asleep falls as its waiting for a CPU rises).
PEERS_ASLEEP = ("transfer",)
# A rank's exits judged by the test of every part (not the habitual last leaver's, `_leaver_slowed`) name it only
# where they are late on most of its steps and it was not kept off its CPU for it (`_late_throughout`). On a loaded
# VM any rank's exits come in the two modes of the habitual leaver's (`LEAVER_WORST`): with its peers, or 3-4 ms
# after them on every step for tens to hundreds of steps, its training thread mostly waiting longer for a CPU too.
# A slow link delays every step, the rank asleep in it. So the lower quartile of its lateness beyond its usual must
# be at least EXITS_FLOOR of the median's, and its own waiting for a CPU per step must not have risen beyond its
# own usual median by `OWN_RISE` of the lateness (`_handed_over`: against its own usual, not its peers', whose
# waiting falls as they wait for it; `_waiting_rise` counts theirs). The kept loaded recording s38-2r
# (2026-12-03, session 38, load ~4): 10 of its 12 false alarms were such lines, on rank 0 or 1 (neither left last
# on `HABIT` of its steps there), 2.8-3.7 ms late beyond usual, the lower quartile at -0.68 to +0.19 of that, the
# waiting for a CPU longer than its own usual by 0.23-1.32 of it (over 0.5 on 6); the floor alone left 4 (2 of
# them the same stretches later, wholly in the later mode, waiting 0.61 and 0.97 of it longer), the waiting alone
# 6, both 2 (the habitual leaver's). The slow links named through these exits (the kept s37-2r: a 5% slow link on
# rank 0, three of four episodes, 1.0-3.3 ms late) had the lower quartile at 0.45-0.95 of the median and the
# waiting -3.1 to +0.27 of it at the windows that name them; none is lost there (23 of 40) or on s38-2r (21 of
# 40), no victim named. The floor holds from 0.1 to 0.5 alike there.
EXITS_FLOOR = 0.25
# The exits are as quiet where they are late on `CLEAR_MAJORITY` of the steps by `CLEAR_EXITS` standard errors:
# held to the test of not shorter elsewhere, not to the whole-step test (as waiting for data, and CPU time far
# out, `CLEAR_PARTS`), the rest of their test unchanged (`EXITS_FLOOR`, `_late_throughout`, `_waiting_rise`). A
# 5% slow link sleeps 0.5 ms after each loss all-reduce of a 10 ms step; on a loaded VM its rank's own work
# varies by several ms from step to step: where this first named one, its own work stood -2.8 to +1.5 standard
# errors out (its work less its waiting for a CPU 0.5-1.3, less its time asleep -2.7 to +1.4), its exits 5.6-8.6
# on 90-100% of the steps. The margin is `LEAVER_MARGIN`'s: exits follow the machine's load in bursts, so their
# steps are not independent. The kept loaded recordings s37-2r, s38-2r, s38-2r-b (2026-12-03, session 39): 4 more
# of their 12 5% slow links named (23 -> 24, 21 -> 22, 24 -> 26 of 40); no window of a healthy run, nor of any rank
# but a planted slow link's, changed, from 3.5 to 7.5 standard errors alike. On a fourth, s39-2r, not tuned on:
# no line changed (its slow links' exits judged as the habitual leaver's in all but two windows).
CLEAR_EXITS = LEAVER_MARGIN
# The parts whose test of not shorter elsewhere may count the rank's own work without its peers' later exits
# (`_unexited`). Not the loop asleep or blocked: a rank asleep in its loop while a peer leaves the all-reduce late is
# waiting for that peer (`PEERS_ASLEEP`), and its time asleep and the peer's later exits are the same wait.
UNEXITED = ("data", "cpu", "transfer", "gpu")


def _threads_excess(verdict: WindowVerdict) -> dict[int, float]:
    """Per rank of one window: its other threads' waiting for a CPU per step over its peers' median (ranks
    without the figure, or with no peer that has it, left out)."""
    read = {rank: r.threads for rank, r in verdict.ranks.items() if r.threads is not None}
    if len(read) < 2:
        return {}
    ordered = sorted(read.values())
    return {rank: value - median_without(ordered, value) for rank, value in read.items()}


def _threads_rise(excesses: list[dict[int, float]], rank: int, usual: float | None) -> float:
    """How much longer the rank's other threads (its communication threads among them) waited for a CPU per
    step over the stretch than usually, against their peers: the median over the stretch's windows of their
    `_threads_excess` (``excesses``) less its usual median (0 where either is not known)."""
    values = [excess[rank] for excess in excesses if rank in excess]
    if usual is None or not values:
        return 0.0
    return max(0.0, median(values) - usual)


class Stretch(NamedTuple):
    """What `judge_stretch` found over the latest steps."""

    rank: int | None  # the straggler, or None
    slower: float  # how much longer its own work is than the peers', as a fraction
    cause: str | None
    text: str  # the cause in words
    figures: str  # every rank's figures behind it, for the JSON
    part: str = ""  # the part (`PARTS`) that named the cause


def judge_stretch(
    windows: list[WindowVerdict],
    usual: Mapping[int, list[tuple[float, float, bool]]] | None = None,
    usual_load: float | None = None,
    usual_threads: Mapping[int, float] | None = None,
    usual_own: Mapping[int, list[float]] | None = None,
    usual_exits: Mapping[int, tuple[float, float]] | None = None,
) -> Stretch:
    """The straggler or None, how much slower, the cause, in words, the figures over the steps of
    ``windows``: each rank's parts against the median of its peers' on the same steps, less the rank's
    ``usual`` difference per part ((median, standard error, whether judged) per `PARTS`, from `Usual`;
    without it none: a rank absent from a given ``usual`` is not judged). A part names the rank when it exceeds the peers' by
    more than usual on `MAJORITY` of the steps, by a median of at least `SLOWER` of the peers' own work and
    `NOISE_MARGIN` standard errors (the stretch's and the usual's together; the waiting for a CPU `OWN_MARGIN`
    where the rank's preemptions stand as far out, `CONFIRMED`), the rank's own work as a whole
    is longer than usual too (`OWN_MAJORITY`, `OWN_MARGIN`; for the parts a rank sleeps in, `SLEEPING`, its own
    work less its waiting for a CPU may stand for it: `WORK`; for those in `PEERS_ASLEEP`, its own work less its time
    asleep or blocked: `window.AWAKE`; for the parts in `CONSISTENT_ONLY`, and for those in
    `CLEAR_PARTS` that stand `CLEAR_MARGIN` standard errors out on `CLEAR_MAJORITY` of the steps, and the exits at
    `CLEAR_EXITS`, that test is waived: `_quiet`) and
    not shorter elsewhere by as much (its total
    excess within two standard errors of the part's, or `ELSEWHERE` of it; where the whole-step test is waived,
    its own work without its peers' later exits may stand for it, `_unexited`). Lateness leaving the collectives
    counts only beyond twice the rank's rise in waiting for a CPU since its usual (`_waiting_rise`, from ``usual_load``,
    `Usual.load`), and only where it is late on most steps and the rank's own waiting for a CPU did not rise with
    it (`_late_throughout`); for a rank that leaves them last by habit, beyond its usual lateness (`_leaver_slowed`).
    ``usual_threads`` (`Usual.threads_usual`): each rank's usual excess of its other threads' waiting for a
    CPU, whose rise over the stretch is given in the figures (`_threads_rise`), not judged. ``usual_own``
    (`Usual.own_usual`): each rank's own usual median per part; a part in `ROSE_ITSELF` names the rank only where
    its own median rose beyond it by `OWN_RISE` of its excess (else its peers got faster), and a part in
    `TRADED_PARTS` not where its peers' fell as it rose (`_traded`: the machine moved CPU cycles between them). Ranks whose CPUs
    more ranks share than there are (`sharing_cpus`) are left out by `_likeliest` where one of them waits for a
    CPU; the others are named for a part in `PREEMPTED_TOO` only where their preemptions stand out too."""
    excess: dict[int, list[list[float]]] = {}  # rank -> per step: excess of each part over the peers' median
    base: dict[int, list[float]] = {}  # rank -> per step: the peers' median own work
    mine: dict[int, list[tuple[float, ...]]] = {}
    peers_parts: dict[int, list[list[float]]] = {}
    threads_excesses = [_threads_excess(v) for v in windows if v.first_step >= WARMUP]  # once, not per rank
    judged = [v for v in windows if v.first_step >= WARMUP]
    # on CUDA, every rank's device time known over the whole stretch: the device time is judged (`GPU`); on CUDA
    # the training thread's CPU time is the host's (`CAUSE_ON_DEVICE`), and neither it nor its time asleep is judged
    # where the device time is not known on every rank (then nothing tells a host that spins or sleeps waiting for a
    # slower device from more CPU work or a loop that sleeps); nor where the ranks' usual steps lacked it (`Usual`)
    device = (
        bool(judged)
        and all(v.on_device for v in judged)
        and (usual is None or all(habit[GPU][2] for habit in usual.values()))
    )
    cuda = any(v.on_cuda for v in judged)
    cause_of = CAUSE_ON_DEVICE if cuda else CAUSE_OF
    sharing = sharing_cpus(windows[-1].ranks) if windows else {}
    for verdict in windows:
        if verdict.first_step < WARMUP:
            continue
        differences = _excess(verdict)
        for rank, steps in _compared(verdict).items():
            excess.setdefault(rank, []).extend(differences[rank])
            base.setdefault(rank, []).extend(medians[0] for _own, medians in steps)
            mine.setdefault(rank, []).extend(own for own, _medians in steps)
            peers_parts.setdefault(rank, []).extend(medians for _own, medians in steps)
    candidates = []  # (slower, rank, part, its excess, threads' rise) of each rank a part names
    reasons = []
    for rank, rows in excess.items():
        n = len(rows)
        peers_own = median(base[rank]) if rows else 0.0
        if n < MIN_STEPS or peers_own <= 0 or (usual is not None and rank not in usual):
            continue
        habit = usual[rank] if usual is not None else [(0.0, 0.0, True)] * len(PARTS)
        leaver_rows = rows
        if not habit[TRANSFER][2]:  # leaves last by habit: its exits' lateness is the algorithm's
            rows = _without_exits(rows)
        waits_more = _beyond_usual(rows, OFFCPU, habit)[1]  # than its peers, beyond its usual difference
        rise = _waiting_rise(waits_more, peers_parts[rank], usual_load)
        threads = _threads_rise(threads_excesses, rank, (usual_threads or {}).get(rank))
        slower_overall, own_middle, own_error, own_ahead = _whole(rows, 0, habit, peers_own)
        slower_work, work_middle, work_error, work_ahead = _whole(rows, WORK, habit, peers_own)
        slower_awake, awake_middle, awake_error, awake_ahead = _whole(rows, AWAKE, habit, peers_own)
        unexited = _unexited(rows, habit)
        figures = [
            f"work {work_middle * 1000:+.1f} ms beyond usual {habit[WORK][0] * 1000:+.1f} ({work_ahead:.0%} "
            f"ahead, {work_middle / work_error:.1f} se)",
            f"awake {awake_middle * 1000:+.1f} ms beyond usual {habit[AWAKE][0] * 1000:+.1f} ({awake_ahead:.0%} "
            f"ahead, {awake_middle / awake_error:.1f} se)",
            f"own without the peers' later exits {unexited[0] * 1000:+.1f} ms beyond usual "
            f"({unexited[0] / unexited[1] if unexited[1] else 0.0:.1f} se)",
        ]
        passed: list[tuple[float, str]] = []
        preempted = _beyond_usual(rows, PREEMPTED, habit)
        confirmed = preempted[1] >= OWN_MARGIN * preempted[2]  # more often taken off its CPU than usual
        counted = any(row[PREEMPTED] for row in mine[rank])  # its preemptions are read (`PREEMPTED_TOO`)
        figures.append(
            f"preempted {preempted[1]:+.2f} per step beyond usual {habit[PREEMPTED][0]:+.2f} "
            f"({preempted[1] / preempted[2]:.1f} se)"
        )
        for k, name in enumerate(PARTS):
            if (
                name in ("own", "work", "preempted", "awake")
                or not habit[k][2]
                or (name == "gpu" and not device)
                or (name in ("cpu", "blocked") and cuda and not device)
            ):
                continue
            values, middle, error = _beyond_usual(rows, k, habit)
            ahead = sum(value > 0 for value in values) / n
            z = middle / error if error else (float("inf") if middle > 0 else 0.0)
            figures.append(
                f"{name} {middle * 1000:+.1f} ms beyond usual {habit[k][0] * 1000:+.1f} ({ahead:.0%} ahead, "
                f"{z:.1f} se)"
            )
            # the rank's step must be longer as a whole, and not shorter elsewhere by as much: its own work,
            # or for a part it sleeps in its work without waiting for a CPU (`WORK`: a rank that sleeps hands
            # its core to the others; one that computes does not, and its CPU time is judged as it is)
            wholes = [(slower_overall, own_middle, own_error)]
            if name in SLEEPING and _handed_over(name, mine[rank], (usual_own or {}).get(rank), middle):
                wholes.append((slower_work, work_middle, work_error))
            if name in PEERS_ASLEEP:
                wholes.append((slower_awake, awake_middle, awake_error))
            quiet = _quiet(name, ahead, z)
            if quiet and name in UNEXITED and habit[TRANSFER][2]:  # without the peers' later exits
                wholes.append((True, *unexited))
            if (
                any(
                    (slower or quiet) and whole >= middle - max(2 * spread, ELSEWHERE * middle)
                    for slower, whole, spread in wholes
                )
                and ahead >= MAJORITY
                and middle >= max(MIN_SECONDS, SLOWER * peers_own, _margin(name, confirmed) * error)
                and (name != "transfer" or middle >= 2 * rise)
                and (
                    name != "transfer"
                    or _late_throughout(values, middle, mine[rank], (usual_own or {}).get(rank))
                )
                and _rose_itself(name, mine[rank], (usual_own or {}).get(rank), middle)
                and (rank in sharing or not _traded(name, rank, mine, usual_own or {}))
                and not _kept_off(name, rank, mine, usual_own or {})
                and (name not in PREEMPTED_TOO or rank in sharing or confirmed or not counted)
            ):
                passed.append((middle, name))
        if not habit[TRANSFER][2] and usual_load is not None:
            # its exits are counted from its peers', and peers the machine wakes sooner leave earlier: its
            # waiting longer than theirs is enough (the lagged test job, 2026-11-29: exits +7.5 ms at 4.6 se,
            # waiting 4.1 ms longer than its peer, the peer less than usual; the kept runs at load 8-12: 5 of 13
            # false alarms gone, 5 of 16 slow links on a habitual leaver lost)
            slowed = _leaver_slowed(
                leaver_rows, habit, peers_own, max(rise, waits_more), (usual_exits or {}).get(rank)
            )
            figures.append(slowed[1])
            if slowed[0] is not None:
                passed.append((slowed[0], "transfer"))
        if passed:
            peer_cpu = median(row[PARTS.index("cpu")] for row in peers_parts[rank])
            peer_off = median(row[OFFCPU] for row in peers_parts[rank])
            per_cpu = max(0.0, peer_off) / peer_cpu if peer_cpu > 0 else 0.0
            middle, name = _first_cause({part: m for m, part in passed}, per_cpu, device)
            candidates.append((middle / peers_own, rank, name, middle, threads))
        if threads:
            figures.append(f"other threads waiting for a CPU {threads * 1000:+.1f} ms per step beyond usual")
        reasons.append(
            f"rank {rank} over {n} steps: own {own_middle / peers_own:+.1%} of the peers' "
            f"{_ms(peers_own)} beyond usual {habit[0][0] * 1000:+.1f} ms ({own_ahead:.0%} ahead, "
            f"{own_middle / own_error:.1f} se); " + ", ".join(figures)
        )
    best = _likeliest(candidates, sharing, windows[-1].ranks, reasons, cause_of)
    if best is None:
        return Stretch(None, 0.0, None, "", "; ".join(reasons))
    slower, rank, part, middle, threads = best
    habit = usual[rank] if usual is not None else None
    text = _cause_text(
        part, mine[rank], peers_parts[rank], habit[PARTS.index(part)][0] if habit else 0.0, cuda
    )
    if part == "transfer" and threads >= middle:
        text += (
            f"; its other threads waited {_ms(threads)} per step longer than usual for a CPU, which"
            " alone slows its collectives as much: a busy machine, or its link"
        )
    return Stretch(rank, slower, cause_of[part], text, "; ".join(reasons), part)


def _likeliest(
    candidates: list[tuple[float, int, str, float, float]],
    sharing: Mapping[int, tuple[int, frozenset[int]]],
    ranks: Mapping[int, RankWindow],
    reasons: list[str],
    cause_of: Mapping[str, str] = CAUSE_OF,
) -> tuple[float, int, str, float, float] | None:
    """The candidate slowest against its peers, leaving out the ranks that take CPUs from each other
    (``sharing``, `sharing_cpus`) where one of them is named for its waiting for a CPU (`SHARED_PART`): none of
    them is named for that or for its CPU time (`SHARED_PARTS`: a busy CPU's co-runners spend more CPU time on
    the same work too). Why one is left out is added to ``reasons``."""
    group = {rank: (ranks[rank].host, cpus) for rank, (_, cpus) in sharing.items()}
    contended = {group[rank] for _, rank, part, *_ in candidates if rank in group and part == SHARED_PART}
    best = None
    for candidate in candidates:
        slower, rank, part = candidate[:3]
        if group.get(rank) in contended and part in SHARED_PARTS:
            count = len(sharing[rank][1])
            reasons.append(
                f"rank {rank}: {cause_of[part]} not blamed, {sharing[rank][0]} ranks share CPU{'s' * (count != 1)} "
                f"{ranks_text(sharing[rank][1])}"
            )
        elif best is None or slower > best[0]:
            best = candidate
    return best


def _quiet(name: str, ahead: float, z: float) -> bool:
    """Whether part ``name``, longer than usual on ``ahead`` of the steps at ``z`` standard errors, is held only to
    the test of not shorter elsewhere, not to the whole-step test: always for a part in `CONSISTENT_ONLY`; on
    `CLEAR_MAJORITY` of the steps, at `CLEAR_MARGIN` for a part in `CLEAR_PARTS` and `CLEAR_EXITS` for the exits."""
    if name in CONSISTENT_ONLY:
        return True
    if ahead < CLEAR_MAJORITY:
        return False
    return (name in CLEAR_PARTS and z >= CLEAR_MARGIN) or (name == "transfer" and z >= CLEAR_EXITS)


def _margin(name: str, confirmed: bool) -> float:
    """The standard errors part ``name`` must stand clear by: `NOISE_MARGIN`, or `OWN_MARGIN` for a part in
    `CONFIRMED` where its second reading stands `OWN_MARGIN` beyond its usual too (``confirmed``)."""
    return OWN_MARGIN if name in CONFIRMED and confirmed else NOISE_MARGIN


def _handed_over(
    name: str, mine: list[tuple[float, ...]], own_usual: list[float] | None, excess: float
) -> bool:
    """Whether the rank's work less its waiting for a CPU (`WORK`) may stand for its own work for part ``name``
    (in `SLEEPING`): always for a part not in `HANDED_OVER` or without a usual; for one in it, only where its own
    waiting for a CPU per step (``mine``) did not rise beyond its own usual median by `OWN_RISE` of the part's
    ``excess`` over the peers, nor by `MIN_SECONDS`."""
    if name not in HANDED_OVER or not own_usual:
        return True
    rise = median(row[OFFCPU] for row in mine) - own_usual[OFFCPU]
    return rise < max(MIN_SECONDS, OWN_RISE * excess)


def _late_throughout(
    values: list[float], excess: float, mine: list[tuple[float, ...]], own_usual: list[float] | None
) -> bool:
    """Whether the rank's lateness leaving the collectives beyond its usual (``values``, per step; median
    ``excess``) is a slow link's, not the machine's later mode (`EXITS_FLOOR`): its lower quartile at least
    `EXITS_FLOOR` of the median, and its own waiting for a CPU per step (``mine``) not risen beyond its own usual
    median by `OWN_RISE` of the lateness (`_handed_over`)."""
    return lower_quartile(values) >= EXITS_FLOOR * excess and _handed_over(
        "transfer", mine, own_usual, excess
    )


def _rose_itself(
    name: str, mine: list[tuple[float, ...]], own_usual: list[float] | None, excess: float
) -> bool:
    """Whether part ``name`` of the rank's own steps (``mine``) rose beyond its own usual median by `OWN_RISE`
    of its ``excess`` over the peers (always, for a part not in `ROSE_ITSELF` or without a usual)."""
    if name not in ROSE_ITSELF or not own_usual:
        return True
    k = PARTS.index(name)
    return median(row[k] for row in mine) - own_usual[k] >= OWN_RISE * excess


def _traded(
    name: str, rank: int, mine: Mapping[int, list[tuple[float, ...]]], own_usual: Mapping[int, list[float]]
) -> bool:
    """Whether the rank's part ``name`` (in `TRADED_PARTS`) rose beyond its own usual median while its peers'
    (the median of their medians beyond their own usual ones, from ``mine`` and ``own_usual``) fell by
    `TRADED` of that rise or more (False for other parts, or without the usual figures; not asked for ranks
    that take turns at their CPUs, `sharing_cpus`)."""
    if name not in TRADED_PARTS or rank not in own_usual:
        return False
    k = PARTS.index(name)
    peers = [peer for peer in mine if peer != rank and peer in own_usual and mine[peer]]
    if not peers:
        return False
    rise = median(row[k] for row in mine[rank]) - own_usual[rank][k]
    fall = -median(median(row[k] for row in mine[peer]) - own_usual[peer][k] for peer in peers)
    return rise > 0 and fall >= TRADED * rise


def _kept_off(
    name: str, rank: int, mine: Mapping[int, list[tuple[float, ...]]], own_usual: Mapping[int, list[float]]
) -> bool:
    """Whether the rank's CPU time (part ``name`` "cpu") rose beyond its own usual median while its waiting for
    a CPU rose, beyond its peers' rise (the median of theirs), by `KEPT_OFF` times as much or more (False for
    other parts, or without the usual figures)."""
    if name != "cpu" or rank not in own_usual:
        return False
    cpu, off = PARTS.index("cpu"), PARTS.index("offcpu")

    def rise(peer: int, k: int) -> float:
        return median(row[k] for row in mine[peer]) - own_usual[peer][k]

    peers = [peer for peer in mine if peer != rank and peer in own_usual and mine[peer]]
    peers_off = median(rise(peer, off) for peer in peers) if peers else 0.0
    grew = rise(rank, cpu)
    return grew > 0 and rise(rank, off) - max(0.0, peers_off) >= KEPT_OFF * grew


def _whole(
    rows: list[list[float]], k: int, habit: list[tuple[float, float, bool]], peers_own: float
) -> tuple[bool, float, float, float]:
    """(longer than usual, median excess beyond usual, its standard error, share of steps ahead) of the
    rank's work as a whole (part ``k``: own work, or `WORK`): longer on `OWN_MAJORITY` of the steps, by at
    least `SLOWER` of the peers' own work and `OWN_MARGIN` standard errors."""
    values, middle, error = _beyond_usual(rows, k, habit)
    ahead = sum(value > 0 for value in values) / max(1, len(values))
    longer = ahead >= OWN_MAJORITY and middle >= max(MIN_SECONDS, SLOWER * peers_own, OWN_MARGIN * error)
    return longer, middle, error, ahead


def _unexited(rows: list[list[float]], habit: list[tuple[float, float, bool]]) -> tuple[float, float]:
    """(median, standard error) of the rank's own work beyond usual per step, less its exits' lateness beyond usual
    where that is below 0: a peer that left a collective later than usual (in the later mode of a loaded VM, or
    leaving last as the one that arrived first) starts its next step later, its own work longer by that, and the
    rank's looks shorter by as much. For a part in `UNEXITED` held only to the test of not shorter elsewhere
    (`_quiet`), of a rank that does not leave last by habit (whose exits are out of its own work already,
    `_without_exits`), this may stand for its own work in that test. The kept loaded recordings (2026-12-03,
    session 39, second round): a 5% CPU slowdown's CPU time +0.6-1.0 ms at 8.9-16 standard errors on 90-100% of
    the steps, its own work 1.7-3.8 ms shorter than usual with its peer leaving the all-reduces 2.8-3.5 ms later
    than it, this +0.0 to +1.4 ms: 3 more of the 16 5% CPU slowdowns named (5 -> 8; s37-2r 24 -> 25, s38-2r-b 26
    -> 28 of 40), no false alarm, victim or line on a rank not planted more (one fewer), s38-2r and s39-2r as they
    were. Given to the whole-step test, it named a healthy rank `device` (s38-2r, session 39); given to the
    habitual leaver too, it adds back its exits twice; given to the time asleep, it named the peer that waits
    asleep for a slow link."""
    own = _beyond_usual(rows, 0, habit)[0]
    late = _beyond_usual(rows, TRANSFER, habit)[0]
    middle, error = median_and_error([value - min(0.0, exit) for value, exit in zip(own, late, strict=True)])
    return middle, math.hypot(error, habit[0][1])


def _without_exits(rows: list[list[float]]) -> list[list[float]]:
    """Per-step excesses with the lateness leaving the collectives taken out of the own work (for a rank
    that leaves them last by habit: it starts its next step that much later, its own work looks longer)."""
    own = (0, WORK, AWAKE)
    return [[value - row[TRANSFER] if k in own else value for k, value in enumerate(row)] for row in rows]


def _leaver_slowed(
    rows: list[list[float]],
    habit: list[tuple[float, float, bool]],
    peers_own: float,
    rise: float,
    usual_exits: tuple[float, float] | None = None,
) -> tuple[float | None, str]:
    """(the excess, or None; the figures) of the exits of a rank that leaves collectives last by habit. Its
    lateness follows the machine's load (a rank the kernel wakes later leaves later), so it counts only where
    it grew by more than twice ``rise`` (its waiting for a CPU per step longer than since its usual,
    `_waiting_rise`, or than its peers', whichever is more),
    and by the test of every part (`MAJORITY`, `SLOWER`) with `LEAVER_MARGIN` standard errors for
    `NOISE_MARGIN`; its own work with the exits in must be longer than usual too (`OWN_MAJORITY`,
    `OWN_MARGIN`). A slow link on it is named; a busier
    machine is not. Only the steps whose next() took its usual time are judged (at least `MIN_STEPS`, else
    none): a rank whose next() is slower wakes and runs at other times against its peers and the machine's
    other processes, and leaves its collectives later by that, its waiting for a CPU per step unchanged (the
    lagged test job at load 5-8: exits 1-5 ms later from its loader's slowdown on, in the stretch where that
    slowdown, half in, was not yet named); those steps are the input part's to name."""
    data = PARTS.index("data")
    as_usual = [row for row in rows if row[data] - habit[data][0] < max(MIN_SECONDS, SLOWER * peers_own)]
    if len(as_usual) < MIN_STEPS:
        slowed, n = len(rows) - len(as_usual), len(rows)
        return None, f"exits (last by habit) not judged: next() slower than usual on {slowed} of {n} steps"
    rows = as_usual
    values, middle, error = _beyond_usual(rows, TRANSFER, habit)
    with_exits = [(habit[0][0] + habit[TRANSFER][0], habit[0][1], True)]  # its usual own work, exits in
    longer = _whole(rows, 0, with_exits, peers_own)[0]
    ahead = sum(value > 0 for value in values) / len(values)
    z = middle / error if error else 0.0
    figures = (
        f"exits (last by habit) {middle * 1000:+.1f} ms beyond usual {habit[TRANSFER][0] * 1000:+.1f} "
        f"({ahead:.0%} ahead, {z:.1f} se; waiting for a CPU {rise * 1000:+.1f} ms since usual)"
    )
    beyond_habit = True
    if usual_exits is not None:  # later than it ever was in usual steps, on its earlier steps too
        latest, low = usual_exits
        late = median(row[TRANSFER] for row in rows)
        earlier = lower_quartile(row[TRANSFER] for row in rows) - low
        beyond_habit = (
            late - latest >= max(MIN_SECONDS, SLOWER * peers_own, LEAVER_WORST * latest)
            and earlier >= LEAVER_FLOOR * middle
        )
        figures = (
            f"{figures[:-1]}; {late * 1000:.1f} ms late, at most {latest * 1000:.1f} over 40 usual steps; "
            f"lower quartile {earlier * 1000:+.1f} ms beyond usual)"
        )
    named = (
        ahead >= MAJORITY
        and middle >= max(MIN_SECONDS, SLOWER * peers_own, LEAVER_MARGIN * error, 2 * rise)
        and longer
        and beyond_habit
    )
    return (middle if named else None), figures


def _waiting_rise(waits_more: float, peers: list[list[float]], usual: float | None) -> float:
    """How much longer the rank waits for a CPU per step than when its usual was taken: the peers' rise (the
    median of their medians against ``usual``, `Usual.load`) plus its own beyond its usual difference to
    them (``waits_more``, where positive). A rank the kernel wakes later leaves its collectives later: lateness up to twice this is the
    machine's, not the link's (0 without ``usual``)."""
    if usual is None:
        return 0.0
    peers_rise = median(row[OFFCPU] for row in peers) - usual
    return max(0.0, peers_rise + max(0.0, waits_more))


def _beyond_usual(
    rows: list[list[float]], k: int, habit: list[tuple[float, float, bool]]
) -> tuple[list[float], float, float]:
    """Part ``k``'s per-step excess over the peers beyond the rank's usual, its median and standard error
    (the stretch's and the usual's together)."""
    values = [row[k] - habit[k][0] for row in rows]
    middle, error = (mean_and_error if PARTS[k] in COUNT_PARTS else median_and_error)(values)
    return values, middle, math.hypot(error, habit[k][1])


@dataclass
class Usual:
    """Each rank's usual difference to its peers, part by part: the per-step excess over the peers' median
    on the steps taken as healthy (`BASELINE`, `SETTLE`, `HISTORY`)."""

    steps: dict[int, list[list[float]]] = field(default_factory=dict)  # rank -> per step: excess per part
    threads: dict[int, list[float]] = field(default_factory=dict)  # rank -> per window: `_threads_excess`
    own: dict[int, list[tuple[float, ...]]] = field(default_factory=dict)  # rank -> per step: its own parts
    waits: list[float] = field(default_factory=list)  # per step: the ranks' median wait for a CPU
    taken: int = 0  # steps taken so far (the first BASELINE form it)
    # per step (the latest HISTORY): whether every rank's device time was known (`WindowVerdict.on_device`); the
    # GPU time is judged only against a usual made of such steps (where it was not known its part is 0, and a
    # rank's habit of a slower GPU would read as a rise once it is)
    device: list[bool] = field(default_factory=list)
    latest: dict[int, float] = field(default_factory=dict)  # rank -> the latest median of STRETCH usual exits
    _exits: dict = field(default_factory=dict, repr=False)  # what `exits` found, with `figures`
    _figures: dict | None = field(default=None, repr=False)  # what `figures` found, at `_figured` steps
    _figured: int = field(default=0, repr=False)
    _own: dict = field(default_factory=dict, repr=False)  # what `own_usual` found, with `figures`

    def add(self, verdict: WindowVerdict) -> None:
        """Take the window's steps as usual (the latest `HISTORY` per rank are kept)."""
        if self.taken - self._figured >= REFRESH:
            self._figures = None
        compared = _compared(verdict)
        for rank, differences in _excess(verdict).items():
            kept = self.steps.setdefault(rank, [])
            kept.extend(differences)
            del kept[:-HISTORY]
            if len(kept) >= STRETCH:  # kept for the whole run: the usual steps come and go, this stays
                late = median(row[TRANSFER] for row in kept[-STRETCH:])
                self.latest[rank] = max(self.latest.get(rank, late), late)
        for rank, steps in compared.items():
            kept_own = self.own.setdefault(rank, [])
            kept_own.extend(parts for parts, _medians in steps)
            del kept_own[:-HISTORY]
        for rank, excess in _threads_excess(verdict).items():
            kept = self.threads.setdefault(rank, [])
            kept.append(excess)
            del kept[: -max(1, HISTORY // max(1, verdict.steps))]
        for index in range(min((len(steps) for steps in compared.values()), default=0)):
            self.waits.append(median(steps[index][0][OFFCPU] for steps in compared.values()))
        del self.waits[:-HISTORY]
        self.device.extend([verdict.on_device] * verdict.steps)
        del self.device[:-HISTORY]
        self.taken += verdict.steps

    def load(self) -> float | None:
        """The ranks' usual wait for a CPU per step (None before any step is in)."""
        return median(self.waits) if self.waits else None

    def threads_usual(self) -> dict[int, float]:
        """Per rank: the median of its other threads' waiting for a CPU per step over its peers' (ranks
        whose windows never had the figure left out)."""
        return {rank: median(values) for rank, values in self.threads.items() if values}

    def own_usual(self) -> dict[int, list[float]]:
        """Per rank with `MIN_STEPS` or more usual steps: the median of each of its own parts (`PARTS`), worked
        out again with `figures`."""
        self.figures()
        return self._own

    def exits(self) -> dict[int, tuple[float, float]]:
        """Per rank with `MIN_STEPS` or more usual steps: (the latest median of its exits' lateness over any
        `STRETCH` usual steps of the run, the lower quartile of its lateness over its usual steps), worked out
        again with `figures` (`LEAVER_WORST`, `LEAVER_FLOOR`)."""
        self.figures()
        return self._exits

    def ready(self) -> bool:
        """Whether the first `BASELINE` steps are in."""
        return self.taken >= BASELINE

    def figures(self) -> dict[int, list[tuple[float, float, bool]]]:
        """Per rank with `MIN_STEPS` or more: (median, standard error, whether judged) of each part's usual
        excess, the median no less than nothing: a rank's habit of being longer than its peers is forgiven,
        a habit of being shorter is not held against it (with two ranks one's habit is the other's mirror:
        when the late one's lag shrinks, the other has not become slower). The exits of a rank that leaves
        collectives last by habit (`HABIT`) are not judged. Worked out again once `REFRESH` steps were added
        since: a healthy run adds every window, and the usual of `HISTORY` steps moves slowly."""
        if self._figures is not None:
            return self._figures
        self._figured = self.taken
        result = {}
        for rank, rows in self.steps.items():
            if len(rows) >= MIN_STEPS:
                last = sum(row[TRANSFER] > 0 for row in rows) / len(rows)
                if last >= HABIT:
                    rows = _without_exits(rows)
                usual = [
                    (mean_and_error if PARTS[k] in COUNT_PARTS else median_and_error)(
                        [row[k] for row in rows]
                    )
                    for k in range(len(PARTS))
                ]
                result[rank] = [
                    (
                        max(0.0, middle),
                        _clamped_error(k, middle, error),
                        (k != TRANSFER or last < HABIT) and (k != GPU or all(self.device)),
                    )
                    for k, (middle, error) in enumerate(usual)
                ]
        self._figures = result
        self._exits = {
            rank: (self.latest.get(rank, 0.0), lower_quartile(row[TRANSFER] for row in rows))
            for rank, rows in self.steps.items()
            if len(rows) >= MIN_STEPS
        }
        self._own = {
            rank: [median(row[k] for row in rows) for k in range(len(PARTS))]
            for rank, rows in self.own.items()
            if len(rows) >= MIN_STEPS
        }
        return result


def _clamped_error(k: int, middle: float, error: float) -> float:
    """The standard error of a usual difference held at 0 where it is below (`Usual.figures`), for the exits
    (`TRANSFER`): the rank is judged against 0, which lies ``-middle`` above its usual median, so the usual's
    own uncertainty counts only as far as it reaches past 0 (``error + middle``, none beyond). With two ranks one
    rank's exits are the mirror of the other's: where its peer leaves last by habit, in two modes on a loaded VM
    (`LEAVER_FLOOR`), its own usual lateness is 0 or a few ms below, its median below 0 and its spread wide, and
    counted in full that spread hid a slow link of its own: on the kept loaded recording s37-2r (2026-12-03,
    session 38), rank 0's all-reduces ending 1.0 ms late on every step (a 5% slow link; its usual lateness
    -1.4 ms) stood 2.4-3.5 standard errors out over its fourth episode, 7-95 with this, and it is named once its
    own work is longer too, at the episode's 50th step (23 of 40 named, no false alarm or victim more; the
    recording s38-2r, not tuned on, as it was). Only for the exits: for every part it named a victim there."""
    if k != TRANSFER or middle >= 0:
        return error
    return max(0.0, error + middle)


def _compared(
    verdict: WindowVerdict,
) -> dict[int, list[tuple[tuple[float, ...], list[float]]]]:
    """Per rank and step of one window: its parts and the median of its peers' parts on that step.
    Computed once per window (kept on it): one sort per step and part, whatever the number of ranks."""
    if verdict.compared is not None:
        return verdict.compared
    present = [rank for rank, table in verdict.parts.items() if table]
    result: dict[int, list[tuple[tuple[float, ...], list[float]]]] = {rank: [] for rank in present}
    if len(present) < 2:
        verdict.compared = {}
        return verdict.compared
    steps = min(len(verdict.parts[rank]) for rank in present)
    for index in range(steps):
        rows = {rank: verdict.parts[rank][index] for rank in present}
        columns = [sorted(row[k] for row in rows.values()) for k in range(len(PARTS))]
        for rank, row in rows.items():
            result[rank].append((row, [median_without(columns[k], row[k]) for k in range(len(PARTS))]))
    verdict.compared = result
    return result


def _excess(verdict: WindowVerdict) -> dict[int, list[list[float]]]:
    """Per rank and step of one window: each part's excess over the peers' median (`_compared`). Computed
    once per window (kept on it): a window is in the stretches of `STRETCH` / its steps windows, and usual."""
    if verdict.excess is None:
        verdict.excess = {
            rank: [[own[k] - medians[k] for k in range(len(PARTS))] for own, medians in steps]
            for rank, steps in _compared(verdict).items()
        }
    return verdict.excess


def _first_cause(passed: dict[str, float], per_cpu: float, device: bool = False) -> tuple[float, str]:
    """(excess, part) of the part that says why, among those that passed. Waiting for data or more CPU
    work come first: on a busy machine both also bring more waiting for a CPU (a wake-up after each sleep,
    a longer queue for more work). Waiting for a CPU (host) wins over them only when it is more than twice
    what they would bring (``per_cpu``: the peers' wait per second of CPU time), and over the collectives
    when it is the longer. The loop asleep or blocked (host) wins over them when it is more than twice their
    excess (a thread that slept comes back to cold caches: a little more CPU time for the same work), and over
    the collectives when it is as long (a rank that arrives late at them leaves them late too); the
    collectives (communication) come last, as every slow rank leaves them late. On CUDA (``device``: the device
    time judged) the device time comes first where it carries half the CPU time's excess, the time asleep's and
    the waiting for data's or more: a host that waits for a slower device spins or sleeps in the synchronisation
    (more CPU time, or asleep), while a slower host leaves the device idle, which its device time does not count;
    a rank that waits far longer for its data than its GPU works longer is named for its input."""
    if (
        device
        and "gpu" in passed
        and passed["gpu"] >= 0.5 * max([passed.get(name, 0.0) for name in ("cpu", "blocked", "data")])
    ):
        return passed["gpu"], "gpu"
    work = {name: passed[name] for name in ("data", "cpu", "gpu") if name in passed}
    if "offcpu" in passed:
        beyond = passed["offcpu"] - passed.get("cpu", 0.0) * per_cpu
        if beyond >= 2 * max(work.values(), default=0.0) and passed["offcpu"] >= passed.get("transfer", 0.0):
            return passed["offcpu"], "offcpu"
    blocked = passed.get("blocked", 0.0)
    if blocked and blocked >= 2 * max(work.values(), default=0.0) and blocked >= passed.get("transfer", 0.0):
        return blocked, "blocked"
    if work:
        part = max(work, key=lambda name: work[name])
        return work[part], part
    if "transfer" in passed:
        return passed["transfer"], "transfer"
    return max((passed[name], name) for name in ("offcpu", "blocked") if name in passed)


def _cause_text(
    part: str,
    mine: list[tuple[float, ...]],
    peers: list[list[float]],
    usual: float = 0.0,
    device: bool = False,
) -> str:
    """The cause in words, with the rank's median of the part and the peers', and the rank's usual
    difference to them when it is not nothing."""
    column = {name: k for k, name in enumerate(PARTS)}
    own = {name: median(row[k] for row in mine) for name, k in column.items()}
    peer = {name: median(row[k] for row in peers) for name, k in column.items()}
    habit = f"; usually {usual * 1000:+.1f} ms" if abs(usual) >= 0.00005 else ""
    # no DataLoader's next() timed on any rank: a loop that builds its batches itself (nanoGPT's get_batch)
    # has its input time in the compute, or asleep or blocked where it reads a file: say so where it counts
    own_loop = own["data"] == 0 and peer["data"] == 0
    loop_data = "; no DataLoader seen: batches the loop builds itself count here" if own_loop else ""
    if part == "data":
        return f"input pipeline (next() {_ms(own['data'])} vs median {_ms(peer['data'])}{habit})"
    if part == "transfer":
        return (
            f"communication (collectives {_ms(own['transfer'])} vs median {_ms(peer['transfer'])}, "
            f"waiting for peers left out{habit})"
        )
    if part == "blocked":  # its figure alone is below 0 on a healthy step (`window.BLOCKED`): the difference
        k = column["blocked"]
        longer = median(own_row[k] - peer_row[k] for own_row, peer_row in zip(mine, peers, strict=True))
        return (
            f"host (asleep or blocked outside next() and the collectives {_ms(longer)} per step longer than "
            f"its peers{habit}: the training loop (or a DDP comm hook, before its collective) sleeps, or waits on "
            f"a file, a lock or the device{loop_data})"
        )
    if part == "offcpu":
        return (
            f"host (kept waiting for a CPU {_ms(own['offcpu'])} per step vs median {_ms(peer['offcpu'])}"
            f"{habit}: its cores are shared with other processes)"
        )
    if part == "gpu":
        return (
            f"device (GPU time {_ms(own['gpu'])} vs median {_ms(peer['gpu'])} per step, from CUDA events, "
            f"collectives left out{habit})"
        )
    if device:  # on CUDA the training thread's CPU time is the host's work, not the device's
        return (
            f"host (the training thread's CPU time {_ms(own['cpu'])} vs median {_ms(peer['cpu'])}, its GPU time "
            f"{_ms(own['gpu'])} vs {_ms(peer['gpu'])}{habit}: more work on the CPU{loop_data})"
        )
    return f"device (compute {_ms(own['cpu'])} vs median {_ms(peer['cpu'])}{habit}{loop_data})"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.0095 else f"{seconds * 1000:.1f} ms"


@dataclass
class Tracker:
    """Window verdicts in order -> the sustained verdicts, each said once (`feed` returns the new line)."""

    stretch: int = STRETCH
    history: list[WindowVerdict] = field(default_factory=list)
    said: list[dict[str, Any]] = field(default_factory=list)
    usual: Usual = field(default_factory=Usual)
    pending: list[WindowVerdict] = field(default_factory=list)  # windows waiting to become usual
    _current: tuple[int, str | None] | None = None
    _quiet: int = 0

    def feed(self, verdict: WindowVerdict) -> str | None:
        """Add the next window; judge the latest `stretch` steps (`judge_stretch`, against the ranks'
        `Usual`) and set the window's straggler from it. Returns the verdict line when a rank is named that
        was not named in the current stretch (two windows naming nobody end a stretch; for a cause in
        `PERSIST`, once two windows in a row name the rank), or for a new cause held for two windows, else
        None. Until the first `BASELINE` steps after warm-up are in, they are
        taken as usual and nothing is judged; later a window becomes usual once `SETTLE` windows after it
        named nobody."""
        self.history.append(verdict)
        size = max(1, verdict.steps)
        count = max(1, -(-self.stretch // size))
        recent = self.history[-count:]
        self.history = self.history[-count:]  # nothing older is judged again
        if verdict.first_step < WARMUP:
            return None
        if not self.usual.ready():
            self.usual.add(verdict)
            return None
        rank, slower, cause, text, reason, part = judge_stretch(
            recent,
            self.usual.figures(),
            self.usual.load(),
            self.usual.threads_usual(),
            self.usual.own_usual(),
            self.usual.exits(),
        )
        verdict.reason = reason
        if rank is None:
            self.pending.append(verdict)
            while len(self.pending) > SETTLE:
                self.usual.add(self.pending.pop(0))
            self._quiet += 1
            if self._quiet >= 2:
                self._current = None  # over: a new stretch gets a new line
            return None
        self.pending = []  # the onset of what was named: never usual
        self._quiet = 0
        verdict.straggler, verdict.slower, verdict.cause, verdict.cause_text = (
            rank,
            slower,
            cause,
            text,
        )
        if self._current == (rank, cause):
            return None
        before = self.history[-2] if len(self.history) >= 2 else None
        if self._current is not None and self._current[0] == rank:
            if before is None or (before.straggler, before.cause) != (rank, cause):
                return None  # the same rank for another cause: said once it holds for two windows
        elif (
            cause in PERSIST
            and part not in AT_ONCE
            and (before is None or (before.straggler, before.cause) != (rank, cause))
        ):
            return None  # newly named for its CPU: said once the next window names it too (`PERSIST`)
        self._current = (rank, cause)
        steps = sum(v.steps for v in recent)
        host = verdict.ranks[rank].host if rank in verdict.ranks else "?"
        line = (
            f"torchdoctor: straggler: rank {rank} (host {host}) {slower:.0%} slower over the last {steps} "
            f"steps: {text}"
        )
        self.said.append(
            {"rank": rank, "host": host, "cause": cause, "slower": round(slower, 4), "steps": steps,
             "window": verdict.window, "line": line, "figures": reason}
        )  # fmt: skip
        return line
