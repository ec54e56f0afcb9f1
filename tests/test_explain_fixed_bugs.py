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

from fixed_bugs import last_quoted, quoted_errors, read_rows  # noqa: E402  (benchmarks/, put on the path above)

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

# torch 1.13.0 on Windows (pytorch/pytorch#85427): torchrun's import reaches the file-based timer, whose default
# argument names signal.SIGKILL, which Windows does not have
WIN = "C:\\Users\\me\\anaconda3\\envs\\t\\lib\\site-packages"
SIGKILL = f"""Traceback (most recent call last):
  File "C:\\Users\\me\\anaconda3\\envs\\t\\lib\\runpy.py", line 197, in _run_module_as_main
    return _run_code(code, main_globals, None,
  File "{WIN}\\torch\\distributed\\run.py", line 386, in <module>
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch
  File "{WIN}\\torch\\distributed\\launcher\\api.py", line 15, in <module>
    from torch.distributed.elastic.agent.server.api import WorkerSpec
  File "{WIN}\\torch\\distributed\\elastic\\timer\\__init__.py", line 44, in <module>
    from .file_based_local_timer import FileTimerClient, FileTimerServer, FileTimerRequest  # noqa: F401
  File "{WIN}\\torch\\distributed\\elastic\\timer\\file_based_local_timer.py", line 63, in <module>
    class FileTimerClient(TimerClient):
  File "{WIN}\\torch\\distributed\\elastic\\timer\\file_based_local_timer.py", line 81, in FileTimerClient
    def __init__(self, file_path: str, signal=signal.SIGKILL) -> None:
AttributeError: module 'signal' has no attribute 'SIGKILL'
"""

# torch 2.2.0: FSDP(sync_module_states=True) over DTensor parameters (pytorch/pytorch#117126)
MESH = f"""Traceback (most recent call last):
  File "/home/user/train_2d.py", line 61, in <module>
    model = FSDP(model, device_mesh=mesh["dp"], sync_module_states=True, use_orig_params=True)
  File "{SITE}/torch/distributed/fsdp/fully_sharded_data_parallel.py", line 481, in __init__
    _init_param_handle_from_module(
  File "{SITE}/torch/distributed/fsdp/_init_utils.py", line 584, in _init_param_handle_from_module
    _sync_module_params_and_buffers(
  File "{SITE}/torch/distributed/fsdp/_init_utils.py", line 1072, in _sync_module_params_and_buffers
    _sync_params_and_buffers(
  File "{SITE}/torch/distributed/utils.py", line 307, in _sync_params_and_buffers
    dist._broadcast_coalesced(
  File "{SITE}/torch/distributed/_tensor/api.py", line 280, in __torch_dispatch__
    return DTensor._op_dispatcher.dispatch(
  File "{SITE}/torch/distributed/_tensor/dispatch.py", line 111, in dispatch
    op_info = self.unwrap_to_op_info(op_call, args, kwargs)
  File "{SITE}/torch/distributed/_tensor/dispatch.py", line 352, in unwrap_to_op_info
    assert mesh is not None, f"found no DeviceMesh from dtensor args for {{op_call}}!"
AssertionError: found no DeviceMesh from dtensor args for c10d.broadcast_.default!
"""


