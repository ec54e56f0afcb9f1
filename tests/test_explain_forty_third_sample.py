"""The forty-third sample's train misses: each reading on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 1967-1978)."""

from __future__ import annotations

import io

import pytest

from torchdoctor.explain.diagnose import explain

pytestmark = pytest.mark.usefixtures("every_message_seen")


def lead(text: str):
    """The first finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


def traceback(
    code: str, error: str, file: str = "/root/data/LMFlow/src/lmflow/models/hf_decoder_model.py"
) -> str:
    """A script's traceback whose last frame is in ``file`` on ``code`` (its source line), ending on ``error``
    (by default LMFlow's fine-tuning model, OptimalScale/LMFlow#690)."""
    return f'Traceback (most recent call last):\n  File "{file}", line 41, in <module>\n    {code}\n{error}\n'


# index_select's CUDA kernel refusing an index past the table (huggingface/trl#2641: Qwen's token ids into the
# embeddings of the default reward model, another vocabulary)
INDEX_SELECT = (
    "../aten/src/ATen/native/cuda/Indexing.cu:1284: indexSelectLargeIndex: block: [193,0,0], thread: [66,0,0] "
    "Assertion `srcIndex < srcSelectDimSize` failed.\n"
)
# the same kernel as THC printed it before 1.8, with torch's error below it
INDEX_SELECT_THC = (
    "/pytorch/aten/src/THC/THCTensorIndex.cu:362: void indexSelectLargeIndex(TensorInfo<T, IndexType>, "
    "TensorInfo<T, IndexType>, TensorInfo<long, IndexType>, int, int, IndexType, IndexType, long) [with T = float, "
    "IndexType = unsigned int, DstDim = 2, SrcDim = 2, IdxDim = -2, IndexIsMajor = true]: block: [123,0,0], thread: "
    "[64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n"
    "RuntimeError: CUDA error: device-side assert triggered\n"
)


@pytest.mark.parametrize("log", [INDEX_SELECT, INDEX_SELECT_THC], ids=["aten", "thc"])
def test_index_selects_gpu_assertion_is_an_id_past_an_embeddings_table(log):
    found = lead(log)
    assert found.id == "log.embedding_index_range" and found.details["confidence"] == "likely"
    assert "index_select's bounds assertion" in found.summary and " or " in found.summary
    assert "resize_token_embeddings" in found.fix


def test_with_the_tokenizers_warning_the_same_assertion_is_a_sequence_too_long():
    found = lead(
        "Token indices sequence length is longer than the specified maximum sequence length for this model "
        "(600 > 512). Running this sequence through the model will result in indexing errors\n" + INDEX_SELECT
    )
    assert found.id == "log.sequence_too_long" and found.details["confidence"] == "certain"


def test_another_kernels_assertion_stays_a_device_side_assert():
    # the NLL loss's bounds check on its target, not index_select's
    found = lead(
        "/pytorch/aten/src/ATen/native/cuda/Loss.cu:242: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
        "thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
    )
    assert found.id == "log.device_assert"


@pytest.mark.parametrize(
    ("name", "kind", "confidence", "fix_holds"),
    [
        # a class transformers has from 4.28 (api_history.tsv): the installed release is older
        ("LlamaTokenizer", "dependency_version", "certain", "transformers>=4.28"),
        # no release spells it so; one does apart from the case (converted before the class shipped)
        ("LLaMATokenizer", "dependency_version", "likely", '"tokenizer_class": "LlamaTokenizer"'),
        # the model repository's own class (OptimalScale/LMFlow#690): its code, run only when trusted
        ("ChatGLMTokenizer", "remote_code_not_trusted", "likely", "trust_remote_code=True"),
    ],
)
def test_a_tokenizer_class_transformers_cannot_find_is_read_by_its_name(name, kind, confidence, fix_holds):
    found = lead(
        traceback(
            "tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, **tokenizer_kwargs)",
            f"ValueError: Tokenizer class {name} does not exist or is not currently imported.",
        )
    )
    assert found.id == f"log.{kind}" and found.details["confidence"] == confidence
    assert fix_holds in found.fix and name in found.summary
    if confidence == "likely":
        assert found.summary.startswith("likely:") and " or " in found.summary  # the other reading is named


def test_transformers_5s_tokenizer_type_refusal_is_not_the_checkpoints_class():
    # tokenization_auto.py 5.x: a tokenizer_type the caller passed, not a class a checkpoint names
    found = lead(
        traceback(
            "tokenizer = AutoTokenizer.from_pretrained(path, tokenizer_type='llama')",
            "ValueError: Passed `tokenizer_type` llama does not exist. `tokenizer_type` should be one of bert, gpt2.",
        )
    )
    assert found.id not in ("log.remote_code_not_trusted", "log.dependency_version")


@pytest.mark.parametrize(
    ("line", "option", "off"),
    [
        # RUCAIBox/RecBole#955 (0.2's option)
        (
            "ValueError: training_neg_sample_num should be 0 when the loss_type is CE",
            "training_neg_sample_num",
            "0",
        ),
        (
            "ValueError: train_neg_sample_args [{'distribution': 'uniform', 'sample_num': 1, 'alpha': 1.0, "
            "'dynamic': False, 'candidate_num': 0}] should be None when the loss_type is CE.",
            "train_neg_sample_args",
            "None",
        ),
        (
            "ValueError: neg_sampling [{'uniform': 1}] should be None when the loss_type is CE.",
            "neg_sampling",
            "None",
        ),
    ],
    ids=["0.2", "1.1", "1.0"],
)
def test_recbole_refusing_negative_sampling_with_a_ce_loss(line, option, off):
    found = lead(line + "\n")
    assert found.id == "log.library_option_conflict" and found.details["confidence"] == "certain"
    assert f"{option}={off}" in found.fix and "loss_type: BPR" in found.fix and option in found.summary


def test_a_sentence_about_the_ce_loss_without_recboles_refusal_is_not_it():
    found = lead("Note: the neg_sampling option is ignored when the loss_type is CE, see the docs.\n")
    assert found.id != "log.library_option_conflict"


@pytest.mark.parametrize(
    ("error", "given"),
    [
        ("TypeError: Module.train() got an unexpected keyword argument 'metrics'", "the keyword 'metrics'"),
        ("TypeError: Module.train() takes from 1 to 2 positional arguments but 3 were given", "3 positional"),
    ],
    ids=["keyword", "positional"],
)
def test_training_arguments_given_to_nn_module_train_are_a_renamed_fitting_method(error, given):
    found = lead(
        traceback(
            "results = model.train(dataset, opt='LBFGS', steps=100, metrics=(acc,))", error, "train_kan.py"
        )
    )
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert given in found.summary and " or " in found.summary and "model.fit(" in found.fix


@pytest.mark.parametrize(
    "error",
    [
        # Hugging Face's Trainer.train, not torch's Module.train
        "TypeError: Trainer.train() got an unexpected keyword argument 'resume'",
        # before Python 3.10 any function called train prints it: the project's own train(args) included
        "TypeError: train() got an unexpected keyword argument 'opt'",
    ],
    ids=["trainer", "bare"],
)
def test_another_train_refusing_a_keyword_is_not_nn_module_train(error):
    found = lead(traceback("results = model.train(dataset, opt='LBFGS')", error, "train_kan.py"))
    assert "nn.Module.train" not in found.summary


def package_traceback(import_line: str, missing: str) -> str:
    """The offline training script's traceback (takuseno/d3rlpy#30, its paths written out) through d3rlpy's own
    import of ``import_line``, ending on CPython's ModuleNotFoundError for ``missing``."""
    site = "/home/u/venv/lib/python3.8/site-packages/d3rlpy/base.py"
    return traceback(import_line, f"ModuleNotFoundError: No module named '{missing}'", site)


def test_a_package_importing_its_own_module_it_lacks_is_a_release_or_install_whose_files_disagree():
    found = lead(package_traceback("from .iterators import RoundIterator", "d3rlpy.iterators"))
    assert found.id == "log.broken_install" and found.details["confidence"] == "likely"
    assert "its own module 'd3rlpy.iterators'" in found.summary and "--force-reinstall" in found.fix


@pytest.mark.parametrize(
    ("import_line", "missing"),
    [
        # a dependency of the package (another top-level name), read as before
        ("import gym", "gym"),
        # the package's own top-level name alone: the package itself, not one of its modules
        ("import d3rlpy", "d3rlpy"),
    ],
    ids=["dependency", "the package itself"],
)
def test_a_missing_dependency_or_package_is_not_the_packages_own_module(import_line, missing):
    found = lead(package_traceback(import_line, missing))
    assert "its own module" not in found.summary


def test_a_namespace_packages_absolute_import_of_another_part_is_not_its_own_module():
    # google.* parts are other distributions (protobuf, google-auth, ...): an absolute import of one is a dependency
    log = traceback(
        "from google.protobuf import descriptor as _descriptor",
        "ModuleNotFoundError: No module named 'google.protobuf'",
        "/home/u/venv/lib/python3.10/site-packages/google/api_core/protobuf_helpers.py",
    )
    assert "its own module" not in lead(log).summary
