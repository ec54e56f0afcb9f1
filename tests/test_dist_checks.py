import json

import pytest

from torchdoctor.distributed.checks import (
    check_debug_mode,
    check_environment,
    check_nccl_debug,
    check_nccl_error_handling,
    check_nccl_settings,
    check_timeout,
    check_torch_debug,
)


def test_debug_mode_off_by_default_and_on_with_the_variable():
    off = check_debug_mode({})
    assert off.id == "dist.debug_mode" and off.status == "ok" and "off" in off.summary
    on = check_debug_mode({"TORCHDOCTOR_DEBUG_MODE": "1", "TORCHDOCTOR_DEBUG_TIMEOUT": "30"})
    assert on.status == "ok" and "debug mode on" in on.summary and "30s" in on.summary


def test_debug_mode_bad_values_fail_naming_them():  # the run refuses them (tests/test_environment.py)
    bad = check_debug_mode({"TORCHDOCTOR_DEBUG_MODE": "maybe"})
    assert bad.status == "fail" and "'maybe'" in bad.summary and "TORCHDOCTOR_DEBUG_MODE=1" in bad.fix
    for timeout in ("soon", "0", "-5"):
        finding = check_debug_mode({"TORCHDOCTOR_DEBUG_MODE": "1", "TORCHDOCTOR_DEBUG_TIMEOUT": timeout})
        assert finding.status == "fail" and repr(timeout) in finding.summary, timeout


def test_debug_mode_says_which_variable_turned_it_on():
    theirs = check_debug_mode({"ACCELERATE_DEBUG_MODE": "true"})  # what `accelerate launch --debug` sets
    assert theirs.status == "ok" and theirs.details["enabled_by"] == "ACCELERATE_DEBUG_MODE"
    assert "debug mode on (ACCELERATE_DEBUG_MODE=true)" in theirs.summary
    ours = check_debug_mode({"TORCHDOCTOR_DEBUG_MODE": "1", "ACCELERATE_DEBUG_MODE": "1"})
    assert ours.details["enabled_by"] == "TORCHDOCTOR_DEBUG_MODE"
    off = check_debug_mode({"TORCHDOCTOR_DEBUG_MODE": "0", "ACCELERATE_DEBUG_MODE": "1"})
    assert (
        not off.details["enabled"]
        and "TORCHDOCTOR_DEBUG_MODE=0 overrides ACCELERATE_DEBUG_MODE=1" in off.summary
    )
    bad = check_debug_mode({"ACCELERATE_DEBUG_MODE": "sometimes"})
    assert bad.status == "fail" and "ACCELERATE_DEBUG_MODE='sometimes'" in bad.summary


def test_debug_mode_check_agrees_with_debug_mode_itself():
    from torchdoctor.distributed.debug_settings import debug_mode_enabled

    for value in ("1", "true", "on", "0", "off", ""):
        for theirs in ({}, {"ACCELERATE_DEBUG_MODE": "1"}, {"ACCELERATE_DEBUG_MODE": "no"}):
            environ = {"TORCHDOCTOR_DEBUG_MODE": value, **theirs}
            assert check_debug_mode(environ).details["enabled"] == debug_mode_enabled(environ), environ


def test_nccl_error_handling_defaults_abort_a_timed_out_collective():
    finding = check_nccl_error_handling({})
    assert finding.id == "dist.nccl_error_handling" and finding.status == "ok"
    assert "skip clean-up" in finding.summary
    blocking = check_nccl_error_handling({"TORCH_NCCL_BLOCKING_WAIT": "1"})
    assert blocking.status == "ok" and "blocking wait" in blocking.summary


def test_async_error_handling_off_warns_that_the_run_hangs():
    finding = check_nccl_error_handling({"TORCH_NCCL_ASYNC_ERROR_HANDLING": "0"})
    assert finding.status == "warn" and "hangs" in finding.summary
    assert "unset TORCH_NCCL_ASYNC_ERROR_HANDLING" in finding.fix
    # blocking wait still raises in the caller after the timeout
    both = {"TORCH_NCCL_ASYNC_ERROR_HANDLING": "0", "TORCH_NCCL_BLOCKING_WAIT": "1"}
    assert check_nccl_error_handling(both).status == "ok"
    assert check_nccl_error_handling({"TORCH_NCCL_ASYNC_ERROR_HANDLING": "7"}).status == "warn"


@pytest.mark.parametrize("mode", ["1", "2", "3"])
def test_blocking_wait_beside_async_error_handling_says_only_the_blocking_wait_is_used(mode):
    # torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp: with TORCH_NCCL_BLOCKING_WAIT on, no watchdog thread applies
    # the asynchronous handling (earlier torch reset it to 0: "should not both be enabled")
    both = {"TORCH_NCCL_ASYNC_ERROR_HANDLING": mode, "TORCH_NCCL_BLOCKING_WAIT": "1"}
    finding = check_nccl_error_handling(both)
    assert finding.status == "warn", finding.summary
    assert f"TORCH_NCCL_ASYNC_ERROR_HANDLING={mode}: torch uses only the blocking wait" in finding.summary
    assert finding.fix.startswith("unset TORCH_NCCL_BLOCKING_WAIT") and "\n" not in finding.summary


