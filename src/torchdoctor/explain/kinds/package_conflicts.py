"""Another installed package that changes how the training script behaves.

hydra takes over a script's command line: ``hydra/_internal/utils.py`` ``get_args_parser`` gives a ``@hydra.main``
entry point the options ``--config-path/-cp``, ``--config-name/-cn`` and ``--config-dir/-cd``, so argparse
(``Lib/argparse.py``: "ambiguous option: %(option)s could match %(matches)s") refuses the ``--config`` of a
script's own README as an abbreviation of three of them. Some scripts use hydra only when it is installed:
ClassyVision's ``classy_train.py`` (``try: import hydra; hydra_available = True`` ... ``if hydra_available:
@hydra.main(config_path="../hydra/args.yaml")``) documents ``--config configs/my_config.json`` for its argparse
path, which an environment with hydra never reaches. For classy_train.py that is certain; for another script the
line is as likely a hydra app run with an argparse-style option (its configs are chosen with --config-name, or
key=value overrides): likely only, that reading named.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Alternative, Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

HYDRA_AMBIGUOUS = R(
    r"(?:(?P<hydra_prog>[\w.\-/]{1,100}): error: )?ambiguous option: --(?P<hydra_option>[\w-]{1,40}) could match "
    r"--config-path, --config-name, --config-dir"
)
# scripts whose source switches to hydra's command line when hydra is importable
OPTIONAL_HYDRA = ("classy_train.py",)


def _takes_over(hits: list[Hit], ctx: Context) -> bool:
    return any(str(h.facts.get("hydra_prog", "")).endswith(OPTIONAL_HYDRA) for h in hits)


def _hydra(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    prog = first(hits, "hydra_prog", "the script")
    option = first(hits, "hydra_option", "config")
    return (
        f"{prog}'s command line was read by hydra (installed in this environment), whose --config-path, "
        f"--config-name and --config-dir make --{option} ambiguous: the script's own argument parser never ran"
        + on_ranks(hits),
        f"A script that switches to hydra whenever hydra can be imported (ClassyVision's classy_train.py does) "
        "never reaches its own parser in this environment: uninstall hydra from the environment that runs it "
        f"(pip uninstall hydra-core), or use a separate environment, and run it as documented (--{option} <file>). "
        "To keep hydra, give the script's hydra form: --config-path <folder> --config-name <file without .yaml>, "
        "and its settings as key=value overrides.",
    )


PACKAGE_CONFLICT = Recogniser(
    kind="package_conflict",
    title="another installed package taking over the script",
    templates=("third_party:hydra-ambiguous-config-option",),
    anchors=("could match --config-path, --config-name, --config-dir",),
    match=HYDRA_AMBIGUOUS,
    confirm=_takes_over,
    also=(
        Alternative(
            "launch_command",
            "a hydra application given an argparse-style option (its config is chosen with --config-name)",
            "Pass the config the hydra way: --config-path <folder> --config-name <name> (or -cp/-cn), and "
            "settings as key=value overrides (python train.py trainer.max_epochs=10); --help lists the app's own.",
        ),
    ),
    describe=_hydra,
)

RECOGNISERS = (PACKAGE_CONFLICT,)
