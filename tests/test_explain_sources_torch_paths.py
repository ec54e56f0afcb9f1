"""Messages of the torch launcher, the c10d store, init_process_group, NCCL and cpp_extension, read from the code
that prints them (issue 19: the launcher, communication and build families a new sample names least).

Each input is a catalog template (its id beside it) with realistic values in its placeholders, printed the way
its source prints it (a logger's prefix, an exception's type, NCCL's WARN prefix). For each: the kind, how sure
it is (a line that several causes print is "likely" and names the other reading), the facts it reads, and a
near-miss with the same words that must not fire.
"""

from __future__ import annotations

import pytest
from explaining import explained as lead
from explaining import filled as template

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")


def sure(found) -> str:
    return found.details.get("confidence", "certain")


NCCL_WARN = "node7:2210:2298 [{rank}] {file} NCCL WARN {message}\n"


# -- the c10d store's own timeouts (TCPStore.cpp doWait / barrier, torch 2.4+; elastic's) -------------------


@pytest.mark.parametrize(
    ("line", "read"),
    [
        (
            "torch.distributed.DistStoreError: "
            + template(
                "torch_cpp:wait-timeout-after-ms-keys",
                "1800000",
                "/torchelastic/agent/terminal_state/last_member",
            ),
            "wait timeout after 1800000ms",
        ),
        (
            "torch.distributed.DistStoreError: "
            + template(
                "torch_cpp:barrier-timeout-after-ms-key",
                "300000",
                "/default_pg/store_based_barrier_key:1/last_worker",
            ),
            "barrier timeout after 300000ms",
        ),
        (
            "TimeoutError: " + template("torch:timed-out-waiting-for-all-members", "16"),
            "all 16 members to join",
        ),
        (
            "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError: "
            + template("torch:timeout-while-waiting-for-keys-in"),
            "Timeout while waiting for keys in EtcdStore",
        ),
    ],
)
def test_a_store_read_that_timed_out_is_likely_a_rank_that_never_wrote_its_key(line, read):
    found = lead(line + "\n")
    assert found.id == "log.rendezvous_or_port" and sure(found) == "likely"
    assert read in found.summary and "the key another rank should set never came" in found.summary
    # a peer that died first prints the same: named as the other reading
    assert found.details["alternatives"] == ["log.peer_closed"]


def test_the_store_timeout_of_ncclUniqueId_stays_the_collective_timeouts():
    line = (
        "torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from "
        "[0] via c10d key-value store by key '0', but store->get('0') got error: "
        + template("torch_cpp:wait-timeout-after-ms-keys", "600000", "/default_pg/0//cuda//0")
    )
    assert lead(line + "\n").id == "log.collective_timeout"


@pytest.mark.parametrize(
    "line",
    [
        "wait timeout after everything else was tried\n",  # the words, not TCPStore's "after <N>ms, keys:"
        "INFO: timed out waiting for all the downloads to finish\n",
    ],
)
def test_the_stores_words_elsewhere_are_not_a_store_timeout(line):
    assert lead(line).id == "log.unrecognised"


@pytest.mark.parametrize(
    "ident", ["torch:the-node-has-failed-to-send", "torch:the-node-has-failed-to-shutdown"]
)
def test_an_agent_that_lost_the_rendezvous_store_names_the_node_that_hosts_it(ident):
    # dynamic_rendezvous.py: logger.warning of the keep-alive (and of the shutdown) that raised a RendezvousError
    line = "[W1129 10:02:11] " + template(ident, "node3_4411_0", "llama-ft", "RendezvousConnectionError")
    found = lead(line + "\n")
    assert found.id == "log.rendezvous_or_port" and sure(found) == "likely"
    assert "lost the rendezvous store" in found.summary and "RendezvousConnectionError" in found.summary
    assert "log.peer_closed" in found.details["alternatives"]


# -- torchrun stopping and restarting its workers (elastic/multiprocessing/api.py, agent/server/api.py) -------


