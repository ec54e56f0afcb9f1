"""Launcher and communication messages mapped from the code that prints them (issue 19, round thirteen): NCCL's
own refusals of a setting's value (NCCL_COMM_ID, the XML topology and graph files, NCCL_NET_FORCE_MERGE), its
failed buffer allocation, torchrun's log and rendezvous-timeout options, accelerate's TPU/SageMaker launchers,
its config file and its backend override.

Each input is a catalog template (its id beside it) filled with realistic values and printed the way its source
prints it (NCCL's WARN prefix, an exception's type); each has a near-miss with the same words (a peer's report,
an INFO line, a warning a healthy run prints, the source line a traceback quotes) that must not read as the kind.
"""

from __future__ import annotations

import pytest
from explaining import explained as lead
from explaining import filled as template

pytestmark = pytest.mark.usefixtures("every_message_seen")

NCCL_WARN = "node7:2210:2298 [{rank}] {file} NCCL WARN {message}\n"
TORCH_NCCL_ERROR = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "{reason} (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5\n"
)


def sure(found) -> str:
    return found.details.get("confidence", "certain")


def warn(message: str, rank: int = 0, file: str = "bootstrap.cc:113") -> str:
    return NCCL_WARN.format(rank=rank, file=file, message=message)


# -- NCCL_COMM_ID: src/bootstrap.cc, misc/socket.cc (ncclSocketGetAddrFromString) --------------------------


@pytest.mark.parametrize(
    ("lines", "read"),
    [
        ([template("nccl:invalid-nccl-comm-id-please-use")], "it is not <ipv4>:<port>"),
        (
            [
                template("nccl:net-no-valid-ipv4-or-hostname"),
                template("nccl:invalid-nccl-comm-id-please-use"),
            ],
            "it is not <ipv4>:<port>",
        ),
        # bootstrap.cc prints its refusal after socket.cc's WARN, which says why
        (
            [template("nccl:net-no-valid-ipv6-port-pair"), template("nccl:invalid-nccl-comm-id-please-use")],
            "it is not <ipv4>:<port>",
        ),
        (
            [
                template("nccl:net-error-encountered-when-getting-address", "Name or service not known"),
                template("nccl:invalid-nccl-comm-id-please-use"),
            ],
            "its host does not resolve (Name or service not known)",
        ),
    ],
)
def test_an_nccl_comm_id_nccl_cannot_read_is_the_setting_certain(lines, read):
    text = "".join(warn(line) for line in lines) + TORCH_NCCL_ERROR.format(reason="invalid argument")
    found = lead(text)
    assert found.id == "log.nccl_env_value" and sure(found) == "certain", found.summary
    assert "NCCL_COMM_ID" in found.summary and read in found.summary
    assert "unset NCCL_COMM_ID" in found.fix


def test_socket_cc_address_warn_is_nccl_comm_id_only_where_the_log_names_it():
    # misc/socket.cc ncclSocketGetAddrFromString WARNs for any address string: NCCL 2.24+'s RAS client socket
    # (ras/client_support.cc, NCCL_RAS_ADDR or localhost:28028) ignores its failure and the run goes on
    gai = warn(
        template("nccl:net-error-encountered-when-getting-address", "Name or service not known"),
        file="misc/socket.cc:257",
    )
    found = lead(gai + TORCH_NCCL_ERROR.format(reason="invalid argument"))
    assert found.id == "log.nccl_env_value" and sure(found) == "likely", found.summary
    assert "log.hostname_resolution" in found.details["alternatives"]
    # NCCL_COMM_ID named in the log (its INFO line at NCCL_DEBUG=INFO): the setting, certain
    info = (
        "node7:2210:2298 [0] NCCL INFO "
        + template("nccl:nccl-comm-id-set-by-environment", "node-a:29600")
        + "\n"
    )
    found = lead(info + gai + TORCH_NCCL_ERROR.format(reason="invalid argument"))
    assert found.id == "log.nccl_env_value" and sure(found) == "certain", found.summary
    assert "its host does not resolve (Name or service not known)" in found.summary


def test_the_ras_sockets_address_warn_does_not_lead_the_error_that_stopped_the_run():
    # a healthy NCCL 2.26 start-up whose RAS socket could not resolve localhost, then an out-of-memory error
    text = (
        "node7:2210:2298 [0] NCCL INFO NCCL version 2.26.2+cuda12.4\n"
        + warn(
            template("nccl:net-error-encountered-when-getting-address", "Name or service not known"),
            file="misc/socket.cc:257",
        )
        + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 1.02 GiB is free.\n"
    )
    found = lead(text)
    assert found.id == "log.cuda_oom", (found.id, found.summary)
    # and alone it is no failure at all
    assert lead(warn(template("nccl:net-no-valid-ipv4-or-hostname"), file="misc/socket.cc:246")).id != (
        "log.nccl_env_value"
    )


