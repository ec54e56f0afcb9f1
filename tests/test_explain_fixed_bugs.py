"""A message a library's own fix commit quotes, read with the release that fixed it (kinds/fixed_bugs.py).

Both sides of each reading, on the messages as their sources print them: a log printing a release older than the
fix (or none) names the library's bug and the release; a log printing the fixed release or later does not. It
leads only where the package's users cannot cause the message (an UnboundLocalError raised in DeepSpeed's own
DeepCompile profiler, DeepSpeed#7395's traceback as posted); a message the user's own input can raise too
(accelerate's device-name refusal, datasets' ambiguous sharding) keeps what it says first and the bug second.
And how benchmarks/fixed_bugs.py picks what a commit fixed from what it quotes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from explaining import explained
from packaging.version import Version

from torchdoctor.explain import catalog
from torchdoctor.explain.kinds import fixed_bugs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from fixed_bugs import last_quoted, quoted_errors  # noqa: E402  (benchmarks/, put on the path above)

SITE = "/usr/local/lib/python3.10/site-packages"

# DeepSpeed#7395's traceback (DeepCompile's profiler returning a variable it never set), under an installed deepspeed
DEEPCOMPILE = f"""Traceback (most recent call last):
  File "/home/user/train.py", line 88, in <module>
    engine.backward(loss)
  File "{SITE}/deepspeed/runtime/engine.py", line 2298, in backward
    loss.backward(**backward_kwargs)
  File "{SITE}/torch/_dynamo/backends/common.py", line 72, in _wrapped_bw_compiler
    return disable(disable(bw_compiler_fn)(*args, **kwargs))
  File "{SITE}/deepspeed/compile/inductor.py", line 27, in wrapped_compiler
    mod_graph = dc_compiler(gm, fake_inputs)
  File "{SITE}/deepspeed/compile/backend.py", line 206, in run_opt_passes
    mem_prof.run(*create_inputs_fn())
  File "{SITE}/deepspeed/compile/profilers/graph_profile.py", line 261, in run
    return return_val