@pytest.mark.parametrize(
    "line",
    [
        "W1129 10:02:11.123000 4411 torch/distributed/elastic/multiprocessing/api.py:897] "
        + template("torch:sending-process-closing-signal", "47110", "SIGTERM"),
        "INFO:torch.distributed.elastic.agent.server.api:"
        + template("torch:worker-group-attempts-left-will-restart", "default", "FAILED", "3", "3"),
    ],
)
def test_torchrun_stopping_or_restarting_its_workers_is_a_consequence_of_a_worker_that_failed(line):
    found = lead(line + "\n")
    assert found.id == "log.child_failed" and sure(found) == "likely"
    assert "the cause is not in this log" in found.summary


def test_torchrun_stopping_its_workers_after_the_error_leaves_the_error_leading():
    text = (
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 79.15 GiB total capacity)\n"
        + template("torch:sending-process-closing-signal", "47110", "SIGTERM")
        + "\n"
    )
    assert lead(text).id == "log.cuda_oom"


def test_a_closing_signal_that_names_no_signal_is_not_torchruns():
    assert lead("the wizard sent a closing signal to every tower\n").id == "log.unrecognised"


# -- NCCL: the bootstrap's network device, the hosts' NIC counts, its result strings ------------------------


@pytest.mark.parametrize(
    ("ident", "values", "value"),
    [
        ("nccl:no-device-found-matching-verify-nccl", ("", "mlx5_9"), "mlx5_9"),
        ("nccl:no-device-found-after-excluding-verify", ("exactly ", "mlx5_0"), "mlx5_0"),
    ],
)
def test_an_oob_interface_setting_that_matches_no_device_is_certain(ident, values, value):
    found = lead(NCCL_WARN.format(rank=0, file="bootstrap.cc:577", message=template(ident, *values)))
    assert found.id == "log.network_interface" and sure(found) == "certain"
    assert f"NCCL_OOB_NET_IFNAME={value} names no network device" in found.summary
    assert "ibv_devinfo" in found.fix


def test_the_2_23_warning_that_ignores_the_oob_setting_is_not_a_failure():
    line = template("nccl:no-device-found-matching-nccl-oob", "mlx5_9")
    assert lead(NCCL_WARN.format(rank=0, file="bootstrap.cc:420", message=line)).id == "log.unrecognised"


@pytest.mark.parametrize(
    ("ident", "rest", "switch"),
    [
        # init.cc WARN("... Set NCCL_IGNORE_NET_MISMATCH=1 to " "continue."): the catalog keeps the first literal
        ("nccl:detected-mixed-local-net-device-counts", " continue.", "NCCL_IGNORE_NET_MISMATCH=1"),
        (
            "nccl:detected-mixed-local-collnet-device-counts",
            " NCCL_IGNORE_COLLNET_MISMATCH=1 to continue.",
            "NCCL_IGNORE_COLLNET_MISMATCH=1",
        ),
    ],
)
def test_hosts_that_count_different_nics_are_named_with_the_switch_that_goes_on(ident, rest, switch):
    message = template(ident, "4", "8") + rest
    found = lead(NCCL_WARN.format(rank=0, file="init.cc:1339", message=message))
    assert found.id == "log.network_interface" and sure(found) == "certain"
    assert "(min 4, max 8)" in found.summary and switch in found.fix


def test_the_info_line_of_an_ignored_nic_count_mismatch_is_not_a_failure():
    line = (
        "node7:2210:2298 [0] NCCL INFO Detected mixed local Net device counts across ranks (min 4, max 8). "
        "Ignoring due to NCCL_IGNORE_NET_MISMATCH.\n"
    )
    assert lead(line).id == "log.unrecognised"