def test_the_nccl_comm_id_warn_alone_is_the_failure_too():
    # the paste stops at NCCL's WARN: the refusal returns ncclInvalidArgument, the communicator is never made
    found = lead(warn(template("nccl:invalid-nccl-comm-id-please-use")))
    assert found.id == "log.nccl_env_value" and sure(found) == "certain"


def test_nccl_comm_id_printed_at_info_is_not_a_refusal():
    # bootstrap.cc's INFO on every run that sets it: a setting in use, no failure
    line = "node7:2210:2210 [0] NCCL INFO " + template(
        "nccl:nccl-comm-id-set-by-environment", "10.0.0.1:29600"
    )
    assert lead(line + "\n").id == "log.unrecognised"


# -- the XML topology and graph files: src/graph/xml.cc ------------------------------------------------------


def test_a_topology_file_of_another_nccl_release_names_both_versions():
    text = (
        "node7:2210:2210 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/microsoft/ndv5-topo.xml\n"
        + warn(template("nccl:xml-topology-has-wrong-version-needed", "2", "1"), file="graph/xml.cc:394")
        + TORCH_NCCL_ERROR.format(reason="invalid usage")
    )
    found = lead(text)
    assert found.id == "log.nccl_env_value" and sure(found) == "certain"
    assert "written for another NCCL (its version 2, this NCCL needs 1)" in found.summary
    assert "NCCL_TOPO_FILE" in found.fix and "virtualTopology.xml" in found.fix


def test_a_graph_file_that_does_not_open_names_the_file():
    line = warn(
        template("nccl:could-not-open-xml-graph-file", "/shared/graph.xml", "No such file or directory"),
        file="graph/xml.cc:1257",
    )
    found = lead(line)
    assert found.id == "log.nccl_env_value" and sure(found) == "certain"
    assert (
        "NCCL_GRAPH_FILE" in found.summary and "/shared/graph.xml: No such file or directory" in found.summary
    )


@pytest.mark.parametrize(
    "message",
    [
        template("nccl:xml-parse-unexpected-eof"),
        template("nccl:xml-parse-unterminated", "gpu"),
        "XML Parse error : expecting '<', got 'x'",
    ],
)
def test_a_topology_file_nccl_cannot_parse_is_the_setting(message):
    found = lead(warn(message, file="graph/xml.cc:40") + TORCH_NCCL_ERROR.format(reason="internal error"))
    assert found.id == "log.nccl_env_value" and sure(found) == "certain"
    assert "could not parse the XML topology or graph file" in found.summary


def test_a_topology_file_nccl_could_not_open_is_only_info_and_not_a_refusal():
    # xml.cc: NCCL_TOPO_FILE naming a missing file is an INFO line and NCCL detects the machine instead
    line = "node7:2210:2210 [0] NCCL INFO Could not open XML topology file /opt/topo.xml : No such file or directory"
    assert lead(line + "\n").id == "log.unrecognised"


def test_ncclS_info_on_extra_xml_attributes_is_not_a_parse_failure():
    # xml.cc: INFO for a node with more attributes than NCCL keeps; the parse goes on
    text = (
        "node7:2210:2210 [0] NCCL INFO XML Parse : Ignoring extra attributes (max 16)\n"
        "node7:2210:2210 [0] NCCL INFO Loading topology file /var/run/nvidia-topologyd/virtualTopology.xml\n"
    )
    assert lead(text).id == "log.unrecognised"


def test_xml_parse_words_of_another_library_are_not_ncclS():
    assert lead("lxml.etree.XMLSyntaxError: XML Parse error at line 3\n").id != "log.nccl_env_value"


# -- NCCL_NET_FORCE_MERGE: src/graph/topo.cc (2.25+) ---------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        template("nccl:topo-net-could-not-force-merge", "mlx5_0,mlx5_7"),
        template("nccl:topo-net-only-matched-devices-requested", "1", "2", "mlx5_0,mlx5_9"),
    ],
)
def test_nics_nccl_cannot_force_merge_is_the_setting(message):
    found = lead(warn(message, file="graph/topo.cc:1360") + TORCH_NCCL_ERROR.format(reason="invalid usage"))
    assert found.id == "log.nccl_env_value" and sure(found) == "certain"
    assert "NCCL_NET_FORCE_MERGE" in found.summary and "mlx5_0" in found.summary