def test_a_torch_bug_read_from_its_release_notes_is_named_after_what_the_message_says():
    # both messages have a cause of the user's too (signal.SIGKILL in a Windows script; DTensor parameters handed
    # to a plain process group), which their kinds read first; the torch release that fixed torch's own is named
    # after it, with the upgrade, while the log prints an older release or none
    for log, printed, kind, fixed, pr in (
        (SIGKILL, "PyTorch version: 1.13.0+cu117\n", "unix_only_module", "1.13.1", "pytorch/pytorch#88250"),
        (SIGKILL, "", "unix_only_module", "1.13.1", "pytorch/pytorch#88250"),
        (
            MESH,
            "- PyTorch version (GPU?): 2.2.0+cu121 (True)\n",
            "device_map_distributed",
            "2.2.1",
            "pytorch/pytorch#117336",
        ),
    ):
        found = explained(printed + log)
        assert (found.id, found.details["confidence"]) == (f"log.{kind}", "likely"), found.summary
        assert "log.library_version_bug" in found.details["alternatives"]
        assert found.details["fixed_in"] == f"torch {fixed} ({pr})"
        assert f"fixed in torch {fixed} ({pr}" in found.summary and "commit" not in found.summary, (
            found.summary
        )
        said = (
            f"torch {printed.split(': ')[1].split()[0]} in this log"
            if printed
            else "no torch release printed"
        )
        assert said in found.summary, found.summary
        assert f"pip install -U 'torch>={fixed}'" in found.fix


def test_a_release_at_fault_in_the_kinds_own_reading_is_named_as_that_reading_not_as_another_cause():
    # torch's own frame asks for signal.SIGKILL: unix_only_module already says torch's release is at fault, and
    # the release notes name the one that fixed it: one cause, its upgrade first, not "If it is not that but ..."
    found = explained(SIGKILL)
    assert found.id == "log.unix_only_module" and "torch's own code" in found.summary, found.summary
    assert "or a bug of torch" not in found.summary and "fixed in torch 1.13.1" in found.summary, (
        found.summary
    )
    assert (
        found.fix.startswith("torch 1.13.1 fixed what raises this") and "If it is not that" not in found.fix
    ), found.fix


def test_a_torch_release_at_or_past_the_fix_names_no_torch_bug():
    for log, printed in (
        (SIGKILL, "PyTorch version: 1.13.1+cu117\n"),
        (MESH, "- PyTorch version (GPU?): 2.2.1+cu121 (True)\n"),
        (MESH, "torch version .................... 2.3.0\n"),
    ):
        found = explained(printed + log)
        assert found.id != "log.library_version_bug", found.summary
        assert "fixed_in" not in found.details and "pytorch/pytorch#" not in found.summary + found.fix, (
            found.summary
        )


def test_the_same_message_raised_outside_torch_is_not_torchs_bug():
    # a Windows script of its own naming signal.SIGKILL: the same words, not torchrun's timer
    own = (
        "Traceback (most recent call last):\n"
        '  File "C:\\work\\watchdog.py", line 12, in <module>\n'
        "    os.kill(pid, signal.SIGKILL)\n"
        "AttributeError: module 'signal' has no attribute 'SIGKILL'\n"
    )
    found = explained(own)
    assert "fixed_in" not in found.details and "#88250" not in found.summary, found.summary


def test_a_fact_read_by_hand_is_left_out_when_a_corpus_thread_or_label_names_its_pr_or_issue(tmp_path):
    read = tmp_path / "read.tsv"
    row = "{}\ttorch\t9.9.1\t\t{}\t{}\twhat was wrong\twhere it was read\n"
    read.write_text(
        "# comment\nmessage\tpackage\tfixed\tsince\tpr\tlinked\twhat\tsource\n"
        + row.format("KeptError: a message no corpus thread names", "pytorch/pytorch#1", "")
        # a held-out label's words name pytorch#80809 (PyTorch 1.12.0's Adam, Lightning#13695's thread)
        + row.format("LabelError: named by a label in words", "pytorch/pytorch#2", "pytorch/pytorch#80809")
        # a held-out thread's own address (huggingface/transformers#23681)
        + row.format("ThreadError: a corpus thread itself", "huggingface/transformers#23681", "")
    )
    rows, excluded = read_rows(read)
    assert excluded == 2 and [r[0] for r in rows] == ["KeptError: a message no corpus thread names"]
    assert rows[0][4] == "" and rows[0][7] == "read: where it was read"


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
        assert row.pr.split("#")[0].count("/") == 1, row
        # a commit of the git history read, or facts read by hand (release notes, threads) that say so
        assert len(row.commit) == 12 or (row.commit == "" and row.source.startswith("read: ")), row


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