@pytest.mark.parametrize(
    "line",
    [
        # torch's C10D_NCCL_CHECK around ncclGetErrorString(ncclInternalError) / (ncclInvalidArgument)
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
        + template("nccl:internal-error-please-report-this-issue")
        + ", NCCL version 2.18.1",
        # another wrapper of the same result string (cupy's NcclError)
        "cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_INVALID_ARGUMENT: "
        + template("nccl:invalid-argument-run-with-nccl-debug"),
        NCCL_WARN.format(
            rank=1, file="net_socket.cc:325", message=template("nccl:net-socket-socket-progress-error")
        ).rstrip(),
    ],
)
def test_ncclS_result_strings_and_the_socket_transports_failure_are_only_likely(line):
    found = lead(line + "\n")
    assert found.id == "log.nccl_error" and sure(found) == "likely"
    assert "log.nccl_bug_upgrade" in found.details["alternatives"]


def test_the_socket_transports_failure_points_at_the_peer_that_went_away():
    found = lead(
        NCCL_WARN.format(
            rank=1, file="net_socket.cc:325", message=template("nccl:net-socket-socket-progress-error")
        )
    )
    assert "Another rank died" in found.fix


def test_another_librarys_invalid_argument_is_not_ncclS():
    assert lead("ValueError: invalid argument (run with --verbose for details)\n").id != "log.nccl_error"


# -- torch.utils.cpp_extension's own build checks ------------------------------------------------------------


def test_a_device_linked_extension_without_ninja_asks_for_ninja():
    found = lead(
        "AssertionError: " + template("torch:with-dlink-true-ninja-is-required", "fused_dense_lib") + "\n"
    )
    assert found.id == "log.cuda_build" and sure(found) == "certain"
    assert "pip install ninja" in found.fix


def test_a_vc_environment_without_distutils_use_sdk_says_how_to_set_it():
    found = lead("UserWarning: " + template("torch:it-seems-that-the-vc-environment") + "\n")
    assert found.id == "log.cuda_build" and sure(found) == "certain"
    assert "DISTUTILS_USE_SDK=1" in found.fix


def test_ninja_named_elsewhere_is_not_the_extension_builders():
    assert lead("note: ninja is required to build the docs\n").id == "log.unrecognised"


# -- torchrun's --nnodes and --rdzv-conf (dynamic_rendezvous.py, etcd_rendezvous*.py, c10d backend) -----------


@pytest.mark.parametrize(
    ("line", "read"),
    [
        (
            "ValueError: " + template("torch:the-maximum-number-of-nodes-must", "1", "2"),
            "must be greater than",
        ),
        ("ValueError: " + template("torch:the-minimum-number-of-nodes-must", "0"), "greater than zero"),
        ("ValueError: " + template("torch:the-etcd-protocol-must-be-http"), "HTTP or HTTPS"),
        ("ValueError: " + template("torch:the-protocol-must-be-http-or"), "HTTP or HTTPS"),
        ("ValueError: " + template("torch:invalid-store-type-given-currently-only"), "file and tcp"),
    ],
)
def test_torchruns_rendezvous_options_it_refuses(line, read):
    found = lead(line + "\n")
    assert found.id == "log.launch_command" and sure(found) == "certain"
    assert read in found.summary and "MIN:MAX (1 <= MIN <= MAX)" in found.fix


def test_a_count_of_nodes_that_is_not_refused_is_not_a_launch_error():
    assert lead("The minimum number of nodes (2) joined the rendezvous\n").id == "log.unrecognised"


# -- init_process_group's own checks (distributed_c10d.py, rendezvous.py) ------------------------------------


