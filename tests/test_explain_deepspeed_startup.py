"""DeepSpeed's refusals at startup and in the first steps outside the engine (issue 19, DeepSpeed): its CPU optimizers
(``ops/adam/cpu_adam.py``, ``ops/adagrad/cpu_adagrad.py``, ``ops/lion/cpu_lion.py``) given parameters on the GPU, an
MoE layer whose experts do not split over its expert-parallel size (``moe/layer.py``), AutoTP refusing a model its
injection kernels cover (``module_inject/auto_tp.py``), and an accelerator's op builder without the op
(``op_builder/<accelerator>/no_impl.py``).

Each case is the catalog's template filled the way its source fills it, after the exception the source raises; each
anchor has a near-miss of the same words that is another failure.
"""

from __future__ import annotations

import pytest
from explaining import certain_saying, explained, template

from torchdoctor.explain.catalog import by_id

pytestmark = pytest.mark.usefixtures("every_message_seen")

SITE = "/usr/local/lib/python3.10/dist-packages/deepspeed"


def line(ident: str, *values: str) -> str:
    """The template ``ident`` with its ``{}`` placeholders filled in order (every one must be)."""
    text = template(ident, *values)
    assert "{}" not in text, f"{ident}: a placeholder left unfilled"
    return text


# (template id, values, the exception, words the summary or the fix must hold)
CASES = [
    # cpu_adam.py step(): p.device is torch.device's str, "cuda:0"
    (
        "deepspeed:cpuadam-param-is-on-and-must",
        ("cuda:0",),
        "AssertionError",
        ['"offload_optimizer"', "FusedAdam"],
    ),
    ("deepspeed:cpuadagrad-param-is-on-and-must", ("cuda:1",), "AssertionError", ['"device": "cpu"']),
    ("deepspeed:cpulion-param-is-on-and-must", ("cuda:0",), "AssertionError", ["torch.optim.AdamW"]),
    # moe/layer.py: f"Number of experts ({num_experts}) should be divisible by expert parallel size ({ep_size})"
    (
        "deepspeed:number-of-experts-should-be-divisible",
        ("8", "3"),
        "AssertionError",
        ["ep_size", "num_experts"],
    ),
    (
        "third_party:deepspeed-autotp-use-kernel-injection",
        (),
        "AssertionError",
        ["replace_with_kernel_inject=True"],
    ),
]


@pytest.mark.parametrize(("ident", "values", "raised", "fix"), CASES)
def test_the_refusal_as_its_source_prints_it_is_the_config(ident, values, raised, fix):
    found = certain_saying(f"{raised}: {line(ident, *values)}\n", "deepspeed_config_mismatch", [], fix)
    assert found.summary


def test_the_cpu_optimizer_refusal_under_its_traceback_names_the_offload():
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 131, in <module>\n'
        "    model_engine.step()\n"
        f'  File "{SITE}/runtime/engine.py", line 2169, in step\n'
        "    self._take_model_step(lr_kwargs)\n"
        f'  File "{SITE}/ops/adam/cpu_adam.py", line 143, in step\n'
        "    assert p.device == device, f\"CPUAdam param is on {p.device} and must be 'cpu', make \" \\\n"
        "AssertionError: " + line("deepspeed:cpuadam-param-is-on-and-must", "cuda:0") + "\n"
    )
    found = explained(text)
    assert found.id == "log.deepspeed_config_mismatch", (found.id, found.summary)
    assert "offload_optimizer" in found.fix


@pytest.mark.parametrize(
    "ident", [f"deepspeed:this-op-had-not-been-implemented{n}" for n in ("", "-2", "-4", "-6")]
)
def test_an_accelerator_without_the_op_is_likely_and_names_a_torch_without_cuda(ident):
    found = explained(f"ValueError: {line(ident)}\n")
    assert found.id == "log.deepspeed_op_prerequisite", (found.id, found.summary)
    assert found.details["confidence"] == "likely"
    assert "torch.cuda.is_available()" in found.fix and "DS_ACCELERATOR" in found.fix


def test_the_catalog_maps_the_startup_templates():
    kinds = {
        "deepspeed:cpuadam-param-is-on-and-must": "deepspeed_config_mismatch",
        "deepspeed:cpuadagrad-param-is-on-and-must": "deepspeed_config_mismatch",
        "deepspeed:cpulion-param-is-on-and-must": "deepspeed_config_mismatch",
        "deepspeed:number-of-experts-should-be-divisible": "deepspeed_config_mismatch",
        "third_party:deepspeed-autotp-use-kernel-injection": "deepspeed_config_mismatch",
        "deepspeed:this-op-had-not-been-implemented": "deepspeed_op_prerequisite",
    }
    for ident, kind in kinds.items():
        assert by_id()[ident].kind == kind, ident


