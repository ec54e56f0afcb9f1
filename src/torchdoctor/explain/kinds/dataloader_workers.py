"""The DataLoader's warning that it starts more worker processes than the machine has CPUs for.

torch's ``DataLoader`` (``torch/utils/data/dataloader.py``, ``_check_max_num_worker_processes`` / its
``_create_warning_msg``, 1.8+, a ``UserWarning``): "This DataLoader will create 12 worker processes in total. Our
suggested max number of worker in current system is 4, which is smaller than what this DataLoader is going to
create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the
worker number to avoid potential slowness/freeze if necessary." (with " (`cpuset` is not taken into account)" after
the number where the CPU affinity could not be read; "DataLoader is not able to compute a suggested max number of
worker in current system." where the CPUs could not be counted, which is no finding). The suggestion is the CPUs this process may use. Every rank of
a distributed run starts its own workers, so a num_workers fine on one GPU oversubscribes the CPUs on eight:
training slower with more GPUs (SlongLiu/query2labels#9, DigitalPhonetics/IMS-Toucan#95). A warning: a finding
only where the log shows no error (``fallback``), and only likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _oversubscribed(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    made, cpus = facts.get("workers_created"), facts.get("workers_suggested")
    numbers = (
        f" ({made} workers, {cpus} suggested for the CPUs this process may use)" if made and cpus else ""
    )
    return (
        "the DataLoader warned that it starts more worker processes than the machine has CPUs for"
        + numbers
        + ": the workers compete for the CPUs, which slows loading or stalls it (a warning, the run went on)",
        "Lower num_workers to at most the CPUs each process may use: os.sched_getaffinity(0) (or os.cpu_count()) "
        "divided by the processes per machine (--nproc_per_node), since every rank starts its own workers; where "
        "the number is fixed in the training code (a train loop's DataLoader(..., num_workers=12)), change it "
        "there. Too many workers is a common reason a run gets slower with more GPUs, or freezes at the first "
        "batch; in a container, the CPUs it is given count, not the host's.",
    )


WORKERS_OVERSUBSCRIBED = Recogniser(
    kind="dataloader_workers_oversubscribed",
    title="more DataLoader workers than CPUs",
    anchors=("worker processes in total.",),
    # the same warning where the CPUs could not be counted says nothing of too many workers
    reject=R(r"not able to compute a suggested max number of worker"),
    templates=("torch:this-dataloader-will-create-worker-processes",),
    facts=(
        R(
            r"This DataLoader will create (?P<workers_created>\d{1,6}) worker processes in total\. Our suggested "
            r"max number of worker in current system is (?P<workers_suggested>\d{1,6})"
        ),
    ),
    confirm=lambda hits, ctx: False,  # a warning: how slow the run was is not in the log
    fallback=True,
    describe=_oversubscribed,
)


RECOGNISERS = (WORKERS_OVERSUBSCRIBED,)