@pytest.mark.parametrize(
    ("line", "summary", "fix"),
    [
        (
            "ValueError: " + template("torch:trying-to-initialize-the-default-process"),
            "called twice in one process",
            "if not torch.distributed.is_initialized():",
        ),
        (
            "ValueError: Error initializing torch.distributed using tcp:// rendezvous: "
            + template("torch:rank-parameter-missing"),
            "init method URL lacks",
            "rank=RANK, world_size=WORLD_SIZE",
        ),
        (
            "ValueError: Error initializing torch.distributed using file:// rendezvous: "
            + template("torch:world-size-parameter-missing"),
            "init method URL lacks",
            "rank=RANK, world_size=WORLD_SIZE",
        ),
        (
            "ValueError: Error initializing torch.distributed using tcp:// rendezvous: "
            + template("torch:port-number-missing"),
            "init method URL lacks",
            "with the port in the URL",
        ),
        ("ValueError: " + template("torch:port-must-have-value-from-to", "70000"), "but was 70000", "29500"),
        (
            "AssertionError: " + template("torch:cannot-specify-both-init-method-and"),
            "both a store",
            "not both",
        ),
        (
            "AssertionError: " + template("torch:world-size-must-be-positive-if"),
            "without its rank",
            "world_size=",
        ),
        ("AssertionError: " + template("torch:rank-must-be-non-negative-if"), "without its rank", "rank="),
        (
            "TypeError: " + template("torch:expected-timeout-argument-to-be-of", "1800"),
            "got 1800",
            "timedelta(minutes=30)",
        ),
        (
            "ValueError: " + template("torch:init-process-group-device-id-parameter"),
            "without an index",
            "torch.device('cuda', LOCAL_RANK)",
        ),
    ],
)
def test_init_process_group_refusing_its_arguments_is_certain_and_says_how_to_call_it(line, summary, fix):
    found = lead(line + "\n")
    assert found.id == "log.process_group_args" and sure(found) == "certain"
    assert summary in found.summary and fix in found.fix


@pytest.mark.parametrize(
    "line",
    [
        "KeyError: 'rank parameter missing from config.yaml'\n",  # the words outside rendezvous.py's URL check
        "INFO: the job's port number missing from the hostfile, using 29500\n",
    ],
)
def test_the_same_words_outside_init_process_group_are_not_it(line):
    assert lead(line).id != "log.process_group_args"


# -- a collective's own argument checks (distributed_c10d.py, c10d/Utils.hpp, ProcessGroupGloo.cpp) ----------


@pytest.mark.parametrize(
    ("line", "summary", "fix"),
    [
        (
            # _check_single_tensor's f-string goes on, indented, on a second line
            "TypeError: Invalid function argument. Expected parameter `tensor` of type torch.Tensor\n"
            "             but got <class 'float'> instead.",
            "but got <class 'float'> instead",
            "t = torch.tensor(value, device=device); dist.all_reduce(t); value = t.item()",
        ),
        (
            "TypeError: Invalid function argument. Expected parameter `tensor_list` of type List[torch.Tensor]\n"
            "             but got <class 'torch.Tensor'> instead.",
            "`tensor_list`",
            "[torch.empty_like(t) for _ in range(dist.get_world_size())]",
        ),
        (
            "ValueError: " + template("torch:argument-gather-list-must-be-specified"),
            "root-only argument on the wrong ranks",
            "if rank == dst else None",
        ),
        (
            "ValueError: " + template("torch:argument-scatter-list-must-not-be"),
            "root-only argument on the wrong ranks",
            "if rank == src else None",
        ),
        (
            "ValueError: " + template("torch:argument-dst-tensor-must-be-specified", "0"),
            "``dst_tensor``",
            "sharded.gather(dst, out=",
        ),
        (
            "AssertionError: " + template("torch:must-provide-object-gather-list-on"),
            "root-only",
            "[None] * world_size",
        ),
        (
            "RuntimeError: " + template("torch_cpp:tensor-dim-does-not-divide-equally"),
            "split sizes do not fit",
            "divide by the group's size",
        ),
        (
            "RuntimeError: " + template("torch_cpp:split-sizes-doesn-match-total-dim"),
            "split sizes do not fit",
            "input_split_sizes must sum to input.size(0)",
        ),
        (
            "RuntimeError: [/pytorch/torch/csrc/distributed/c10d/ProcessGroupGloo.cpp:2519] "
            + template("torch_cpp:invalid-input-tensor-list-size-must"),
            "one tensor per rank",
            "all_gather_into_tensor",
        ),
        (
            "ValueError: " + template("torch:invalid-rank-rank-should-not-be", "destination", "destination"),
            "sends to or receives from itself",
            "(rank + 1) % world_size",
        ),
    ],
)
def test_a_collective_refusing_its_arguments_is_certain_and_gives_the_calls_right_form(line, summary, fix):
    found = lead(line + "\n")
    assert found.id == "log.collective_arguments" and sure(found) == "certain"
    assert summary in found.summary and fix in found.fix