def test_deprecated_nccl_names_warn_with_the_new_name():
    finding = check_nccl_error_handling({"NCCL_ASYNC_ERROR_HANDLING": "1"})
    assert finding.status == "warn" and "NCCL_ASYNC_ERROR_HANDLING" in finding.summary
    assert "export TORCH_NCCL_ASYNC_ERROR_HANDLING=1 && unset NCCL_ASYNC_ERROR_HANDLING" == finding.fix


def test_monitoring_off_warns():
    finding = check_nccl_error_handling({"TORCH_NCCL_ENABLE_MONITORING": "0"})
    assert finding.status == "warn" and finding.fix == "unset TORCH_NCCL_ENABLE_MONITORING"


def test_timeout_variables_nobody_reads_warn_with_the_real_setting():
    assert check_timeout({}) is None
    finding = check_timeout({"NCCL_TIMEOUT": "1800"})
    assert finding.id == "dist.timeout" and finding.status == "warn"
    assert "NCCL_TIMEOUT=1800" in finding.summary and "init_process_group" in finding.fix
    heartbeat = check_timeout({"TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC": "10m"})
    assert heartbeat.status == "warn" and "'10m'" in heartbeat.summary


def test_torch_distributed_debug_levels():
    assert check_torch_debug({}).status == "ok"
    assert "DETAIL" in check_torch_debug({"TORCH_DISTRIBUTED_DEBUG": "DETAIL"}).summary
    bad = check_torch_debug({"TORCH_DISTRIBUTED_DEBUG": "VERBOSE"})
    assert bad.status == "warn" and "'VERBOSE'" in bad.summary and bad.fix


def test_nccl_debug_levels():
    unset = check_nccl_debug({})
    assert unset.status == "ok" and "NCCL_DEBUG=INFO" in unset.summary
    assert check_nccl_debug({"NCCL_DEBUG": "info"}).summary == "NCCL_DEBUG=INFO"
    bad = check_nccl_debug({"NCCL_DEBUG": "LOUD"})
    assert bad.status == "warn" and bad.fix == "export NCCL_DEBUG=INFO"


def test_check_command_reports_the_settings_in_effect(cli_here):
    # through the same `main` here: `check --json` with settings that warn runs in a real process in
    # test_check_ids (a process of its own imports torch again, 3 s of CPU)
    env = {"TORCH_NCCL_ASYNC_ERROR_HANDLING": "0", "NCCL_TIMEOUT": "1800", "NCCL_DEBUG": "INFO"}
    result = cli_here("check", "--json", "--skip", "net", "--skip", "gpu", "--skip", "env", env=env)
    found = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    assert found["dist.nccl_error_handling"]["status"] == "warn"
    assert found["dist.timeout"]["status"] == "warn"
    assert found["dist.nccl_debug"]["summary"] == "NCCL_DEBUG=INFO"
    assert {"sys.kernel", "sys.shm", "dist.debug_mode", "dist.torch_debug"} <= set(found)


def test_nccl_settings_say_nothing_when_none_is_set():
    assert check_nccl_settings({}, present=["lo", "eth0"]) is None


def test_a_socket_interface_this_host_lacks_fails_naming_the_ones_it_has():
    bad = check_nccl_settings({"NCCL_SOCKET_IFNAME": "eth9"}, present=["lo", "ens5"], nccl_here=True)
    assert bad.id == "dist.nccl_settings" and bad.status == "fail"
    assert "NCCL_SOCKET_IFNAME=eth9: no such interface here" in bad.summary and "lo, ens5" in bad.summary
    assert "export NCCL_SOCKET_IFNAME=ens5" in bad.fix
    gloo = check_nccl_settings(
        {"GLOO_SOCKET_IFNAME": "eth"}, present=["lo", "eth0"]
    )  # gloo: exact names only
    assert gloo.status == "fail" and "GLOO_SOCKET_IFNAME=eth" in gloo.summary


def test_socket_interfaces_match_as_nccl_matches_them():
    present = ["lo", "eth0", "docker0"]
    for value in ("eth", "eth0", "=eth0", "ib0,eth", "^docker,lo", "^eth9"):
        finding = check_nccl_settings({"NCCL_SOCKET_IFNAME": value}, present=present)
        assert finding.status == "ok", value
    assert (
        check_nccl_settings({"NCCL_SOCKET_IFNAME": "=eth"}, present=present, nccl_here=True).status == "fail"
    )


def test_a_word_where_nccl_reads_a_number_warns_with_the_number():
    for value in ("yes", "true", "1.5", "on"):
        finding = check_nccl_settings({"NCCL_P2P_DISABLE": value}, present=["lo"])
        assert finding.status == "warn" and f"NCCL_P2P_DISABLE={value!r}" in finding.summary, value
        assert "export NCCL_P2P_DISABLE=1" in finding.fix
    for value in ("1", "0", " 1 ", "0x1"):
        assert check_nccl_settings({"NCCL_IB_DISABLE": value}, present=["lo"]).status == "ok", value