NEAR_MISSES = [
    # AutoTP's other wording: no injection policy either, the model is not supported at all
    "AssertionError: AutoTP not supported for model. Please provide policy.\n",
    # another framework's expert check and another tool's offload words
    "AssertionError: n_physical_experts=256 must be divisible by ep_size=3. Adjust num_redundant_experts.\n",
    "RuntimeError: tensor is on cuda:0 and must be on cpu for numpy()\n",
    "NotImplementedError: This op has not been implemented for sparse tensors\n",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_not_read_as_deepspeeds_refusals(text):
    found = explained(text)
    assert found.id not in ("log.deepspeed_config_mismatch", "log.deepspeed_op_prerequisite"), (
        text,
        found.summary,
    )


def test_fused_adams_sparse_refusal_is_the_sparse_embedding():
    found = explained("RuntimeError: " + line("deepspeed:fusedadam-does-not-support-sparse-gradients") + "\n")
    assert found.id == "log.optimizer_sparse_gradients", (found.id, found.summary)
    assert "sparse=False" in found.fix


# DeepSpeed's pydantic config models (runtime/config_utils.py DeepSpeedConfigModel): pydantic 2 prints the refused
# field below its header and the reason indented, each line behind the launcher's rank prefix
FLOAT_BUCKET = (
    "[rank2]: pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig\n"
    "[rank2]: stage3_prefetch_bucket_size\n"
    "[rank2]:   Input should be a valid integer, got a number with a fractional part [type=int_from_float, "
    "input_value=15099494.4, input_type=float]\n"
    "[rank2]:     For further information visit https://errors.pydantic.dev/2.9/v/int_from_float\n"
)
# pydantic 1 (DeepSpeed before 0.15): a key the model does not know
UNKNOWN_KEY = (
    "pydantic.error_wrappers.ValidationError: 1 validation error for DeepSpeedZeroConfig\n"
    "stage3_prefetch_bucket\n"
    "  extra fields not permitted (type=value_error.extra)\n"
)


def test_a_float_for_an_integer_key_names_the_key_and_the_integer_to_write():
    found = explained(FLOAT_BUCKET)
    assert found.id == "log.deepspeed_config_mismatch", (found.id, found.summary)
    assert found.details["confidence"] == "likely"
    assert "stage3_prefetch_bucket_size: Input should be a valid integer" in found.summary
    assert "(15099494)" in found.fix and "transformers>=4.45" in found.fix and "deepspeed<0.15" in found.fix


def test_an_unknown_key_is_named_with_pydantics_reason():
    found = explained(UNKNOWN_KEY)
    assert found.id == "log.deepspeed_config_mismatch", (found.id, found.summary)
    assert "stage3_prefetch_bucket: extra fields not permitted" in found.summary
    assert "must be an integer" not in found.fix


def test_another_models_validation_error_is_not_deepspeeds():
    text = (
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for TrainingConfig\n"
        "batch_size\n"
        "  Input should be a valid integer, got a number with a fractional part [type=int_from_float]\n"
    )
    assert explained(text).id != "log.deepspeed_config_mismatch"


def test_the_op_builders_cuda_mismatch_before_0_8_1_is_read_as_the_newer_one():
    # op_builder/builder.py assert_no_cuda_mismatch, DeepSpeed 0.3-0.8.0: a bare Exception without the
    # ">- DeepSpeed Op Builder:" prefix 0.8.1 added
    old = "Exception: " + line("deepspeed:installed-cuda-version-does-not-match", "11.7", "11.8") + "\n"
    new = "deepspeed.ops.op_builder.builder.CUDAMismatchException: " + line(
        "deepspeed:deepspeed-op-builder-installed-cuda-version", "11.7", "11.8"
    )
    for text in (old, new + "\n"):
        found = explained(text)
        assert found.id == "log.cuda_build", (found.id, found.summary)
        assert "CUDA 11.7" in found.summary and "CUDA 11.8" in found.summary, found.summary
    # the same release's healthy print where the APIs are compatible: the run goes on
    healthy = (
        "Installed CUDA version 11.7 does not match the version torch was compiled with 11.8 but since the APIs "
        "are compatible, accepting this combination\n"
    )
    assert explained(healthy).id != "log.cuda_build"


def test_the_op_builders_warnings_at_start_do_not_lead_over_the_error_that_stopped_the_run():
    # DeepSpeed prints " [WARNING]  async_io requires ..." at every start on a machine without libaio: a note the
    # run goes on after, not the failure (CERT10, session 38: it led over a device mismatch)
    notes = (
        " [WARNING]  async_io requires the dev libaio .so object and headers but these were not found.\n"
        " [WARNING]  async_io: please install the libaio-dev package with apt\n"
    )
    error = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 40, in <module>\n'
        "    loss = model(batch)\n"
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
        "cpu!\n"
    )
    assert explained(notes + error).id == "log.device_mismatch"
    # alone, the notes are still read as what DeepSpeed lacks for that op
    assert explained(notes).id == "log.deepspeed_op_prerequisite"