def test_another_librarys_invalid_function_argument_is_not_a_collectives():
    # the words of _check_single_tensor, about an argument that is not a tensor's (no "of type torch.Tensor")
    line = "ValueError: Invalid function argument. Expected parameter `lr` of type float\n"
    assert lead(line).id != "log.collective_arguments"


def test_an_exit_barrier_that_timed_out_points_at_the_other_nodes():
    # elastic/agent/server/api.py _exit_barrier (only after this node's workers SUCCEEDED): logger.exception
    text = (
        "E1129 10:02:11.123000 4411 torch/distributed/elastic/agent/server/api.py:1009] "
        + template("torch:error-waiting-on-exit-barrier-elapsed", "300.0512")
        + "\nTraceback (most recent call last):\n"
        "torch.distributed.DistStoreError: "
        + template(
            "torch_cpp:wait-timeout-after-ms-keys", "300000", "/torchelastic/agent/terminal_state/last_member"
        )
        + "\n"
    )
    found = lead(text)
    assert found.id == "log.rendezvous_or_port" and sure(found) == "likely"
    assert (
        "did not reach torchrun's exit barrier" in found.summary
        and "Elapsed: 300.0512 seconds" in found.summary
    )
    assert "log.peer_closed" in found.details["alternatives"]


def test_a_gcc_without_its_cpp_front_end_asks_for_g_plus_plus():
    # gcc/gcc.cc execute(): fatal_error ("cannot execute %qs: %s: %m") when the driver cannot run cc1plus
    text = (
        template("system:gcc-cannot-execute-cc1plus", "x86_64-linux-gnu-gcc")
        + "\ncompilation terminated.\nerror: command '/usr/bin/x86_64-linux-gnu-gcc' failed with exit code 1\n"
    )
    found = lead(text)
    assert found.id == "log.cuda_build" and sure(found) == "certain"
    assert "(cc1plus) is not installed" in found.summary and "sudo apt install g++" in found.fix


def test_the_driver_missing_another_front_end_is_not_the_cpp_one():
    found = lead("gcc: fatal error: cannot execute 'cc1obj': execvp: No such file or directory\n")
    assert "cc1plus" not in found.summary


@pytest.mark.parametrize(
    "message",
    [
        template("nccl:ncclproxycallblockinguds-call-to-tprank-failed", "1", "2a9f8e7d6c5b4a39", "2"),
        template("nccl:service-thread-could-not-receive-type", "2", "3", "0"),
    ],
)
def test_a_local_ranks_proxy_that_cannot_be_reached_is_likely_and_names_the_hosts_ipc(message):
    # proxy.cc: the UNIX socket to a local rank's proxy (2.19+ cuMem handles) or its service thread's connection
    found = lead(NCCL_WARN.format(rank=3, file="proxy.cc:1218", message=message))
    assert found.id == "log.nccl_error" and sure(found) == "likely"
    assert found.details["alternatives"][0] == "log.nccl_system_error" and "--network=host" in found.fix


def test_a_proxy_operation_that_failed_is_only_likely_an_nccl_error():
    message = template("nccl:service-thread-error-encountered-progressing-operation", "Connect", "3")
    found = lead(NCCL_WARN.format(rank=0, file="proxy.cc:1698", message=message))
    assert found.id == "log.nccl_error" and sure(found) == "likely"
    assert "operation=Connect" in found.summary


