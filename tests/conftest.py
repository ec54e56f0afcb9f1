import multiprocessing.util
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from helpers import OUTSIDE_THE_RUN

# torch's OpenMP threads spin on a core for a while after each parallel region before they sleep: in the suite's
# workers (torch on both cores) and every process they start, that spinning took a third of the CPU time of the
# tests that compute in process, on a 2-core machine the suite keeps busy. Passive, they sleep at once. Set before
# anything imports torch (OpenMP reads it when torch loads it), inherited by every process the tests start; a
# value already set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# The suite checks itself that it leaves nothing behind: every process it starts carries this mark in its
# environment (inherited from here, whether or not it later leaves our process tree, as torch's launcher
# does with its own session), and every temporary file goes to a folder of this run's own, so that runs
# side by side do not see each other's.
_MARK = "TORCHDOCTOR_TEST_RUN"
_LEFT_ALONE_FOR = 15.0  # seconds a process or file gets to go away once the last test is done
_TEMP_PREFIX = "torchdoctor-"
_RUN = pytest.StashKey[tuple]()  # (mark, temporary folder)
_FOUND = pytest.StashKey[list]()  # what was left behind


def run_cli(
    *args: str, env: dict | None = None, timeout: float = 120, cwd=None
) -> subprocess.CompletedProcess:
    """Run `python -m torchdoctor ARGS` as a user would, in a real process."""
    full_env = os.environ.copy()
    full_env.update(env or {})
    full_env.setdefault("COLUMNS", "200")
    return subprocess.run(
        [sys.executable, "-m", "torchdoctor", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        cwd=cwd,
    )


@pytest.fixture
def cli():
    return run_cli


def run_here(*args: str, env: dict | None = None, timeout: float | None = None, cwd=None):
    """`torchdoctor ARGS` through the same `main` a real process runs, in this process: what `run_cli`
    returns, without a process of its own (whose Python start and imports cost up to 3 s of CPU). For the
    many cases of one class of refusal, where one case through `cli` stands for the process boundary."""
    from helpers import main_here

    from torchdoctor.cli import main

    return main_here(main, "torchdoctor", args, env, cwd)


@pytest.fixture
def cli_here():
    return run_here


def _marked_processes(mark: str) -> dict[int, str]:
    """Processes other than this one whose environment holds ``_MARK=mark``: pid -> command line."""
    needle = f"{_MARK}={mark}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        found[int(entry.name)] = command or "?"
    return found


def _left_behind(temp: Path, mark: str) -> list[str]:
    """What the run left: live processes it started, ``torchdoctor-*`` entries in its temporary folder."""
    deadline = time.monotonic() + _LEFT_ALONE_FOR
    while True:
        processes = _marked_processes(mark)
        files = sorted(p for p in temp.iterdir() if p.name.startswith(_TEMP_PREFIX)) if temp.is_dir() else []
        if not (processes or files) or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    return [f"process {pid} still running: {command[:300]}" for pid, command in sorted(processes.items())] + [
        f"temporary {'folder' if p.is_dir() else 'file'} left: {p}" for p in files
    ]


def pytest_configure(config):
    if not hasattr(sys, "getwindowsversion") and Path("/proc/self/environ").exists():
        mark = uuid.uuid4().hex
        os.environ.setdefault(OUTSIDE_THE_RUN, tempfile.gettempdir())
        temp = Path(tempfile.mkdtemp(prefix="td-test-run-"))
        temp.chmod(0o755)  # tests that drop to an ordinary user still reach their files
        os.environ[_MARK] = mark
        os.environ["TMPDIR"] = str(temp)
        tempfile.tempdir = None  # re-read TMPDIR
        config.stash[_RUN] = (mark, temp)


def pytest_sessionfinish(session, exitstatus):
    if "rank_runner" in sys.modules:  # its fork server, the one process meant to last the whole run
        sys.modules["rank_runner"].stop_fork_server()
    run = session.config.stash.get(_RUN, None)
    if run is None:
        return
    mark, temp = run
    left = _left_behind(temp, mark)
    session.config.stash[_FOUND] = left
    if left:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        shutil.rmtree(temp, ignore_errors=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    left = config.stash.get(_FOUND, [])
    if left:
        terminalreporter.section("left behind by the tests (the run fails)", red=True, bold=True)
        for line in left:
            terminalreporter.line(line, red=True)


class _EveryAnchor:
    """Holds every (kind, anchor): as if each message had been seen on a labelled real log of its kind."""

    def __contains__(self, item) -> bool:
        return True


@pytest.fixture
def every_message_seen(monkeypatch):
    """A recogniser's reading of a line written as its source prints it, by the message's own evidence only:
    its certainty without the rules that a message no labelled real log showed yet, or one real logs of other
    causes showed too, stays likely (those rules are test_explain_seen_on.py's subject). Modules that test readings use it: ``pytestmark =
    pytest.mark.usefixtures("every_message_seen")``."""
    from torchdoctor.explain import recognisers

    monkeypatch.setattr(recognisers, "seen_on", _EveryAnchor)
    monkeypatch.setattr(recognisers, "seen_for_others", lambda kind, anchor: (1, {}))


@pytest.fixture
def one_rank():
    """A gloo process group of one rank in this process (the straggler watch's hooks on real collectives)."""
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


@pytest.fixture
def record():
    """The straggler watch's hooks installed, feeding the step record yielded; taken off afterwards."""
    from torchdoctor.stragglers import hooks
    from torchdoctor.stragglers.record import StepRecord

    record = StepRecord(window=100)
    hooks.install(record)
    try:
        yield record
    finally:
        hooks.uninstall()


@pytest.fixture
def taken_port():
    """A port something else listens on (this test process), as an old run would."""
    with socket.socket() as holder:
        holder.bind(("", 0))
        holder.listen(1)
        yield holder.getsockname()[1]


# -- two lanes: `make test-fast` runs `pytest -m "not processes"`, `make test` runs everything ---------------
# A test is marked `processes` here and nowhere else: every test that uses the `cli` fixture, every test of
# the modules in PROCESS_MODULES, and the tests named in PROCESS_TESTS. In the fast lane a test that starts a
# process anyway fails, saying to name it here, so the lane stays what it says.
PROCESS_MODULES = {
    "test_launch_ctrl_c_loader_worker",
    "test_launch_exit_report_read",
    "test_launch_call_log_kept",
    "test_broken_setups",  # torchdoctor check in a network namespace of its own (ip netns), gloo ranks
    "test_store_without_clone",
    "test_explain_throughput_benchmark",  # grep, as the benchmark starts it
    "test_watchdog_gil_held",  # a child process that dumps its stack through faulthandler
    "test_watchdog_skipped_other_group",  # gloo jobs under launch --watchdog, two groups of the same ranks
    "test_debug_divergence",
    "test_environment",
    "test_errors_kernel_files",
    "test_flags_say_what_they_do",
    "test_hang_corpus",
    "test_hang_job_reconnect",
    "test_net_find_bad",
    "test_launch_stops",
    "test_output_encodings",
    "test_process_state",
    "test_stragglers",
    "test_stragglers_frameworks",
    "test_straggler_judge",
    "test_written_places",
    "test_accelerate_compat",
    "test_cli_interrupt",
    "test_distributed_operations",
    "test_distributed_trigger",
    "test_distributed_waits",
    "test_env_cli",
    "test_env_deepspeed",
    "test_env_toolkits",
    "test_lanes",
    "test_memory_distributed",
    "test_memory_hang",
    "test_mpi_real",
    "test_net_multinode",
    "test_net_u33_loopback_name",
    "test_net_u33_bench_hosts",
    "test_net_u33_own_name",
    "test_net_u33_interface_subnet",
    "test_net_u33_shared_hostname",
    "test_net_u33_store_port_firewall",
    "test_net_u33_versions",
    "test_net_u33_find_bad_three_hosts",
    "test_net_robust",
    "test_net_smoke",
    "test_numerics_ranks",
    "test_runner",
    "test_watchdog_multinode",
    "test_launch_u9_unreached_rendezvous",
    "test_launch_u11_c10d_nodes_come",
    "test_net_u9_debug_detail_one_host",
    "test_stragglers_short_run",
    "test_launch_aborted_rank_place",
}
PROCESS_TESTS = {
    # real Python runs: a json.py beside the script, a package's own circular import, a DataLoader under
    # simplefilter("error"), Python refusing to start on a bad PYTHON* variable
    "test_explain_shadowed_modules": {
        "test_a_json_py_beside_the_script_run_for_real_is_named",
        "test_a_packages_own_circular_import_in_site_packages_is_not_read_as_shadowing",
    },
    "test_explain_raised_warnings": {
        "test_a_real_dataloader_under_simplefilter_error_is_read_as_stopped_by_its_warning"
    },
    "test_explain_python_startup": {
        "test_a_bad_python_variable_that_stops_python_starting_is_named_with_what_it_takes"
    },
    # a real pytest run's failure report, each --tb style
    "test_explain_pytest_failures": {
        "test_a_failed_tests_error_and_the_line_that_raised_it_are_read",
        "test_pytests_assertion_diff_is_not_a_new_error",
        "test_the_place_tb_line_prints_is_where_the_error_was_raised",
    },
    # a real 2-rank gloo job whose console carries a time before torch's rank prefix
    "test_explain_time_prefixes": {"test_a_time_before_torchs_rank_prefix_keeps_the_prefix_read"},
    # a real 2-rank gloo job handing an object collective something that will not pickle
    "test_explain_object_collective_pickling": {
        "test_an_unpicklable_object_in_an_object_collective_is_read_with_its_fix"
    },
    # a torchrun node alone at a c10d rendezvous, and two that meet
    "test_launch_u40_rendezvous_wait": {
        "test_a_node_alone_at_the_rendezvous_says_whom_it_waits_for_before_giving_up",
        "test_nodes_that_meet_at_once_say_nothing_of_waiting",
    },
    # `torchdoctor mpi` with ssh stand-ins that never answer
    "test_mpi_u40_waiting": {
        "test_the_status_says_which_hosts_ssh_still_waits_for",
        "test_ctrl_c_while_ssh_waits_stops_at_once_and_ends_every_ssh",
    },
    # real deaths by a signal: glibc's double free, faulthandler's dump, g++'s uncaught exception, bash's SIGXFSZ
    "test_explain_signal_deaths": {
        "test_a_real_double_free_is_read_as_a_corrupted_heap_not_a_bare_crash",
        "test_a_real_faulthandler_stack_names_the_package_whose_code_crashed",
        "test_a_real_uncaught_cpp_exception_names_its_type_and_what",
        "test_a_real_shell_line_of_a_write_past_the_file_size_limit",
        "test_a_real_crash_while_exiting_from_an_error_follows_that_error",
        "test_a_real_dataloader_workers_crash_leads",
        "test_a_real_faulthandler_stack_names_the_crashed_threads_package_not_another_threads",
    },
    # catalog_coverage.from_libtorch reads the library through binutils' `strings`
    "test_catalog_extraction": {
        "test_a_string_after_another_source_file_is_that_files_not_the_distributed_ones",
        "test_a_header_named_among_a_files_strings_keeps_them_that_files_near_miss",
    },
    "test_straggler_threads": {"test_a_thread_kept_off_its_core_is_counted_and_the_training_thread_is_not"},
    # a real CPU-only torch asked for CUDA, in a process of its own
    "test_explain_cpu_build": {
        "test_set_device_on_this_cpu_only_torch_is_read_as_no_cuda_with_the_cpu_build_fix"
    },
    # the planted runs' live jobs: two gloo ranks under torchrun, rank 0's save into a missing folder, and a
    # dataset's None sample in a DataLoader worker (pytorch/examples' ddp-tutorial-series)
    "test_explain_planted_runs": {
        "test_the_planted_save_run_live_on_this_torch_reads_as_its_recording",
        "test_the_none_sample_run_live_on_this_torch_reads_as_its_recording",
    },
    # tensor parallelism on 2 gloo ranks under launch --stragglers (one with --debug on a 2-D mesh)
    "test_straggler_functional": {
        "test_a_tp_rank_slowed_by_its_compute_is_named_device_and_its_victims_wait_is_in_its_collectives",
        "test_a_healthy_2d_mesh_of_fsdp2_and_tp_runs_under_the_watch_and_debug_mode_times_its_collectives_names_nobody",
    },
    # two gloo ranks under launch --watchdog, their stack signal's handler put back to SIG_DFL by the script
    "test_watchdog_signal_handlers": {
        "test_a_hang_after_a_library_put_every_signal_handler_back_is_reported_as_the_hang",
        "test_a_child_that_does_not_catch_the_stack_signal_is_not_sent_it",
    },
    # a TP MLP on two gloo ranks under launch --watchdog with the flight recorder off
    "test_watchdog_functional_calls": {
        "test_a_tp_hang_with_the_flight_recorder_off_names_the_collective_and_line_from_the_call_log"
    },
    # two ranks under launch --debug asking a DTensor's full tensor from different placements
    "test_debug_functional": {
        "test_ranks_asking_a_dtensors_full_tensor_from_different_placements_both_name_the_two_collectives"
    },
    # public scripts' faults run for real on this torch (session 27): init_process_group with a CPU device_id, a
    # device string from no accelerator
    "test_explain_u27_device_id": {
        "test_device_id_of_a_cpu_device_says_to_leave_it_out_on_a_machine_without_gpus"
    },
    # a daemonic trainer process whose DataLoader starts workers (u28, mnist_hogwild)
    "test_explain_u28_daemon": {
        "test_a_daemon_trainer_whose_dataloader_starts_workers_on_this_torch_says_daemon_true_and_exit_status"
    },
    # a DataLoader worker killed with SIGKILL in a real process (u28, the DDP tutorial with persistent workers)
    "test_explain_u28_worker_killed": {
        "test_a_dataloader_worker_killed_on_this_torch_names_the_worker_and_not_the_line_as_the_cause"
    },
    "test_explain_u27_device_string": {
        "test_a_device_string_from_no_accelerator_says_it_was_none_and_how_to_fall_back_to_the_cpu",
        "test_torch_device_given_the_none_of_no_accelerator_is_not_a_bug_of_torch",
    },
    # rank 0 of a world of 2 started by hand with plain python under debug mode (u29)
    "test_explain_u29_by_hand": {
        "test_debug_modes_wait_for_a_rank_started_by_hand_on_this_torch_is_read_as_the_rank_never_started",
    },
    # a DataLoader worker that kills itself with SIGKILL while the main process waits for it (u29)
    "test_explain_u29_worker_told_twice": {
        "test_a_worker_killed_while_the_main_process_waits_on_this_torch_is_one_finding_not_a_full_dev_shm"
    },
    # two gloo ranks under launch --watchdog, rank 0 leaving the training loop alone for the evaluation's gather (u29)
    "test_watchdog_u29_early_stop": {
        "test_a_rank_that_stopped_the_loop_alone_is_named_with_the_break_and_how_to_stop_together"
    },
    # two gloo ranks under launch --debug, rank 1 never reaching rank 0's all_gather (u29)
    "test_explain_u29_debug_waits": {
        "test_debug_modes_timeout_at_a_collective_one_rank_never_reached_names_it_and_the_waiting_line"
    },
    # pytorch/examples' tensor-parallel ToyModel on 2 gloo ranks under launch --debug, batches of two sizes (u30)
    "test_explain_u30_tp_inputs": {
        "test_tp_ranks_given_batches_of_different_sizes_under_debug_on_this_torch_say_the_same_input_per_tp_group"
    },
    # FSDP2 on 2 gloo ranks under launch --watchdog, the full state dict gathered under rank 0 only (u30)
    "test_launch_u30_condition_gather": {
        "test_a_state_dict_gathered_under_rank_0_only_on_this_torch_names_the_condition_not_uneven_iterations",
        "test_a_barrier_under_rank_0_only_under_debug_on_this_torch_is_read_with_its_condition",
    },
    # a DDP loop one step longer on rank 0, 2 gloo ranks under launch --debug (u30)
    "test_launch_u30_ddp_backward": {
        "test_a_ddp_rank_one_step_ahead_under_debug_on_this_torch_is_named_in_backwards_unchecked_all_reduce"
    },
    # two gloo ranks under launch --debug, rank 1 making a broadcast where rank 0 makes an all_reduce (u30)
    "test_explain_u30_debug_operations": {
        "test_ranks_making_different_collectives_under_debug_on_this_torch_are_read_with_each_ranks_call"
    },
    # a DDP loop on 2 gloo ranks under launch --watchdog, rank 1 skipping a NaN loss's backward (u31)
    "test_launch_u31_ddp_skipped_backward": {
        "test_a_ddp_rank_skipping_a_nan_losss_backward_under_watchdog_on_this_torch_says_backward_passes_differ"
    },
    # an all_reduce in an evaluation run on rank 0 only, under launch --watchdog: gloo aborts rank 0 (u41)
    "test_launch_u41_eval_all_reduce_on_rank_0": {
        "test_a_rank_0_only_evaluation_with_an_all_reduce_gloo_aborts_names_the_call_the_other_rank_and_the_fix"
    },
    # a barrier under `if rank == 0:` after a broadcast_object_list, under launch --debug --watchdog (u34)
    "test_launch_u34_object_collective_then_lone_barrier": {
        "test_a_lone_barrier_after_an_object_broadcast_under_debug_watchdog_says_rank_1_finished_not_different_ops"
    },
    # Fabric's save under `if fabric.is_global_zero:` on 2 gloo ranks under launch --watchdog (u34)
    "test_explain_u34_lightning_save_on_rank_zero": {
        "test_fabric_save_on_rank_zero_only_under_watchdog_leads_with_calling_lightnings_save_on_every_rank"
    },
    # a Lightning run on the CPU with 2 DataLoader workers, SIGINT to the rank and then its workers (session 40)
    "test_launch_s40_lightning_ctrl_c": {
        "test_a_live_lightning_step_stopped_with_its_workers_is_named_not_the_workers_wait"
    },
    # the DDP tutorial's loop on 2 gloo ranks under torchdoctor launch, rank 1's dataset hanging, SIGINT (u31)
    "test_launch_u31_ctrl_c_places": {
        "test_a_hang_stopped_with_ctrl_c_under_launch_on_this_torch_says_where_each_rank_was"
    },
    # a callback's barrier under a condition on the rank, 2 gloo ranks under launch --debug (u31)
    "test_launch_u31_debug_condition": {
        "test_a_callbacks_barrier_under_a_rank_condition_under_debug_on_this_torch_names_the_condition"
    },
    "test_explain_group_teardown": {
        "test_a_barrier_after_destroy_process_group_on_this_torch_is_the_destroyed_group"
    },
    # a DataLoader's two worker processes each yielding the whole IterableDataset
    "test_explain_k30_data_and_pipelines": {
        "test_every_worker_yielding_the_whole_iterable_dataset",
    },
    # a log piped through `cat`
    "test_explain_inputs": {"test_a_pipe_a_file_and_a_folder_give_the_same_verdict"},
    "test_check_ids": {
        "test_env_checks_on_fake_machines_emit_their_own_id",
        "test_gpu_and_mpi_checks_emit_their_own_id",
    },
    "test_cli": {
        "test_bad_input_to_every_command_is_one_line_naming_the_value",
        "test_check_json_lists_sys_findings",
        "test_check_says_what_it_is_doing_on_a_terminal_only",
        "test_colour_on_a_terminal_none_in_a_pipe_or_with_no_color",
        "test_output_to_a_reader_that_leaves_exits_quietly_with_the_commands_status",
        "test_shell_completion_completes_commands_and_flags",
    },
    "test_distributed_debug": {
        "test_debug_names_the_users_line_under_accelerate_and_the_fix_for_an_uneven_batch",
        "test_mismatches_raise_on_every_rank_with_accelerate_wording",
        "test_plain_torch_distributed_script_checked_after_enable",
        "test_rank_that_never_arrives_is_named_within_the_timeout",
    },
    "test_distributed_logging": {
        "test_in_order_on_three_ranks_with_different_levels",
        "test_a_message_skipped_by_a_later_rank_is_named_on_both_ranks",
    },
    "test_env_arch": {
        "test_cpu_torch_reads_gpus_from_nvidia_smi",
        "test_nvcc_too_old_for_the_gpu_names_an_installed_toolkit_that_can",
        "test_set_arch_list_is_checked",
        "test_unset_arch_list_warns_with_the_value_for_mixed_gpus",
        "test_what_nvcc_lists_wins_over_the_table",
    },
    "test_env_compiler": {
        "test_cc_too_new_is_fixed_through_cc",
        "test_cxx_that_torch_checks_is_fixed_through_the_variables",
        "test_gcc_too_new_fails_with_the_symlink_fix",
        "test_gcc_versions_read_from_real_outputs",
        "test_no_older_gcc_installed_prints_the_install_line",
        "test_running_the_printed_fix_makes_the_check_pass",
        "test_table_limit_for_real_nvcc_versions",
        "test_this_machines_real_nvcc_and_gcc",
    },
    "test_env_fakes": {
        "test_fake_nvcc_prints_the_recorded_version",
        "test_fake_nvidia_smi_answers_both_queries",
    },
    "test_errors": {
        "test_no_permission_is_named_as_such",
    },
    "test_flight_recorder": {
        "test_the_rank_that_skipped_an_all_reduce_is_named_with_the_collective_and_the_line",
    },
    "test_integrations_attach": {
        "test_importing_torchdoctor_imports_neither_transformers_nor_lightning",
    },
    "test_integrations_transformers": {
        "test_two_ranks_each_dump_says_its_rank_and_names_the_models_own_modules",
    },
    "test_launch": {
        "test_a_failing_script_is_named_in_torchruns_summary_and_its_traceback_is_the_users_own",
        "test_a_node_whose_peer_never_comes_says_so_after_the_watchdogs_time",
        "test_a_two_rank_torchrun_command_line_runs_as_torchrun_would_in_either_spelling",
        "test_ctrl_c_stops_every_process_removes_the_temp_folder_and_says_one_line",
        "test_one_node_with_a_wrong_address_is_named_before_torchrun_starts",
        "test_a_refused_launch_never_imports_torch",
        "test_two_nodes_one_from_a_config_file_one_from_flags_run_the_script_as_python_would",
    },
    "test_accelerate_without_gpus": {
        "test_each_rank_accelerate_left_alone_says_so_and_the_fix_makes_one_job"
    },
    "test_init_waiting": {
        "test_a_rank_whose_peer_never_comes_names_it_and_gives_up_at_the_debug_timeout",
        "test_ctrl_c_stops_the_wait",
        "test_two_ranks_started_by_hand_a_few_seconds_apart_meet_and_reduce",
    },
    "test_launch_ended_early": {
        "test_a_rank_that_ends_while_the_other_trains_is_named_by_launch_debug",
        "test_uneven_batches_under_model_join_finish_and_launch_says_nothing",
    },
    "test_mpi_checks": {
        "test_diagnose_skips_the_sanity_run_when_ssh_fails",
        "test_mpirun_flavour_read_from_the_real_version_command",
        "test_sanity_run_failures_give_the_fix_for_what_mpirun_said",
        "test_sanity_run_uses_each_flavours_options_and_compares_hostnames",
        "test_ssh_failures_are_named_per_host_with_their_fix",
        "test_ssh_ok_skipped_for_local_hosts_and_missing_ssh",
    },
    "test_net_bandwidth": {
        "test_a_real_gloo_sweep_is_judged_per_collective_with_gloo_advice",
        "test_plot_without_matplotlib_names_the_extra",
    },
    "test_numerics_plot": {
        "test_plot_names_the_missing_extra_without_matplotlib",
    },
    "test_report": {
        "test_cli_report_json_has_the_same_facts_and_no_secret",
        "test_package_versions_do_not_import_the_packages",
        "test_versions_read_the_driver_and_nvcc_from_real_commands",
    },
    "test_reproducibility": {
        "test_another_process_draws_the_same_numbers_whatever_its_hash_seed",
    },
    "test_python_environment": {
        "test_check_run_beside_a_torch_py_names_it_instead_of_crashing",
    },
    "test_system_checks": {
        "test_import_torch_is_tried_once_and_a_second_import_is_a_plain_import_error",
    },
    "test_torchrun": {
        "test_stop_ends_the_launcher_and_every_worker_in_their_own_sessions",
        "test_stop_finds_the_workers_of_a_launcher_that_died_first",
        "test_stop_on_a_launcher_that_ended_by_itself_is_harmless",
    },
    "test_watchdog": {
        "test_supervise_stops_a_run_whose_workers_never_start_within_the_start_timeout",
        "test_watch_for_hangs_alone_reports_this_process_and_exits",
        "test_watch_for_hangs_in_the_script_under_plain_torchrun",
    },
}
# fixtures that start processes: `cli` runs the command line, `job` a shared job (test_flight_recorder: 3 gloo ranks)
PROCESS_FIXTURES = {"cli", "job"}


def starts_processes(item) -> bool:
    """Whether ``item`` is one of the tests that start a process (the `processes` mark)."""
    module = item.module.__name__ if item.module is not None else ""
    name = getattr(item, "originalname", item.name)
    return (
        not PROCESS_FIXTURES.isdisjoint(item.fixturenames)
        or module in PROCESS_MODULES
        or name in PROCESS_TESTS.get(module, ())
    )


# Modules whose tests read one real job run by a module-scoped fixture (several torch imports each). Under
# xdist's plain `load` every worker that got some of their tests ran the job again; `make test` runs with
# `--dist loadgroup`, for which `pytest_xdist_make_scheduler` below sends each of these modules whole to one
# worker. (xdist's own `xdist_group` marks do not group under pytest 9: xdist 3.8 renames `item._nodeid`,
# which pytest 9 no longer reads.)
SHARED_JOB_MODULES = {
    "test_accelerate_compat",  # accelerate's own tests: a pytest of their own, and 2 gloo ranks
    "test_distributed_debug",  # one 2-rank job: the mismatches, then accelerate's uneven gather
    "test_distributed_operations",  # one 2-rank job: accelerate's debug switch, then the collectives' results
    "test_flight_recorder",  # a 3-rank job's flight-recorder dumps
    "test_memory_distributed",  # one 2-rank job: the batch-size searches, then a slow and a missing rank
    "test_numerics_ranks",  # one 2-rank job, two scenarios in turn, each read by a test
    "test_stragglers",  # a healthy 2-rank launch and one with a slow rank, each read by two tests
}


def _module_and_name(nodeid: str) -> tuple[str, str]:
    """``tests/test_x.py::test_y[case]`` -> ("test_x", "test_y")."""
    path, _, rest = nodeid.partition("::")
    return Path(path).stem, rest.split("[", 1)[0].rsplit("::", 1)[-1]


def _dispatch_order(scope: str) -> int:
    """Which work goes out first: the shared jobs, then what starts processes (the long tests), then the
    in-process tests, which fill the last minutes evenly instead of a long test starting last on one worker."""
    module, name = _module_and_name(scope)
    if module in SHARED_JOB_MODULES and "::" not in scope:
        return 0
    return 1 if module in PROCESS_MODULES or name in PROCESS_TESTS.get(module, ()) else 2


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup`: every test on its own, one at a time to whichever worker is free (xdist's
    `loadscope` with a scope per test), except that a module of `SHARED_JOB_MODULES` is one scope; the
    process-starting tests go out first."""
    if config.getoption("dist", None) != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedJobsTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.partition("::")[0]
            return path if Path(path).stem in SHARED_JOB_MODULES else nodeid

        def _assign_work_unit(self, node) -> None:
            if not getattr(self, "ordered", False):  # the first unit to go out: the queue is complete
                for scope in sorted(self.workqueue, key=_dispatch_order):
                    self.workqueue.move_to_end(scope)
                self.ordered = True
            super()._assign_work_unit(node)

    return SharedJobsTogether(config, log)


# The live issue cases: the tests of the modules named `test_*_uNN_*` (a user's issue found in session NN and
# fixed) that start processes, most of them a real 2-rank job (3.5-13 s of CPU each, 6-21 s of wall time, measured
# in session 37). The suite keeps the cheap ones and a real job of each command (explain, launch --debug,
# launch --watchdog, net; mpi's one case starts nothing) and the two Ctrl-C ones, named here; the others are left
# out of its collection (deselected) and run by `benchmarks/issue_cases.py`, which prints a table of each case's
# outcome and CPU (`pytest --issue-cases` collects them too). Every in-process test of those modules stays.
ISSUE_CASE_MODULE = re.compile(r"test_[a-z]+_u\d+_")
ISSUE_CASES_IN_THE_SUITE = {
    # the cheap ones (under 1.5 s of CPU each, session 37): one-process torch scripts forked from the rank fork
    # server, `net`'s refusals before any rank starts, and the tests of `net`'s modules that start nothing
    "test_explain_u27_device_id": {
        "test_device_id_of_a_cpu_device_says_to_leave_it_out_on_a_machine_without_gpus"
    },
    "test_explain_u27_device_string": {
        "test_a_device_string_from_no_accelerator_says_it_was_none_and_how_to_fall_back_to_the_cpu",
        "test_torch_device_given_the_none_of_no_accelerator_is_not_a_bug_of_torch",
    },
    "test_explain_u28_daemon": {
        "test_a_daemon_trainer_whose_dataloader_starts_workers_on_this_torch_says_daemon_true_and_exit_status"
    },
    "test_explain_u28_worker_killed": {
        "test_a_dataloader_worker_killed_on_this_torch_names_the_worker_and_not_the_line_as_the_cause"
    },
    "test_explain_u29_worker_told_twice": {
        "test_a_worker_killed_while_the_main_process_waits_on_this_torch_is_one_finding_not_a_full_dev_shm"
    },
    "test_explain_u29_by_hand": {
        "test_debug_modes_wait_for_a_rank_started_by_hand_on_this_torch_is_read_as_the_rank_never_started"
    },
    "test_net_u33_loopback_name": {
        "test_the_other_node_names_the_loopback_line_in_seconds_before_any_rank_starts",
        "test_the_name_of_this_node_localhost_or_an_address_is_not_refused",
    },
    "test_net_u33_own_name": {
        "test_a_node_whose_own_name_does_not_resolve_is_told_so_before_any_rank_starts"
    },
    "test_net_u33_versions": {
        "test_a_rank_on_another_torch_is_named_beside_the_others_version",
        "test_ranks_on_one_torch_get_no_version_finding",
    },
    "test_net_u33_find_bad_three_hosts": {
        "test_the_host_in_both_slow_pairs_is_named_whichever_it_is",
        "test_a_host_slow_only_once_or_pairs_alike_blame_nobody",
    },
    "test_net_u33_shared_hostname": {"test_ranks_of_one_machine_under_one_name_are_one_host"},
    # a real job of each command: explain on debug mode's timeout, launch --debug, launch --watchdog, and the
    # two Ctrl-C cases (a rank in Python, ranks blocked in C++)
    "test_explain_u29_debug_waits": {
        "test_debug_modes_timeout_at_a_collective_one_rank_never_reached_names_it_and_the_waiting_line"
    },
    "test_launch_u31_debug_condition": {
        "test_a_callbacks_barrier_under_a_rank_condition_under_debug_on_this_torch_names_the_condition"
    },
    "test_watchdog_u32_init_world_size": {
        "test_every_rank_waiting_in_init_process_group_names_the_world_size_it_passes"
    },
    "test_launch_u31_ctrl_c_places": {
        "test_a_hang_stopped_with_ctrl_c_under_launch_on_this_torch_says_where_each_rank_was"
    },
    "test_launch_u32_ctrl_c_blocked": {
        "test_ctrl_c_on_ranks_blocked_in_cpp_says_where_each_was_and_explain_reads_it"
    },
}


def pytest_addoption(parser):
    parser.addoption(
        "--issue-cases",
        action="store_true",
        help="also run the live issue cases that only benchmarks/issue_cases.py runs (ISSUE_CASES_IN_THE_SUITE)",
    )


def sweep_only(item) -> bool:
    """Whether ``item`` is a live issue case left to benchmarks/issue_cases.py (see ISSUE_CASES_IN_THE_SUITE)."""
    module, name = _module_and_name(item.nodeid)
    return (
        ISSUE_CASE_MODULE.match(module) is not None
        and item.get_closest_marker("processes") is not None  # marked here, or by the module's own pytestmark
        and name not in ISSUE_CASES_IN_THE_SUITE.get(module, ())
    )


def pytest_collection_modifyitems(config, items):
    for item in items:
        if starts_processes(item):
            item.add_marker(pytest.mark.processes)
    if not config.getoption("issue_cases", False):
        kept, left = [], []
        for item in items:
            (left if sweep_only(item) else kept).append(item)
        if left:
            config.hook.pytest_deselected(items=left)
            items[:] = kept


class StartsAProcess(BaseException):  # not an Exception: code under test must not swallow it
    """Raised in the fast lane where a test starts a process."""


def _refuse(*args, **kwargs):  # module level: a test may pickle what it finds in `os`
    raise StartsAProcess(args[:1])


_STARTERS = [
    (subprocess.Popen, "_execute_child"),
    (os, "fork"),
    (os, "posix_spawn"),
    (os, "posix_spawnp"),
    (multiprocessing.util, "spawnv_passfds"),
]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Under ``-m "not processes"`` no test may start a process, in its fixtures (module-wide ones included)
    or its body: the test fails, naming where to mark it."""
    if "not processes" not in (item.config.option.markexpr or ""):
        yield
        return
    saved = [(owner, name, getattr(owner, name)) for owner, name in _STARTERS]
    for owner, name, _ in saved:
        setattr(owner, name, _refuse)
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and call.excinfo.errisinstance(StartsAProcess):
        report.longrepr = (
            f"{item.nodeid} starts a process, so it belongs to `make test`, not `make test-fast`: "
            "name it (or its module, or the fixture that starts it) in tests/conftest.py"
        )


def _sigint_state() -> tuple[str, str]:
    """Whether this process ignores and whether its main thread blocks SIGINT, as the kernel has it (a C
    library can change either without Python's `signal.getsignal` knowing)."""
    bits = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("SigIgn", "SigBlk"):
                bits[name] = "yes" if int(value, 16) & (1 << (2 - 1)) else "no"
    return bits.get("SigIgn", "?"), bits.get("SigBlk", "?")


@pytest.fixture(autouse=True)
def _ctrl_c_left_as_found():
    """A test that leaves Ctrl-C ignored or blocked in the worker breaks every later test of that worker that
    starts a process and presses Ctrl-C (children inherit both): put it back, and fail the test that did it."""
    import signal

    handler, state = signal.getsignal(signal.SIGINT), _sigint_state()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    yield
    now_handler, now_state = signal.getsignal(signal.SIGINT), _sigint_state()
    now_mask = signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    signal.signal(signal.SIGINT, handler)  # also resets what a C library set behind Python's back
    assert (now_handler, now_state, now_mask) == (handler, state, mask), (
        f"this test left SIGINT's handler {now_handler!r} (was {handler!r}), (ignored, blocked) {now_state} "
        f"(was {state}), the blocked signals {sorted(now_mask)} (were {sorted(mask)})"
    )
