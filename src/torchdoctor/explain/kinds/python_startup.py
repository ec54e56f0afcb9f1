"""CPython refusing to start because a ``PYTHON*`` environment variable holds a value it cannot read.

Before it runs a line of the script, CPython reads its settings from the environment (``Python/initconfig.c``,
``Python/preconfig.c``, ``Python/pylifecycle.c``) and stops with ``Fatal Python error: <function>: <reason>`` on
a value it cannot use: ``config_init_hash_seed: PYTHONHASHSEED must be "random" or an integer in range [0;
4294967295]``, ``preconfig_init_allocator: PYTHONMALLOC: unknown allocator`` (3.7's
``_Py_InitializeCore_impl: Unknown PYTHONMALLOC allocator``), ``preconfig_init_utf8_mode: invalid PYTHONUTF8
environment variable value``, ``config_init_int_max_str_digits``, ``config_init_tracemalloc``, 3.13's
``config_init_cpu_count`` and ``config_read_gil``, and ``init_stdio_encoding`` for a ``PYTHONIOENCODING`` naming no
codec. The message names the variable (or its function does): certain once seen on a labelled log.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, merged, on_ranks

FAMILY = "the machine and its operating system"

MATCH = Pattern(
    r"Fatal Python error: (?P<py_config>(?:pre)?config_\w{1,60}|_Py_InitializeCore_impl|init_stdio_encoding): "
    r"(?P<py_config_reason>.{0,300})"
)

# the variable of a function whose message does not name it
_BY_FUNCTION = {
    "config_init_cpu_count": "PYTHON_CPU_COUNT",
    "config_read_gil": "PYTHON_GIL",
    "init_stdio_encoding": "PYTHONIOENCODING",
}
# what each variable accepts (the Python documentation's "Environment variables")
_ACCEPTS = {
    "PYTHONHASHSEED": '"random" or an integer from 0 to 4294967295',
    "PYTHONMALLOC": "malloc, pymalloc, mimalloc (3.13+), debug, malloc_debug, pymalloc_debug or default",
    "PYTHONUTF8": "0 or 1",
    "PYTHONINTMAXSTRDIGITS": "0 (no limit) or a number of digits of at least 640",
    "PYTHONTRACEMALLOC": "a number of frames from 1 to 65535",
    "PYTHON_CPU_COUNT": 'a number above 0, or "default"',
    "PYTHON_GIL": "1 (0 only on a free-threaded build, python3.13t)",
    "PYTHONIOENCODING": "the name of an encoding Python knows (utf-8, optionally utf-8:<errors>)",
}
_VARIABLE = re.compile(r"PYTHON[A-Z0-9_]{2,40}")


def _describe(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    facts = merged(hits)
    function, reason = str(facts.get("py_config", "")), str(facts.get("py_config_reason", "")).strip()
    named = _VARIABLE.search(reason)
    variable = named.group(0) if named else _BY_FUNCTION.get(function, "")
    if not variable:
        return (
            f"Python refused to start ({function}: {reason}): a setting it reads at start-up (an environment "
            "variable or a -X option) holds a value it cannot use" + on_ranks(hits),
            "Print the PYTHON* variables the job gets (env | grep ^PYTHON, in the job's own script or launcher) and "
            "unset or correct the one the message names; the Python documentation's 'Environment variables' page "
            "says what each accepts.",
        )
    accepts = _ACCEPTS.get(variable, "a value the Python documentation's 'Environment variables' page lists")
    return (
        f"Python refused to start: the environment variable {variable} holds a value it cannot use ({reason})"
        + on_ranks(hits),
        f"{variable} takes {accepts}. See what the job sets: echo ${variable} (or env | grep ^PYTHON in the job's "
        f"script, launcher or container), then set it to one of those or unset it (unset {variable}). It is read "
        "before any line of the script runs, so every process the job starts with it fails the same way.",
    )


PYTHON_ENV_VALUE = Recogniser(
    kind="python_env_value",
    title="a PYTHON* environment variable CPython cannot read",
    anchors=(
        "Fatal Python error: config_",
        "Fatal Python error: preconfig_",
        "Fatal Python error: init_stdio_encoding",
        "Fatal Python error: _Py_InitializeCore_impl",
    ),
    templates=("system:python-config-init-hash-seed", "system:python-preconfig-allocator"),
    match=MATCH,
    facts=(MATCH,),
    describe=_describe,
)

RECOGNISERS = (PYTHON_ENV_VALUE,)