@pytest.mark.parametrize(
    ("line", "summary"),
    [
        ("ValueError: " + template("torch:the-new-group-world-size-should"), "names ranks or a size"),
        # torch 1.x-2.x new_group's own words (with its doubled "the"), not in the 2.13 catalog
        (
            "RuntimeError: The new group's rank should be within the the world_size set by init_process_group",
            "names ranks or a size",
        ),
        ("ValueError: " + template("torch:rank-is-out-of-range-valid", "8", "7", "8"), "(world_size=8)"),
        ("ValueError: " + template("torch:the-split-group-size-should-be"), "names ranks or a size"),
        ("ValueError: " + template("torch:the-arg-group-size-must-not", "16", "8"), "must not exceed"),
        ("ValueError: The world size (8) must be divisible by 'group_size=3'", "'group_size=3'"),
        (
            "ValueError: " + template("torch:ranks-list-must-not-contain-duplicate", "[0, 1, 1]"),
            "a rank twice",
        ),
        (
            "ValueError: " + template("torch:rank-has-appeared-in-both-subgroup", "1", "[0, 1]", "[1, 2]"),
            "a rank twice",
        ),
    ],
)
def test_a_sub_group_the_run_cannot_hold_is_certain_and_says_to_fit_the_layout(line, summary):
    found = lead(line + "\n")
    assert found.id == "log.process_group_args" and sure(found) == "certain"
    assert summary in found.summary


def test_a_rank_out_of_range_of_something_else_is_not_a_sub_groups():
    assert lead("IndexError: Rank 3 is out of range of the table\n").id != "log.process_group_args"


# socket.cpp warns for each address of a host it fails to connect to, then tries the next one
LOCALHOST_IPV6 = (
    "[W1129 10:02:11.123456 4411 torch/csrc/distributed/c10d/socket.cpp:767] [c10d] The client socket has failed "
    "to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).\n"
)


def test_localhosts_ipv6_address_refused_before_ipv4_connects_is_not_the_failure():
    text = LOCALHOST_IPV6 + (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 41, in <module>\n'
        "    model = build(cfg)\n"
        "KeyError: 'backbone'\n"
    )
    found = lead(text)
    assert found.id != "log.rendezvous_or_port" and "KeyError: 'backbone'" in found.summary
    assert lead(LOCALHOST_IPV6).id == "log.unrecognised"


def test_another_hosts_address_refused_is_still_read():
    line = LOCALHOST_IPV6.replace(
        "[localhost]:29500 (errno: 99 - Cannot assign requested address)",
        "[node3]:29500 (errno: 111 - Connection refused)",
    )
    found = lead(line)
    assert found.id == "log.rendezvous_or_port" and sure(found) == "likely" and "node3:29500" in found.summary


TORCH_INVALID_USAGE = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, invalid "
    "usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.30.7\n"
)


@pytest.mark.parametrize(
    ("ident", "rest", "named"),
    [
        (
            "nccl:no-algorithm-protocol-available-for-function",
            " NCCL_ALGO was set to NVLS.",
            "NCCL_ALGO=NVLS",
        ),
        (
            "nccl:error-no-algorithm-protocol-available-for",
            " NCCL_ALGO was set to Tree. NCCL_PROTO was set to LL128.",
            "NCCL_ALGO=Tree; NCCL_PROTO=LL128",
        ),
    ],
)
def test_nccls_refusal_that_names_the_algo_or_proto_set_is_certain(ident, rest, named):
    # enqueue.cc: the WARN appends " NCCL_ALGO was set to %s." / " NCCL_PROTO was set to %s." for what is set
    message = template(ident, "AllGather", "ncclInt8", "", "") + rest
    found = lead(NCCL_WARN.format(rank=0, file="enqueue.cc:2063", message=message) + TORCH_INVALID_USAGE)
    assert found.id == "log.nccl_env_value" and sure(found) == "certain"
    assert named in found.summary and "AllGather on ncclInt8" in found.summary and "unset NCCL_" in found.fix


