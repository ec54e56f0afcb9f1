"""The train files of session 37's samples (the hundred-and-seventh to hundred-and-eleventh) that explain missed,
each read from the source that prints its message: nvcc's unknown architecture however it is quoted, DTensor's
methods on a plain tensor, a missing submodule's fix, safetensors' shared tensors wrapped over two lines,
SyncBatchNorm's input check before torch 1.4, ProcessGroupNCCL's exit warning alone, urllib's port of an IPv6
address without brackets, and Ray Train among the frameworks that make the process group. Beside each, a line that
must stay another reading."""

from __future__ import annotations

from explaining import explained, filled, lead, template


def test_nvcc_unknown_architecture_as_printed_and_quoted_in_prose():
    # 5169.txt (deepspeedai/DeepSpeed#607): the message in lower case inside the user's sentence
    found = lead("5169.txt")
    assert found.id == "log.cuda_build"
    assert "compute_86" in found.summary and "CUDA" in found.fix
    # as nvcc prints it ("%s fatal   : %s"), for an architecture the table knows the first toolkit of
    found = explained("nvcc fatal   : Unsupported gpu architecture 'compute_90'\n")
    assert found.id == "log.cuda_build" and "CUDA 11.8 is the first toolkit that knows it" in found.summary
    # the oldest toolkit of the table is not named as the first one
    assert "toolkits before" in lead("5169.txt").summary


def test_dtensor_method_on_a_plain_tensor_is_a_release_that_made_it_plain():
    # 5219.txt (NVIDIA/TransformerEngine#2795): FusedAdam's state made plain, Megatron-FSDP's save calls to_local()
    found = lead("5219.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "to_local()" in found.summary and "upgrade" in found.fix
    found = explained(
        f"{template('system:tensor-lacks-dtensor-method').replace('to_local', 'full_tensor')}\n"
    )
    assert found.id == "log.library_version_bug" and "full_tensor()" in found.summary
    # another attribute a tensor lacks is not this reading
    other = explained("AttributeError: 'Tensor' object has no attribute 'shapes'\n")
    assert "DTensor" not in other.summary + other.fix


def test_a_missing_submodule_says_upgrade_the_importing_package():
    # 5222.txt (modelscope/ms-swift#10017): the importer's release imported a module megatron-core lacks
    found = lead("5222.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "megatron.training" in found.summary and "upgrade the importing package" in found.fix


def test_safetensors_shared_tensors_wrapped_before_their_names():
    # 5269.txt (NVIDIA-NeMo/Megatron-Bridge#922): "... when loading them" / "again: [{...}]" on two lines
    found = lead("5269.txt")
    assert found.id == "log.safetensors_save_refused"
    assert "share memory" in found.summary and "lm_head.weight" in found.summary and "clone" in found.fix
    # the message on one line, as safetensors prints it
    line = filled("third_party:safetensors-tensors-share-memory", "[{'a.weight', 'b.weight'}]").split("\\n")[
        0
    ]
    found = explained(f"RuntimeError: {line}\n")
    assert "share memory" in found.summary and "a.weight" in found.summary


def test_syncbatchnorm_before_torch_1_4_refusing_two_dimensional_input():
    # 5319.txt (facebookresearch/swav#8): torch 1.3.1's SyncBatchNorm on BatchNorm1d's (N, C) input
    found = lead("5319.txt")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "1.4" in found.fix and "convert_sync_batchnorm" in found.fix
    # the traceback's own line, as torch 1.3's batchnorm.py raises it
    found = explained(f"ValueError: {template('aten:syncbn-expected-at-least-3d-input', '2')}\n")
    assert found.id == "log.dependency_version" and "1.4" in found.fix
    # BatchNorm's other dimension checks stay a tensor of the wrong shape
    for ident, got in (
        ("torch:expected-input-got-input", "3"),
        ("torch:expected-at-least-input-got-input", "1"),
    ):
        found = explained(f"ValueError: {template(ident, got)}\n")
        assert found.id == "log.input_shape_mismatch", (ident, found.id)


def test_the_exit_warning_alone_is_no_cause():
    # 5322.txt (pytorch/vision#8707): the warning every crashed rank prints, the error cut from the log
    found = lead("5322.txt")
    assert found.id == "log.shutdown_hang" and found.details["confidence"] == "likely"
    assert "alone it does not say why a run failed" in found.summary
    assert "error above it" in found.fix


def test_an_ipv6_address_without_brackets_in_a_tcp_url():
    # 5369.txt (NovaSky-AI/SkyRL#612): torch's tcp:// rendezvous, urllib reading part of the address as the port
    found = lead("5369.txt")
    assert found.id == "log.process_group_args" and found.details["confidence"] == "certain"
    assert "IPv6" in found.summary and "tcp://[" in found.fix and "brackets" in found.fix
    # the line alone (no torch frame): the address is still unbracketed, but whose URL it was is not said
    found = explained("ValueError: Port could not be cast to integer value as 'db8::1:29500'\n")
    assert found.id == "log.process_group_args" and found.details["confidence"] == "likely"
    # a port that is a word, not part of an address, is not this reading
    other = explained("ValueError: Port could not be cast to integer value as 'abc'\n")
    assert other.id != "log.process_group_args"


def test_ray_train_is_named_among_frameworks_that_make_the_process_group():
    # 5374.txt (SIAnalytics/siatune#91): TorchTrainer already made the group when the script called it again
    found = lead("5374.txt")
    assert found.id == "log.process_group_args" and found.details["confidence"] == "certain"
    assert "TorchTrainer" in found.fix and "init_process_group" in found.fix