# -- NCCL's own buffers: src/include/alloc.h ------------------------------------------------------------------


def test_ncclS_failed_buffer_allocation_alone_is_likely_out_of_memory():
    text = warn("Failed to CUDA malloc 6291456 bytes", rank=1, file="include/alloc.h:462")
    found = lead(text + TORCH_NCCL_ERROR.format(reason="unhandled cuda error"))
    assert found.id == "log.cuda_oom" and sure(found) == "likely"
    assert "NCCL could not allocate 6.0 MiB on the GPU for its buffers" in found.summary
    assert "NCCL_BUFFSIZE" in found.fix


def test_ncclS_failed_buffer_allocation_beside_out_of_memory_is_certain():
    text = warn("Cuda failure 'out of memory'", file="include/alloc.h:460") + warn(
        "Failed to CUDA malloc 6291456 bytes", file="include/alloc.h:462"
    )
    found = lead(text)
    assert found.id == "log.cuda_oom" and sure(found) == "certain"


def test_ncclS_allocation_info_line_is_not_a_failure():
    line = (
        "node7:2210:2298 [0] NCCL INFO include/alloc.h:464 Cuda Alloc Size 6291456 pointer 0x7f3a00000000\n"
    )
    assert lead(line).id == "log.unrecognised"


# -- torchrun's options: elastic/multiprocessing/api.py, run.py, launcher/api.py, the rendezvous handlers ------


@pytest.mark.parametrize(
    ("line", "what"),
    [
        (
            "NotADirectoryError: " + template("torch:log-dir-is-file", "/home/ana/logs/run1.log"),
            "torchrun cannot use the log options it was given",
        ),
        (
            "ValueError: " + template("torch:could-not-find-entrypoint-under-torchrun", "cloud"),
            "torchrun cannot use the log options it was given",
        ),
        (
            "AssertionError: " + template("torch:ranks-set-cannot-be-empty"),
            "torchrun cannot use the log options",
        ),
        (
            "ValueError: " + template("torch:the-timeout-must-be-positive", "join", "0:00:00"),
            "sets a rendezvous timeout that is not positive",
        ),
        (
            "ValueError: " + template("torch:the-read-timeout-must-be-positive"),
            "sets a rendezvous timeout that is not positive",
        ),
        (
            "ValueError: " + template("torch:shutdown-timeout-must-be-non-negative", "-1"),
            "shutdown timeout is negative",
        ),
    ],
)
def test_torchruns_refusals_of_its_options_are_the_launch_command(line, what):
    found = lead(line + "\n")
    assert found.id == "log.launch_command" and sure(found) == "certain", found.summary
    assert what in found.summary


def test_the_log_dir_raise_a_traceback_quotes_is_not_read_as_the_value():
    text = (
        '  File "/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/api.py", line 267\n'
        '    raise NotADirectoryError(f"log_dir: {log_dir} is a file")\n'
        "NotADirectoryError: log_dir: /scratch/out.txt is a file\n"
    )
    found = lead(text)
    assert found.id == "log.launch_command" and "/scratch/out.txt" in found.summary


def test_torchruns_info_lines_of_its_options_are_not_refusals():
    text = (
        "INFO:torch.distributed.elastic.multiprocessing:log directory set to: /tmp/torchelastic_x1/none_y2\n"
        "I1129 10:02:11.123000 4411 torch/distributed/run.py:660] Using nproc_per_node=8.\n"
        "W1129 10:02:11 torch/distributed/elastic/utils/distributed.py] port: 29500 already in use, attempt: [1/3]\n"
    )
    assert lead(text).id == "log.unrecognised"


# -- accelerate: commands/launch.py (TPU, SageMaker), commands/config/config_args.py, state.py ----------------


@pytest.mark.parametrize(
    ("line", "what"),
    [
        (
            "ValueError: " + template("accelerate:your-training-script-should-have-function", "main"),
            "refuses its options for the TPU or SageMaker launcher",
        ),
        (
            "ValueError: " + template("accelerate:no-python-cannot-be-used-with"),
            "refuses its options for the TPU or SageMaker launcher",
        ),
        (
            "ValueError: " + template("accelerate:sagemaker-requires-python-training-script-file"),
            "refuses its options for the TPU or SageMaker launcher",
        ),
        (
            "ValueError: " + template("accelerate:distributed-type-must-be-specified-in"),
            "cannot read its config file",
        ),
    ],
)
def test_accelerates_refusals_of_its_launch_are_the_launch_command(line, what):
    found = lead(line + "\n")
    assert found.id == "log.launch_command" and sure(found) == "certain", found.summary
    assert what in found.summary