def test_the_same_refusal_with_no_setting_named_is_not_a_settings():
    # with neither set, NCCL returns ncclInternalError: not a setting of the job
    message = template("nccl:no-algorithm-protocol-available-for-function", "AllGather", "ncclInt8", "", "")
    text = NCCL_WARN.format(rank=0, file="enqueue.cc:2063", message=message) + TORCH_INVALID_USAGE
    assert lead(text).id != "log.nccl_env_value"


# p2p.cc: WARN("NET/IB: Got CQE with error (devIndex=%d, req=%p, comm=%p (%s), wr_id=%lu, qp_num=%d)", ...)
CQE = "NET/IB: Got CQE with error (devIndex=0, req=0x7f01a8, comm=0x7f02b0 (send), wr_id=17, qp_num=4242)"


def test_an_ib_work_completion_in_error_is_only_likely_the_network():
    assert by_id()["nccl:net-ib-got-cqe-with-error"].text.startswith(CQE[: CQE.index("=")])
    found = lead(NCCL_WARN.format(rank=1, file="p2p.cc:854", message=CQE))
    assert found.id == "log.network_interface" and sure(found) == "likely"
    assert (
        "(send) completed in error" in found.summary and "log.network_fault" in found.details["alternatives"]
    )


def test_the_completion_line_after_it_names_the_status():
    status = (
        "NET/IB: Got completion from peer 10.0.0.2<45021> with status=transport retry counter exceeded(12) "
        "opcode=SEND(0) vendor_err=129 hca mlx5_0"
    )
    text = NCCL_WARN.format(rank=1, file="p2p.cc:854", message=CQE) + NCCL_WARN.format(
        rank=1, file="p2p.cc:688", message=status
    )
    found = lead(text)
    assert found.id == "log.network_interface" and "completion error 12" in found.summary


@pytest.mark.parametrize(
    ("warn", "said"),
    [
        ("no device found matching mlx5_9, verify NCCL_OOB_NET_IFNAME", "`ibv_devinfo`"),
        (
            "Detected mixed local Net device counts across ranks (min 4, max 8). Set NCCL_IGNORE_NET_MISMATCH=1 to "
            "continue.",
            "NCCL_IGNORE_NET_MISMATCH=1",
        ),
        (
            "No algorithm/protocol available for function AllGather with datatype ncclInt8. NCCL_ALGO was set to NVLS.",
            "unset them",
        ),
    ],
)
def test_net_read_log_hints_at_the_setting_nccls_own_warn_names(warn, said):
    from torchdoctor.net.nccl_log import hint_for

    assert said in hint_for(warn)


@pytest.mark.parametrize(
    "message",
    [
        # ProcessGroupGloo.cpp allgather_coalesced: invalidArgument("invalid size of output tensor at index " + i +
        # " (expected length " + toString(expected) + ", got " + toString(actual) + ")")
        "invalid size of output tensor at index 1 (expected length [3], got [4])",
        "invalid output size: (expected length 2, got 3)",
        "Check failed: outputShape[0] * worldSize == inputShape[0] (8 vs. 6)",
    ],
)
def test_glooS_shape_checks_of_a_collective_are_certain(message):
    line = "RuntimeError: [/pytorch/torch/csrc/distributed/c10d/ProcessGroupGloo.cpp:1752] " + message + "\n"
    found = lead(line)
    assert found.id == "log.collective_arguments" and sure(found) == "certain"
    assert "one tensor per rank" in found.summary and "all_gather_object" in found.fix


@pytest.mark.parametrize("ident", ["torch:global-rank-is-not-part-of", "torch:group-rank-is-not-part-of"])
def test_a_rank_outside_a_sub_group_is_certain_and_names_the_groups_own_ranks(ident):
    line = "ValueError: " + template(
        ident, "0", "<torch.distributed.distributed_c10d.ProcessGroup object at 0x7f3a>"
    )
    found = lead(line + "\n")
    assert found.id == "log.collective_arguments" and sure(found) == "certain"
    assert "outside a sub-group" in found.summary and "dist.get_global_rank(group, 0)" in found.fix


