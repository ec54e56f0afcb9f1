"""An object defined in a notebook's cells that processes started by spawn cannot find: DataLoader workers, mp.spawn.

A process started by spawn (DataLoader workers on Windows and macOS, ``multiprocessing_context='spawn'``,
``torch.multiprocessing.spawn``) is a new interpreter that unpickles the dataset, the collate_fn and the function it
runs by reference: module and name. For a class or function of the main script it imports the main module again;
when the parent runs in a notebook or an interactive session there is no file to import, so the child's ``__main__``
is the bare built-in module and CPython's unpickler (``Modules/_pickle.c``, ``find_class``) raises "Can't get
attribute 'MyDataset' on <module '__main__' (built-in)>". A checkpoint loaded with ``torch.load`` in a Python REPL
prints the same repr for a class the saving script defined (checkpoint.py's ``checkpoint_class_missing``): certain
only where the log shows multiprocessing's spawn and no torch.load, likely otherwise, that reading named.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _interactive(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    name = first(hits, "interactive_name", "")
    what = f"'{name}'" if name else "an object"
    return (
        f"a process started by spawn could not find {what}: it was defined in a notebook or interactive session, "
        "whose __main__ a new process cannot import" + on_ranks(hits),
        f"Move {what} (the Dataset class, and the collate_fn, worker_init_fn or the function mp.spawn runs) into a "
        ".py file beside the notebook and import it from there: spawned processes (DataLoader workers on Windows "
        "and macOS, multiprocessing_context='spawn', torch.multiprocessing.spawn) import it by module and name. Or "
        "load in the notebook's own process (DataLoader(num_workers=0)), or run the training as a script "
        "(python train.py) with its top-level code under if __name__ == '__main__':.",
    )


SPAWN_INTERACTIVE_MAIN = Recogniser(
    kind="spawn_interactive_main",
    title="a notebook's own class or function that spawned processes cannot import",
    templates=("system:pickle-cannot-get-attribute-on-builtin-main",),
    anchors=("on <module '__main__' (built-in)>",),
    match=R(
        r"Can't get attribute '(?P<interactive_name>[\w.<>]{1,120})' on <module '__main__' \(built-in\)>"
    ),
    confirm=lambda hits, ctx: "saw_spawn" in ctx.facts and "saw_torch_load" not in ctx.facts,
    also=(
        Alternative(
            "checkpoint_class_missing",
            "a checkpoint loaded with torch.load in an interactive session, pickled with a class its saving script "
            "defined",
            "Define or import that class before torch.load in the session, or save and load the model's "
            "state_dict() instead of the whole model.",
            when=("saw_torch_load",),
        ),
    ),
    describe=_interactive,
)

RECOGNISERS = (SPAWN_INTERACTIVE_MAIN,)
