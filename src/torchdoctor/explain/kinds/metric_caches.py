"""Hugging Face evaluate's metric cache files shared by two evaluation module instances at once.

``evaluate/module.py`` writes what ``add``/``add_batch`` receive to a cache file before ``compute``:
``{cache_dir}/metrics/{name}/{config}/{experiment_id}-{num_process}-{process_id}.arrow`` with a ``.lock`` beside it,
``experiment_id`` being "default_experiment" unless the caller names one. Two instances that get the same file
(concurrent runs on one file system, or the processes of a distributed evaluation without distinct ids) collide:
``EvaluationModule._create_cache_file`` refuses a locked file in a distributed setup ("Error in _create_cache_file:
another evaluation module instance is already using the local cache file at {path}. Please specify an experiment_id
(currently: {id}) to avoid collision between distributed evaluation module instances."), ``_finalize`` says the same
when a cache file it reads is gone ("Error in finalize: another evaluation module instance is already using the local
cache file. ..."): these name the collision, certain where seen. The rendezvous of the processes ("Expected to find
locked file {lock} from process {i} but it doesn't exist.") fails when a process's lock is not on the file system it
looks at (nodes without a shared one, an instance of another run): likely. ``compute`` then removes the files it
read (``os.remove(file_path)``): when another run with the same cache file removed it first, CPython's
FileNotFoundError names the ``default_experiment-{n}-{i}.arrow`` file (evaluate#382, concurrent runs computing seqeval);
that form says only that the file is gone: likely.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, has_fact, on_ranks

FAMILY = "a library refusing its settings"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# evaluate's own refusals, and a missing cache file under its default experiment id (a CPython error line)
_SHARED = R(
    r"(?P<collision>another evaluation module instance is already using the local cache file)"
    r"|Expected to find locked file (?P<lock_file>[^\s]{1,300}) from process"
    r"|(?:FileNotFoundError|No such file or directory|Failed to open local file)[^\n]{0,300}?"
    r"(?P<cache_file>default_experiment-\d+-\d+\.arrow)"
)
_EXPERIMENT = R(r"\(currently: (?P<experiment_id>[^)\s]{1,80})\)")


def _shared(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    cache_file = first(hits, "cache_file")
    lock_file = first(hits, "lock_file")
    if first(hits, "collision"):
        summary = "two evaluate metric instances used the same local cache file (the same experiment_id)"
    elif lock_file:
        summary = (
            f"evaluate found no lock file {lock_file} of the other processes of its distributed evaluation"
        )
    else:
        summary = (
            f"the evaluate metric's cache file {cache_file} was gone when compute read or removed it: another "
            "instance with the same default experiment_id (a concurrent run on the same file system) used and "
            "removed it"
        )
    fix = (
        "Give each evaluation its own cache: evaluate.load(..., experiment_id=<unique per run>) (in a distributed "
        "evaluation the same id on every process, with num_process=world size and process_id=rank), or "
        "evaluate.load(..., keep_in_memory=True) to skip the cache files when one process computes the metric, or "
        "a cache_dir of its own per run; across nodes the cache_dir must be a file system every node sees. Runs that "
        "only need a score from arrays can also call the metric's function directly (sklearn, seqeval)."
    )
    return summary + on_ranks(hits), fix


SHARED_METRIC_CACHE = Recogniser(
    kind="concurrent_file_write",
    templates=(
        "third_party:evaluate-create-cache-file-in-use",
        "third_party:evaluate-finalize-cache-file-in-use",
        "third_party:evaluate-expected-locked-file",
        "third_party:evaluate-default-cache-file",
    ),
    title="a cache file two processes or runs shared",
    anchors=(
        "another evaluation module instance is already using the local cache file",
        "Expected to find locked file",
        "default_experiment-",
    ),
    match=_SHARED,
    facts=(_EXPERIMENT,),
    # the refusals name the collision; a missing cache file alone could be a process that never wrote its own
    confirm=has_fact("collision"),
    # a missing default_experiment cache file is this, not a dataset path
    absorbs=("data_path_missing",),
    describe=_shared,
)

RECOGNISERS = (SHARED_METRIC_CACHE,)