def test_someone_not_part_of_a_group_elsewhere_is_not_a_collectives():
    assert lead("KeyError: user 7 is not part of group admins\n").id != "log.collective_arguments"


@pytest.mark.parametrize(
    ("line", "read"),
    [
        (
            "AssertionError: " + template("torch:unknown-c10d-backend-type", "NCLL"),
            "Unknown c10d backend type NCLL",
        ),
        (
            "ValueError: "
            + template("torch:unknown-backend-specify-device-backend-string", "ncll", "['gloo', 'nccl']"),
            "Unknown backend 'ncll'",
        ),
        (
            "ValueError: " + template("torch:invalid-device-backend-pairing-in-expected", "cuda", "cuda"),
            "Invalid device:backend pairing 'cuda'",
        ),
        (
            # BackendConfig's f-string goes on after a backslash, its indentation kept
            "ValueError: Duplicate device type cuda                                      in backend string: nccl. The "
            "custom backend string argument is invalid: cuda:nccl,cuda:gloo.",
            "Duplicate device type cuda in backend string",
        ),
    ],
)
def test_a_backend_torch_does_not_know_is_certain_and_names_the_ones_it_does(line, read):
    found = lead(line + "\n")
    assert found.id == "log.process_group_args" and sure(found) == "certain"
    assert read in found.summary and "'cpu:gloo,cuda:nccl'" in found.fix and "import torch_npu" in found.fix


def test_a_duplicate_device_elsewhere_is_not_a_backend_string():
    assert lead("ValueError: Duplicate device type found in config\n").id != "log.process_group_args"


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: " + template("torch_cpp:backend-does-not-support-reduce-scatter-3", "gloo"),
        "RuntimeError: " + template("torch_cpp:backend-does-not-support-allgather-base", "gloo"),
        "RuntimeError: " + template("torch_cpp:backend-does-not-support-monitoredbarrier-only", "nccl"),
        "ValueError: " + template("torch:monitored-barrier-is-only-implemented-for"),
    ],
)
def test_a_collective_the_groups_backend_lacks_is_certain_and_names_one_that_has_it(line):
    found = lead(line + "\n")
    assert found.id == "log.collective_arguments" and sure(found) == "certain"
    assert "does not implement this collective" in found.summary and "new_group(backend='gloo')" in found.fix


def test_tensor_parallels_alltoall_fallback_warning_is_not_a_failure():
    assert lead(template("torch:cpu-process-group-does-not-support") + "\n").id == "log.unrecognised"


@pytest.mark.parametrize("call", ["makeDeviceForHostname", "makeDeviceForInterface"])
def test_gloo_without_a_transport_names_gloo_device_transport(call):
    # GlooDeviceFactory.cpp: TORCH_CHECK(false, "<call>(): unsupported gloo device") when no transport is registered
    found = lead("RuntimeError: " + template("torch_native:gloo-unsupported-device", call) + "\n")
    assert found.id == "log.backend_unavailable" and sure(found) == "certain"
    assert "GLOO_DEVICE_TRANSPORT" in found.summary and "unset GLOO_DEVICE_TRANSPORT" in found.fix


def test_a_store_ping_answered_with_another_value_names_the_program_on_the_port():
    # TCPStore.cpp ping(): the pid nonce it sends must come back; the client retries with the error in its warning
    line = (
        "[W1129 10:02:11.123456 4411 torch/csrc/distributed/c10d/TCPStore.cpp:384] TCP client failed to "
        "connect/validate to host 10.0.0.1:29500 - retrying: "
        + template("torch_cpp:ping-failed-invalid-value-returned-from", "3058192", "759714643")
    )
    found = lead(line + "\n")
    assert found.id == "log.rendezvous_or_port" and sure(found) == "likely"
    # the number is the bytes "SSH-": an ssh server answered (test_explain_u27_planted.py reads other texts)
    assert (
        "10.0.0.1:29500 is an ssh server, not this run's TCPStore" in found.summary
        and "ss -ltnp" in found.fix
    )