def test_accelerates_port_in_use_warning_is_not_a_refusal():
    # commands/launch.py warns and looks for a free port itself: a healthy start prints it
    line = (
        "WARNING: Port `29500` is already in use. Accelerate will attempt to launch in a standalone-like mode by "
        "finding an open port automatically for this session.\n"
    )
    assert lead(line).id == "log.unrecognised"


def test_accelerates_backend_override_names_both_backends():
    line = "ValueError: " + template("accelerate:your-assigned-backend-is-not-available", "nccl", "xla")
    found = lead(line + "\n")
    assert found.id == "log.backend_unavailable" and sure(found) == "certain"
    assert "asked for the nccl backend, but on this machine it must use xla" in found.summary
    assert "backend='xla'" in found.fix and "torch_xla" in found.fix


def test_accelerates_backend_raise_as_a_traceback_quotes_it_is_not_a_finding():
    line = '    raise ValueError(f"Your assigned backend {original_backend} is not available, please use {backend}")\n'
    assert lead(line).id == "log.unrecognised"


# -- NCCL's network plugin: src/net.cc (2.10-2.25), plugin/net.cc (2.27+) --------------------------------------


def test_nccl_net_naming_a_network_nccl_has_not_is_the_setting():
    found = lead(warn(template("nccl:error-network-not-found", "IB"), file="net.cc:579"))
    assert found.id == "log.nccl_env_value" and sure(found) == "certain"
    assert "NCCL_NET=IB names a network" in found.summary and "Unset NCCL_NET" in found.fix


def test_no_net_plugin_at_all_is_likely_the_setting_or_no_interface():
    text = warn(template("nccl:failed-to-initialize-any-net-plugin"), file="plugin/net.cc:349")
    found = lead(text + TORCH_NCCL_ERROR.format(reason="invalid usage"))
    assert found.id == "log.nccl_env_value" and sure(found) == "likely"
    assert "log.network_interface" in found.details["alternatives"]


def test_a_network_that_is_unreachable_is_not_ncclS_network_not_found():
    text = "ping: Error: network is unreachable\n" + TORCH_NCCL_ERROR.format(reason="unhandled system error")
    assert lead(text).id != "log.nccl_env_value"


# -- NVLS: src/transport/nvls.cc (2.17+) ---------------------------------------------------------------------


def test_nvls_multicast_binding_that_failed_is_likely_the_fabric_manager():
    text = (
        "node1:2011:2455 [3] transport/nvls.cc:376 NCCL WARN "
        + "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 1610612736 : CUDA error 1 'invalid argument'.\n"
        + "This is usually caused by a system or configuration error in the Fabric Manager or NVSwitches.\n"
        + TORCH_NCCL_ERROR.format(reason="unhandled cuda error")
    )
    found = lead(text)
    assert found.id == "log.fabric_manager" and sure(found) == "likely"
    assert "NVLink SHARP (NVLS) multicast memory (CUDA error 'invalid argument')" in found.summary
    assert "NCCL_NVLS_ENABLE=0" in found.fix and "log.driver_too_old" in found.details["alternatives"]


def test_ncclS_nvls_info_lines_are_not_a_failure():
    line = "node1:2011:2011 [3] NCCL INFO NVLS multicast support is available on dev 3 (NVLS_NCHANNELS 16)\n"
    assert lead(line).id == "log.unrecognised"


# -- reductions NCCL lacks: ProcessGroupNCCL.cpp getNcclReduceOp -----------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: " + template("torch_native:cannot-use-reduceop-band-with-nccl"),
        "ValueError: " + template("torch_native:cannot-use-reduceop-bxor-with-nccl"),
        "RuntimeError: AVG requires NCCL 2.10+. The current version is 2.7",
    ],
)
def test_a_reduction_nccl_lacks_is_the_collectives_arguments(line):
    found = lead(line + "\n")
    assert found.id == "log.collective_arguments" and sure(found) == "certain"
    assert "the reduction op does not apply" in found.summary and "ReduceOp.MAX for 'any'" in found.fix


def test_other_words_with_nccl_are_not_a_reduction_refusal():
    line = "UserWarning: training with NCCL_P2P_DISABLE=1 is slow, not recommended with NCCL\n"
    assert lead(line).id == "log.unrecognised"


# -- process groups: distributed_c10d.py new_group, destroy_process_group, get_backend, get_group_rank --------


