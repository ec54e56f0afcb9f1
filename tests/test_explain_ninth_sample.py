"""The knowledge the ninth sample by symptom (corpus files 370-384, train half) asked for, each anchored on the
message its source prints: the dynamic loader's undefined symbol of CUDA's libnvJitLink in the cuSPARSE a torch
wheel installed (another toolkit's copy found first through LD_LIBRARY_PATH), torch/backends/cudnn's version check,
accelerate's fp8 mixed precision without Transformer Engine, a TypeError inside torch called through DeepSpeed's
elastic agent, accelerate launch's own code failing on an option nothing set (--machine_rank), CPython's
AttributeError for set_epoch on the DataLoader's default sampler, and Lightning refusing to rebuild a custom
batch sampler. Beside each, a line that must stay silent, or be another kind."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")

WHEEL = "/usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/{}/lib/{}"


def test_libnvjitlink_too_old_for_the_wheels_cusparse_is_another_toolkit_first_only_likely():
    # 372.txt (pytorch/pytorch#141063): another CUDA toolkit on LD_LIBRARY_PATH supplies an older libnvJitLink
    found = lead("372.txt")
    assert found.id == "log.cuda_library_path" and found.details["confidence"] == "likely"
    assert "libnvJitLink 12.4 or newer" in found.summary and "libcusparse.so.12" in found.summary
    assert "LD_LIBRARY_PATH" in found.fix and "nvidia/nvjitlink/lib" in found.fix
    assert found.details["alternatives"] == ["log.broken_install"]
    # the same from the catalog's template, for cuBLAS asking for a libcublasLt symbol
    line = template(
        "system:ld-undefined-versioned-symbol",
        WHEEL.format("cublas", "libcublas.so.12"),
        "cublasLtGetStatusString",
        "libcublasLt.so.12",
    )
    found = explained(line + "\n")
    assert found.id == "log.cuda_library_path" and "nvidia/cublas/lib" in found.fix
    assert "grep -i libcublasLt" in found.fix


def test_an_extension_missing_a_symbol_of_torch_or_its_own_is_not_another_toolkit():
    line = template(
        "system:ld-undefined-symbol",
        "/opt/conda/lib/python3.10/site-packages/torch_scatter/_version_cuda.so",
        "_ZN3c1010TensorImpl4sizeEv",
    )
    assert explained(line + "\n").id == "log.extension_import"
    own = template("system:ld-undefined-symbol", "/home/u/ext/my_op.so", "_Z9my_kernelv")
    assert explained(own + "\n").id == "log.extension_import"


def test_a_cudnn_of_another_version_than_torchs_is_certain_with_both_versions_dotted():
    # 377.txt (FurkanGozukara/Stable-Diffusion#9): kohya_ss could not load torch 2.0.1 with cuDNN 8.5 found first
    found = lead("377.txt")
    assert found.id == "log.cudnn_version_mismatch" and found.details["confidence"] == "certain"
    assert "(8.5.0)" in found.summary and "(8.7.0)" in found.summary
    assert "LD_LIBRARY_PATH" in found.fix and "cuDNN" in found.fix
    # torch 1.x's wording ("linked against") and torch 0.x's ("version mismatch"), with cuDNN's number form
    older = "RuntimeError: " + template(
        "torch_native:cudnn-version-incompatibility-linked-against", "7401", "7301"
    )
    found = explained(older + "\n")
    assert (
        found.id == "log.cudnn_version_mismatch" and "(7.3.1)" in found.summary and "(7.4.1)" in found.summary
    )
    oldest = "RuntimeError: " + template("torch_native:cudnn-version-mismatch-linked-against", "6021", "5110")
    assert explained(oldest + "\n").id == "log.cudnn_version_mismatch"


def test_cudnn_too_new_for_the_gpu_or_missing_is_not_a_version_mismatch():
    # torch/backends/cudnn/__init__.py's other checks: cuDNN 9.11+ on a GPU below sm_75, and no cuDNN at all
    for ident, values in (
        ("torch:cudnn-version-is-not-compatible-with", ("91100",)),
        ("torch:pytorch-was-compiled-without-cudnn-miopen", ()),
    ):
        text = "RuntimeError: " + template(ident, *values)
        assert explained(text + "\n").id != "log.cudnn_version_mismatch", text


def test_fp8_without_transformer_engine_is_a_package_missing_from_the_environment():
    # 375.txt (huggingface/accelerate#1276): mixed_precision fp8 chosen, transformer_engine never installed
    found = lead("375.txt")
    assert found.id == "log.broken_install" and found.details["confidence"] == "certain"
    assert "transformer_engine" in found.summary
    assert "pip install" in found.fix and "transformer_engine" in found.fix and "bf16" in found.fix
    for ident in (
        "accelerate:using-fp8-precision-requires-transformer-engine",
        "accelerate:transformer-engine-was-not-found-on",
    ):
        found = explained("ValueError: " + template(ident) + "\n")
        assert found.id == "log.broken_install" and "fp8" in found.summary, ident
    assert "MS-AMP" in explained(template("accelerate:ms-amp-was-not-found-on") + "\n").summary


def test_an_fp8_setting_accelerate_does_not_support_is_not_a_missing_package():
    text = "ValueError: " + template("accelerate:amax-history-len-is-not-supported")
    assert explained(text + "\n").id != "log.broken_install"


def test_a_type_error_in_torch_called_through_deepspeeds_elastic_agent_names_deepspeed_and_its_fix():
    # 380.txt (deepspeedai/DeepSpeed#4459): DSElasticAgent's _set_master_addr_port has the pre-2.0 signature
    found = lead("380.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "called through deepspeed" in found.summary
    assert "pip install -U deepspeed" in found.fix and "deepspeed>=0.13.2" in found.fix


def test_a_type_error_in_torch_alone_names_no_other_package():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 9, in <module>\n'
        "    main()\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/agent/server/api.py", '
        "line 556, in _rendezvous\n"
        "    self._set_master_addr_port(\n"
        "TypeError: _set_master_addr_port() takes 3 positional arguments but 4 were given\n"
    )
    found = explained(text)
    assert found.id == "log.library_version_bug"
    assert "passes through" not in found.fix and "0.13.2" not in found.fix


ACCELERATE = '  File "/env/lib/python3.9/site-packages/accelerate/utils/launch.py", line 114, in prepare_multi_gpu_env\n'


def test_accelerate_launch_on_several_machines_without_machine_rank_is_the_launch_command():
    # 381.txt (huggingface/accelerate#2096): --machine_rank $SLURM_PROCID fixed it
    found = lead("381.txt")
    assert found.id == "log.launch_command" and found.details["confidence"] == "likely"
    assert "--machine_rank" in found.summary and "SLURM_NODEID" in found.fix
    # Python 3.10's wording of the same TypeError, and another option accelerate read unset
    newer = template("system:python-int-argument-nonetype", "real ", "NoneType")
    text = ACCELERATE + '    setattr(args, "node_rank", int(args.machine_rank))\n' + newer + "\n"
    assert explained(text).id == "log.launch_command"
    # (a line of the same shape for another option: what the reading names is the option int() was given)
    other = (
        ACCELERATE + "    args.nproc_per_node = str(int(args.num_processes) // num_machines)\n" + newer + "\n"
    )
    found = explained(other)
    assert found.id == "log.launch_command" and "--num_processes" in found.summary


def test_the_same_type_error_in_the_users_own_code_is_not_accelerates_launch():
    text = (
        '  File "/home/u/launch.py", line 14, in main\n'
        "    rank = int(args.machine_rank)\n"
        + template("system:python-int-argument-nonetype", "real ", "NoneType")
        + "\n"
    )
    assert explained(text).id != "log.launch_command"


def test_set_epoch_on_the_default_sequential_sampler_is_an_epoch_hook_of_an_old_release_only_likely():
    # 382.txt (open-mmlab/mmcv#472): a DistributedSampler inside a custom BatchSampler; mmcv's DistSamplerSeedHook
    # read loader.sampler until mmcv 1.1.0 (#484), as Lightning's DDP loop did until 0.7.6 (#1734)
    found = lead("382.txt")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "batch_sampler.sampler.set_epoch" in found.fix and "mmcv >= 1.1.0" in found.fix
    assert "Lightning >= 0.7.6" in found.fix
    assert found.details["alternatives"] == ["log.not_launched_distributed"]


def test_set_epoch_on_a_random_sampler_or_another_missing_attribute_is_not_that_reading():
    # a RandomSampler is never a batch_sampler's default (a batch_sampler refuses shuffle)
    for line in (
        "AttributeError: 'RandomSampler' object has no attribute 'set_epoch'",
        "AttributeError: 'SequentialSampler' object has no attribute 'epoch'",
    ):
        found = explained(line + "\n")
        assert not (found.id == "log.library_version_bug" and "set_epoch was called" in found.summary), line


def test_lightning_refusing_to_rebuild_a_custom_batch_sampler_is_certain_and_names_the_switch():
    text = "TypeError: " + template("lightning:lightning-can-inject-distributed-sampler-into-2")
    found = explained(text + "\n")
    assert found.id == "log.custom_batch_sampler" and found.details["confidence"] == "certain"
    assert "use_distributed_sampler=False" in found.fix and "replace_sampler_ddp=False" in found.fix
    # Lightning 1.7-2.0's MisconfigurationException, and a captured sampler without a `sampler` argument
    older = "lightning.fabric.utilities.exceptions.MisconfigurationException: " + template(
        "third_party:lightning-re-instantiate-custom-batch-sampler"
    )
    assert explained(older + "\n").id == "log.custom_batch_sampler"
    named = template("lightning:trying-to-inject-modified-sampler-into", "BucketSampler")
    found = explained("TypeError: " + named + "\n")
    assert found.id == "log.custom_batch_sampler" and "`BucketSampler`" in found.summary


def test_a_bare_missing_argument_or_a_custom_dataloader_is_not_the_batch_sampler():
    # 384.txt (Lightning-AI/pytorch-lightning#19183) is the sampler's own TypeError alone, without Lightning's
    # message: nothing in it says Lightning rebuilt the sampler, so it is named, not explained
    assert lead("384.txt").id == "log.unrecognised"
    dataloader = "MisconfigurationException: " + template(
        "lightning:trying-to-inject-custom-sampler-into", "MyLoader"
    )
    assert explained(dataloader + "\n").id != "log.custom_batch_sampler"


LIGHTNING_FRAME = (
    '  File "/env/lib/python3.10/site-packages/lightning/pytorch/utilities/data.py", line 287, in '
    "_dataloader_init_kwargs_resolve_sampler\n"
)


def chained(separator: str) -> str:
    """The sampler's own TypeError, then Lightning's TypeError below it, ``separator`` between them."""
    return (
        "Traceback (most recent call last):\n" + LIGHTNING_FRAME + "    batch_sampler = batch_sampler_cls(\n"
        "TypeError: BucketSampler.__init__() missing 1 required positional argument: 'boundaries'\n\n"
        + separator
        + "\n\nTraceback (most recent call last):\n"
        '  File "/home/u/train.py", line 40, in <module>\n'
        "    trainer.fit(model, dm)\n" + LIGHTNING_FRAME + "    raise TypeError(\n"
        "TypeError: " + template("lightning:lightning-can-inject-distributed-sampler-into-2") + "\n"
    )


def test_an_exception_raised_from_the_one_above_it_is_one_failure_with_it():
    # Python prints the sampler's TypeError first and Lightning's, raised `from` it, below: Lightning's explains
    # the first, which is not a second error that stopped the run
    found = explained(chained("The above exception was the direct cause of the following exception:"))
    assert found.id == "log.custom_batch_sampler" and found.details["confidence"] == "certain"
    assert "The run stopped on" not in found.fix


def test_an_exception_while_handling_another_is_not_raised_from_it():
    # "During handling of the above exception, another exception occurred": the second is a new error, and the
    # first still stopped the run
    found = explained(chained("During handling of the above exception, another exception occurred:"))
    assert found.id == "log.custom_batch_sampler" and found.details["confidence"] == "likely"
    assert "BucketSampler.__init__()" in found.fix