def test_the_interface_suggested_is_the_default_routes(tmp_path):
    from torchdoctor.distributed.nccl_variables import routed_interface

    table = tmp_path / "route"
    table.write_text(
        "Iface\tDestination\tGateway\tFlags\n"
        "ens5\t000200C0\t00000000\t0001\n"
        "bond0\t00000000\t010200C0\t0003\n"
    )
    assert routed_interface(str(table)) == "bond0"
    assert routed_interface(str(tmp_path / "none")) is None


def test_a_missing_interface_and_a_word_for_a_number_are_both_said():
    both = check_nccl_settings(
        {"NCCL_SOCKET_IFNAME": "eth9", "NCCL_P2P_DISABLE": "yes"}, present=["lo", "eth0"], nccl_here=True
    )
    assert both.status == "fail" and "NCCL_P2P_DISABLE='yes'" in both.summary
    assert "export NCCL_P2P_DISABLE=1" in both.fix and "NCCL_SOCKET_IFNAME=" in both.fix


def test_a_socket_interface_here_without_an_address_fails_saying_so_not_missing():
    # gloo: "Unable to find address for: vx0" when vx0 exists but has no IP address (a veth never configured)
    bad = check_nccl_settings(
        {"GLOO_SOCKET_IFNAME": "vx0"}, present=["lo", "eth0", "vx0"], addressed=["lo", "eth0"]
    )
    assert bad.status == "fail" and "GLOO_SOCKET_IFNAME=vx0: here, but with no IP address" in bad.summary
    assert "no such interface" not in bad.summary and "Unable to find address for: vx0" in bad.summary
    assert "ip addr add <address>/<prefix> dev vx0" in bad.fix and "export GLOO_SOCKET_IFNAME=" in bad.fix
    nccl = check_nccl_settings(
        {"NCCL_SOCKET_IFNAME": "vx"}, present=["lo", "vx0", "vx1"], addressed=["lo", "vx1"]
    )
    assert nccl.status == "ok"  # NCCL takes a prefix: vx1 has an address
    alone = check_nccl_settings(
        {"NCCL_SOCKET_IFNAME": "vx0"}, present=["lo", "vx0"], addressed=["lo"], nccl_here=True
    )
    assert (
        alone.status == "fail" and "NCCL stops at start-up" in alone.summary and "gloo" not in alone.summary
    )


def test_an_nccl_interface_this_host_lacks_only_warns_where_torch_has_no_nccl():
    # a CPU torch runs gloo, which never reads NCCL_SOCKET_IFNAME: `net` passes, so "the run stops" was wrong
    cpu = check_nccl_settings({"NCCL_SOCKET_IFNAME": "eth9"}, present=["lo", "ens5"], nccl_here=False)
    assert cpu.status == "warn" and "this torch has no NCCL" in cpu.summary and "a GPU run" in cpu.summary
    assert "export NCCL_SOCKET_IFNAME=ens5" in cpu.fix
    both = {"NCCL_SOCKET_IFNAME": "eth9", "GLOO_SOCKET_IFNAME": "eth9"}
    assert (
        check_nccl_settings(both, present=["lo", "ens5"], nccl_here=False).status == "fail"
    )  # gloo reads its own


def test_a_rank_set_up_left_in_the_shell_warns_outside_a_launcher_only():
    # WORLD_SIZE=2 exported for an earlier run: plain `python train.py` then stops in init_process_group
    left = check_environment({"WORLD_SIZE": "2"})
    assert (
        left.status == "warn"
        and "WORLD_SIZE=2 set in this shell without RANK, MASTER_ADDR, MASTER_PORT" in left.summary
    )
    assert left.fix.startswith("unset WORLD_SIZE ")
    assert check_environment({"LOCAL_RANK": "0", "WORLD_SIZE": "2"}).fix.startswith(
        "unset WORLD_SIZE LOCAL_RANK "
    )
    full = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "node0", "MASTER_PORT": "29500"}
    for fine in (
        {},
        full,
        {"MASTER_ADDR": "node0", "MASTER_PORT": "29500"},
        {"WORLD_SIZE": "2", "TORCHELASTIC_RUN_ID": "x"},
        {"WORLD_SIZE": "2", "SLURM_PROCID": "0"},
    ):
        assert check_environment(fine).status == "ok", fine


def test_debug_mode_on_says_a_scripts_own_calls_need_launch_debug_or_enable():
    """Tried as a user (session 43): TORCHDOCTOR_DEBUG_MODE=1 under plain torchrun, a Trainer whose compute_loss
    all_gathers mismatched shapes: nothing checked it (gloo aborted); `torchdoctor launch --debug` named the line."""
    on = check_debug_mode({"TORCHDOCTOR_DEBUG_MODE": "1"})
    assert "`torchdoctor launch --debug`" in on.summary and "debug.enable()" in on.summary
    assert "under plain torchrun the variable alone leaves them unchecked" in on.summary
    off = check_debug_mode({})
    assert "`torchdoctor launch --debug` turns it on" in off.summary