@pytest.mark.parametrize(
    ("line", "what"),
    [
        (
            "ValueError: " + template("torch:invalid-process-group-specified-or-has"),
            "a process group handle that is not a live group of this rank",
        ),
        (
            "ValueError: " + template("torch:invalid-process-group-specified"),
            "a process group handle that is not a live group of this rank",
        ),
        (
            "ValueError: "
            + template(
                "torch:group-is-not-registered-please-create",
                "<torch.distributed.distributed_c10d.ProcessGroup object at 0x7f3a1c2b4e30>",
            ),
            "a process group handle that is not a live group of this rank",
        ),
        (
            "RuntimeError: " + template("torch:the-specified-group-name-has-already"),
            "created with a group_name another group already has",
        ),
    ],
)
def test_a_process_group_used_after_its_end_or_named_twice_is_the_process_group_args(line, what):
    found = lead(line + "\n")
    assert found.id == "log.process_group_args" and sure(found) == "certain", found.summary
    assert what in found.summary


def test_the_raise_a_traceback_quotes_is_not_an_invalid_group():
    assert lead('        raise ValueError("Invalid process group specified")\n').id == "log.unrecognised"


# -- accelerate's SageMaker launcher (utils/launch.py); Lightning's strategy registry (fabric/strategies) -----


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: " + template("accelerate:sagemaker-doesn-support-argparse-actions-for"),
        "ValueError: " + template("accelerate:you-need-to-provide-an-aws"),
    ],
)
def test_accelerates_sagemaker_launch_refusals_are_the_launch_command(line):
    found = lead(line + "\n")
    assert found.id == "log.launch_command" and sure(found) == "certain"
    assert "SageMaker" in found.fix and "aws_profile" in found.fix


def test_a_strategy_name_lightnings_registry_lacks_is_the_trainers_arguments():
    line = "ValueError: " + template(
        "lightning:not-found-in-registry-available-names", "ddp_sharded", "ddp, ddp_spawn, fsdp, deepspeed"
    )
    found = lead(line + "\n")
    assert found.id == "log.trainer_arguments"
    assert "ddp_sharded" in found.summary and "Trainer(strategy=...)" in found.fix


def test_another_registrys_missing_name_is_not_lightnings():
    line = "KeyError: 'resnet51 is not in the models registry'\n"
    assert lead(line).id != "log.trainer_arguments"


# -- MPICH's Hydra (schedulers.tsv): mpiexec's lookup of its hosts -------------------------------------------


def test_hydra_that_cannot_resolve_a_host_names_it():
    line = template("schedulers:hydra-host-address", "mpiexec@node01", "utils/sock/sock.c:145", "node02 (1)")
    found = lead(line + "\n")
    assert found.id == "log.hostname_resolution" and sure(found) == "certain", found.summary
    assert "'node02'" in found.summary and "getent hosts node02" in found.fix


def test_another_programs_host_address_words_are_not_hydras():
    line = "WARNING: unable to get host address for proxy.example.com, using a direct connection\n"
    assert lead(line).id == "log.unrecognised"


# -- ProcessGroupNCCL's missing collectives (torch_native); rendezvous.py's handlers --------------------------


@pytest.mark.parametrize("op", ["gather", "scatter", "allgather_coalesced"])
def test_a_collective_processgroupnccl_lacks_is_the_collectives_arguments(op):
    found = lead(
        "RuntimeError: "
        + template("torch_native:processgroupnccl-does-not-support-" + op.replace("_", "-"))
        + "\n"
    )
    assert found.id == "log.collective_arguments" and sure(found) == "certain"
    assert "does not implement this collective" in found.summary and "torch 1.11" in found.fix


def test_an_init_method_without_a_scheme_is_the_process_groups_arguments():
    found = lead("RuntimeError: " + template("torch:no-rendezvous-handler-for", "localhost") + "\n")
    assert found.id == "log.process_group_args" and sure(found) == "certain"
    assert "tcp://localhost:29500" in found.fix


def test_a_build_without_the_tcp_rendezvous_stays_the_backend():
    found = lead("RuntimeError: " + template("torch:no-rendezvous-handler-for", "tcp") + "\n")
    assert found.id == "log.backend_unavailable"


# -- torch's detail of ncclRemoteError (NCCLUtils.cpp getNcclErrorDetailStr): a victim's line ------------------


def test_ncclremoteerror_detail_alone_is_a_peer_that_went_away():
    found = lead(template("torch_native:ncclremoteerror-detail") + "\n")
    assert found.id == "log.peer_closed" and sure(found) == "likely"
    assert "the cause is not in this log" in found.summary


def test_ncclremoteerror_detail_never_leads_over_the_cause_beside_it():
    text = (
        template("torch_native:ncclremoteerror-detail")
        + "\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 79.15 GiB total capacity)\n"
    )
    assert lead(text).id == "log.cuda_oom"
