"""The thirty-third sample's train misses: each kind on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 1467-1483)."""

from __future__ import annotations

import io

import pytest

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def lead(text: str):
    """The first finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


def kind_of(text: str) -> str:
    return lead(text).id.removeprefix("log.")


def test_triton_missing_from_inductor_is_certain():
    # ScrollPrize/villa#1480, wochenlong/lora-scripts-next#47: torch/_inductor/exc.py's TritonMissing
    found = lead(
        "torch._inductor.exc.TritonMissing: Cannot find a working triton installation. Either the package is not "
        "installed or it is too old. More information on installing Triton can be found at: "
        "https://github.com/triton-lang/triton\n"
    )
    assert found.id == "log.triton_missing" and found.details["confidence"] == "certain"
    assert "triton-windows" in found.fix and "aot_eager" in found.fix


def test_triton_missing_names_windows_when_the_log_is_from_windows():
    found = lead(
        '  File "C:\\Users\\me\\venv\\lib\\site-packages\\torch\\_inductor\\scheduler.py", line 3401, in '
        "create_backend\n"
        "torch._inductor.exc.TritonMissing: Cannot find a working triton installation.\n"
    )
    assert found.id == "log.triton_missing" and "Windows" in found.summary


def test_a_triton_kernel_error_is_not_triton_missing():
    assert kind_of("triton.compiler.errors.CompilationError: at 8:11: def triton_(in_ptr0, out_ptr0):\n") != (
        "triton_missing"
    )


def test_already_borrowed_beside_a_tokenizer_is_certain():
    # Nerogar/mgds#59: one fast tokenizer called from a ThreadPoolExecutor
    found = lead(
        '  File "/venv/lib/python3.10/site-packages/transformers/tokenization_utils_fast.py", line 384, in '
        "set_truncation_and_padding\n"
        "    self._tokenizer.no_truncation()\n"
        "RuntimeError: Already borrowed\n"
    )
    assert found.id == "log.tokenizer_threads" and found.details["confidence"] == "certain"
    assert "threading.Lock" in found.fix


def test_already_borrowed_alone_is_likely_and_names_another_extension():
    found = lead("RuntimeError: Already borrowed\n")
    assert found.id == "log.tokenizer_threads" and found.details["confidence"] == "likely"
    assert "PyO3" in found.summary


def test_a_borrowed_book_is_not_a_tokenizer():
    assert kind_of("ValueError: the book is already on loan\n") != "tokenizer_threads"


def test_a_three_channel_normalize_on_grayscale_beside_torchvision_is_certain():
    # jindongwang/transferlearning#140, udacity/deep-learning-v2-pytorch#151
    found = lead(
        '  File "/venv/lib/python3.9/site-packages/torchvision/transforms/functional.py", line 363, in normalize\n'
        "    tensor.sub_(mean).div_(std)\n"
        "RuntimeError: output with shape [1, 28, 28] doesn't match the broadcast shape [3, 28, 28]\n"
    )
    assert found.id == "log.normalize_channels" and found.details["confidence"] == "certain"
    assert "Normalize((0.5,), (0.5,))" in found.fix


def test_the_bare_line_is_likely_with_the_other_in_place_op_named():
    found = lead(
        "RuntimeError: output with shape [1, 224, 224] doesn't match the broadcast shape [3, 224, 224]\n"
    )
    assert found.id == "log.normalize_channels" and found.details["confidence"] == "likely"


def test_other_broadcast_shapes_are_not_a_channel_count():
    text = "RuntimeError: output with shape [4, 10] doesn't match the broadcast shape [8, 4, 10]\n"
    assert kind_of(text) != "normalize_channels"


def test_mps_int64_cumsum_is_a_release():
    # scottviteri/MarkovianTraining#9; aten/src/ATen/native/mps/operations/UnaryOps.mm
    found = lead(
        "RuntimeError: MPS does not support cumsum op with int64 input. Support has been added in macOS 13.3\n"
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "13.3" in found.fix and "nightly" in found.fix


def test_mps_float64_stays_its_own_kind():
    text = (
        "TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
        "Please use float32 instead.\n"
    )
    assert kind_of(text) == "mps_float64"


def test_transformers_4_bf16_message_names_three_causes_so_it_is_likely():
    # unslothai/unsloth#780 (the check refused on a Colab L4; fixed in unsloth): transformers 4.x raises it when
    # is_torch_bf16_gpu_available() is False, for an old torch, an old GPU or a CUDA 10 build
    found = lead(
        "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0\n"
    )
    assert found.id == "log.bf16_unsupported" and found.details["confidence"] == "likely"


def test_transformers_4_bf16_message_beside_a_new_torch_is_certain():
    found = lead(
        "[pip3] torch==2.1.0\n"
        "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0\n"
    )
    assert found.id == "log.bf16_unsupported" and found.details["confidence"] == "certain"


def test_transformers_5_bf16_message_is_certain():
    # with the sentence training_args.py adds only where CUDA is available; without it the run saw no GPU
    # (likely, test_explain_certainty_review_3.py)
    found = lead(
        "ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to train the "
        "model on CPU. You need Ampere+ GPU with cuda>=11.0.\n"
    )
    assert found.id == "log.bf16_unsupported" and found.details["confidence"] == "certain"