UnboundLocalError: local variable 'return_val' referenced before assignment
"""

# accelerate's get_max_memory before 0.27 (utils/modeling.py), given an XPU's name
XPU = f"""Traceback (most recent call last):
  File "/home/user/infer.py", line 21, in <module>
    model = AutoModelForCausalLM.from_pretrained(name, device_map="auto", max_memory={{"xpu": "40GiB"}})
  File "{SITE}/accelerate/utils/modeling.py", line 1006, in infer_auto_device_map
    max_memory = get_max_memory(max_memory)
  File "{SITE}/accelerate/utils/modeling.py", line 801, in get_max_memory
    raise ValueError(
ValueError: Device xpu is not recognized, available devices are integers(for GPU/XPU), 'mps', 'cpu' and 'disk'
"""

# datasets' utils/sharding.py before 2.9, its message filled as the source fills it
SHARDING = f"""Traceback (most recent call last):
  File "/home/user/prepare.py", line 14, in <module>
    ds = load_dataset("json", data_files=files, num_proc=8)
  File "{SITE}/datasets/builder.py", line 1410, in _prepare_split
    num_input_shards = _number_of_shards_in_gen_kwargs(split_generator.gen_kwargs)
  File "{SITE}/datasets/utils/sharding.py", line 12, in _number_of_shards_in_gen_kwargs
    raise RuntimeError(
RuntimeError: Sharding is ambiguous for this dataset: we found several data sources lists of different lengths, \
and we don't know over which list we should parallelize:
\t- key files has length 3
\t- key metadata_files has length 1
To fix this, check the 'gen_kwargs' and make sure to use lists only for data sources, and use tuples otherwise. \
In the end there should only be one single list, or several lists with the same length.
"""


def test_a_bug_its_users_cannot_cause_leads_with_the_fixed_release():
    for printed, said in (
        ("deepspeed info ................... 0.16.9\n", "deepspeed 0.16.9 in this log"),
        ("", "no deepspeed release printed"),
    ):
        found = explained(printed + DEEPCOMPILE)
        assert (found.id, found.details["confidence"]) == ("log.library_version_bug", "likely"), found.summary
        assert "fixed in deepspeed 0.17.2" in found.summary and "deepspeedai/DeepSpeed#7395" in found.summary
        assert said in found.summary
        assert "pip install -U 'deepspeed>=0.17.2'" in found.fix
        assert "/home/user/train.py:88" in found.fix  # the user's call that reached it


def test_a_release_at_or_past_the_fix_is_not_named():
    found = explained("deepspeed info ................... 0.17.2\n" + DEEPCOMPILE)
    assert "fixed_in" not in found.details and "#7395" not in found.summary + found.fix, found.summary


def test_a_message_the_user_can_cause_keeps_its_reading_and_names_the_bug_second():
    found = explained(XPU + "- `Accelerate` version: 0.25.0\n")
    assert (found.id, found.details["confidence"]) == ("log.accelerate_call_refused", "likely"), found.summary
    assert "log.library_version_bug" in found.details["alternatives"]
    assert found.details["fixed_in"] == "accelerate 0.27.0 (huggingface/accelerate#2383)"
    assert found.summary.index("is not recognized") < found.summary.index("fixed in accelerate 0.27.0")
    newer = explained(XPU + "- `Accelerate` version: 0.27.2\n")
    assert newer.id == "log.accelerate_call_refused" and "fixed_in" not in newer.details, newer.summary


def test_an_error_no_kind_reads_is_named_first_and_the_bug_after_it():
    found = explained(SHARDING + "- `datasets` version: 2.8.0\n")
    assert found.id == "log.unrecognised", found.summary
    assert "log.library_version_bug" in found.details["alternatives"]
    assert "fixed in datasets 2.9.0" in found.summary and "datasets 2.8.0 in this log" in found.summary
    newer = explained(SHARDING + "- `datasets` version: 2.9.0\n")
    assert newer.id == "log.unrecognised" and "fixed_in" not in newer.details, newer.summary


def test_an_attribute_the_scripts_own_lookup_missed_is_not_named_first():
    # DeepSpeed#7410's AttributeError, but asked for by the script: DeepSpeedEngine.__getattr__ raises for its caller
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/user/train.py", line 40, in <module>\n'
        "    opt = engine.optimizer\n"
        f'  File "{SITE}/deepspeed/runtime/engine.py", line 621, in __getattr__\n'
        "    raise AttributeError(f\"'{type(self).__name__}' object has no attribute '{name}'\")\n"
        "AttributeError: 'DeepSpeedEngine' object has no attribute 'optimizer'\n"
        "deepspeed info ................... 0.16.9\n"
    )
    assert found.id != "log.library_version_bug", found.summary
    assert found.details["alternatives"].count("log.library_version_bug") == 1, found.details
    assert found.details["fixed_in"] == "deepspeed 0.17.2 (deepspeedai/DeepSpeed#7410)"


def test_the_same_message_raised_in_another_packages_frame_is_not_that_packages_bug():
    moved = DEEPCOMPILE.replace(f"{SITE}/deepspeed/compile/profilers/", "/home/user/myprofilers/")
    found = explained(moved)
    assert "fixed_in" not in found.details and "#7395" not in found.summary, found.summary


def test_every_row_names_a_catalog_template_or_a_quoted_error_and_a_release():
    rows = fixed_bugs.load()
    assert rows
    for row in rows:
        quoted = row.template.split(": ", 1)[0].endswith(("Error", "Exception"))
        assert quoted or row.template in catalog.by_id(), row
        Version(row.fixed)  # a release, parsed
        assert row.pr.split("#")[0].count("/") == 1 and len(row.commit) == 12, row


def test_of_two_errors_a_commit_quotes_the_last_is_what_it_fixed():
    # DeepSpeed#7410's message: the assertion (the user's config) was raised first, and destroy() then failed on
    # an attribute __init__ had not set yet: the fix is the second
    message = """fix: engine initializes optimizer attributes at the beginning (#7410)

e.g.:
  File "deepspeed/runtime/engine.py", line 453, in _configure_tensor_parallel_states
    assert self.zero_optimization_stage(
AssertionError: Currently, the compatibility between 'autotp' and 'zero_stage = 3' has not been validated
Exception ignored in: <function DeepSpeedEngine.__del__ at 0x1516c0610820>
  File "deepspeed/runtime/engine.py", line 621, in __getattr__
    raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
AttributeError: 'DeepSpeedEngine' object has no attribute 'optimizer'
"""
    quoted = quoted_errors(message)
    assert quoted == [
        "AssertionError: Currently, the compatibility between 'autotp' and 'zero_stage = 3' has not been validated",
        "AttributeError: 'DeepSpeedEngine' object has no attribute 'optimizer'",
    ]
    hits = [(q, "", "") for q in quoted]
    assert last_quoted(hits, " ".join(message.split()).lower()) == [hits[1]]
