"""The table of keywords each release of a library's callables takes (catalog/api_keywords.tsv, written by
benchmarks/api_keywords.py from the released wheels) and what `explain` says on CPython's "X.__init__() got an
unexpected keyword argument 'k'": the release that added or removed it, the rename, the pin or the upgrade; and
what it does not say (a misspelt keyword, a bare __init__ nothing names, a class of the project's own). Nothing is
downloaded here: the generator is tried on a wheel made in the test."""

from __future__ import annotations

import sys
from pathlib import Path

from explaining import called_from, explained, leads_with, made_wheel

from torchdoctor.explain.kinds import api_keywords

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import api_keywords as generator  # noqa: E402

SITE = "/opt/conda/lib/python3.11/site-packages"


# --- the 3.10+ form: CPython names the class ------------------------------------------------------------------


def test_accelerate_renamed_keyword_names_the_new_one_and_the_release():
    leads_with(
        "TypeError: Accelerator.__init__() got an unexpected keyword argument 'logging_dir'",
        "dependency_version",
        "certain",
        ["removed in accelerate 0.20", "project_dir=", "accelerate<0.20"],
    )


def test_peft_keyword_added_later_says_upgrade():
    leads_with(
        "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'use_dora'",
        "dependency_version",
        "certain",
        ["came in peft 0.9", "peft>=0.9"],
    )


def test_torch_scheduler_verbose_removed_in_2_7():
    leads_with(
        "TypeError: ReduceLROnPlateau.__init__() got an unexpected keyword argument 'verbose'",
        "dependency_version",
        "certain",
        ["removed in torch 2.7", "torch<2.7"],
    )


def test_ddp_keyword_that_came_in_1_11_names_apex_too():
    leads_with(
        "TypeError: DistributedDataParallel.__init__() got an unexpected keyword argument 'static_graph'",
        "dependency_version",
        "likely",
        ["came in torch 1.11", "torch>=1.11", "apex's DistributedDataParallel"],
    )


def test_lightning_rename_across_an_unread_release_pins_the_last_one_read():
    # 1.7's wheels are not read (pip refuses their metadata): removed after 1.6, by 1.8, never "in 1.8"
    found = leads_with(
        "TypeError: Trainer.__init__() got an unexpected keyword argument 'terminate_on_nan'",
        "dependency_version",
        "certain",
        ["after 1.6, by pytorch_lightning 1.8", "detect_anomaly=", "pytorch-lightning==1.6.*"],
    )
    assert "<1.8" not in found.fix


def test_a_library_calling_transformers_names_both_packages():
    # trl's SFTTrainer passes processing_class (transformers 4.46+) to a transformers older than that
    found = leads_with(
        called_from(
            f"{SITE}/trl/trainer/sft_trainer.py",
            "super().__init__(model=model, args=args, processing_class=processing_class)",
            "Trainer.__init__() got an unexpected keyword argument 'processing_class'",
        ),
        "dependency_version",
        "certain",
        ["came in transformers 4.46", "transformers>=4.46", "pip show trl transformers"],
    )
    assert "library_version_bug" not in found.id


def test_transformers_evaluation_strategy_is_gone_from_4_51_not_4_46():
    # the field stayed, deprecated, through 4.50 (training_args.py of the wheels), whatever the warning promised
    (row,) = api_keywords.rows("TrainingArguments", "evaluation_strategy")
    assert (row.last[:4], row.removed[:4], row.replacement) == ("4.50", "4.51", "eval_strategy")
    found = explained(
        "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'\n"
    )
    assert found.id == "log.dependency_version" and "removed in 4.51" in found.fix


# --- the bare form of Python < 3.10: the class from the traceback's call line ----------------------------------


def test_bare_init_with_the_class_on_the_call_line_of_the_projects_code_is_likely():
    found = leads_with(
        called_from(
            "/home/ana/project/train.py",
            "config = LoraConfig(r=8, lora_alpha=16, use_dora=True)",
            "__init__() got an unexpected keyword argument 'use_dora'",
        ),
        "dependency_version",
        "likely",
        ["came in peft 0.9", "peft>=0.9", "of the project's own"],
    )
    assert "train.py:41" in found.fix


def test_bare_init_called_inside_an_installed_package_is_certain():
    leads_with(
        called_from(
            f"{SITE}/llmtuner/train.py",
            "config = LoraConfig(r=8, lora_alpha=16, use_dora=True)",
            "__init__() got an unexpected keyword argument 'use_dora'",
        ),
        "dependency_version",
        "certain",
        ["came in peft 0.9", "llmtuner makes the call"],
    )


# --- near-misses: what the table does not decide --------------------------------------------------------------


def test_a_keyword_no_release_ever_had_is_not_read_as_a_release():
    found = explained("TypeError: Accelerator.__init__() got an unexpected keyword argument 'logging_dirr'\n")
    assert found.id != "log.dependency_version" or found.details["confidence"] != "certain"
    assert "0.20" not in found.summary + found.fix


def test_bare_init_with_nothing_naming_the_class_is_not_certain():
    found = explained("TypeError: __init__() got an unexpected keyword argument 'use_dora'\n")
    assert found.details.get("confidence") != "certain" and "peft" not in found.fix


def test_bare_init_whose_call_line_calls_two_table_classes_is_not_decided():
    text = called_from(
        "/home/ana/project/train.py",
        "trainer = Trainer(model, args=TrainingArguments(out, sharded_ddp='simple'))",
        "__init__() got an unexpected keyword argument 'sharded_ddp'",
    )
    assert api_keywords.named_callable("__init__", text.splitlines()[-2]) is None
    assert "4.35" not in explained(text + "\n").fix


def test_a_class_of_the_projects_own_with_the_librarys_name_is_only_likely():
    # the project defines its own ReduceLROnPlateau: the path in the traceback is not site-packages
    found = explained(
        called_from(
            "/home/ana/project/schedulers.py",
            "sched = ReduceLROnPlateau(optimizer, patience=3, verbose=True)",
            "ReduceLROnPlateau.__init__() got an unexpected keyword argument 'verbose'",
        )
        + "\n"
    )
    assert found.details["confidence"] == "likely" and "of the project's own" in found.summary


def test_a_class_another_library_names_alike_is_only_likely():
    # fairscale's FullyShardedDataParallel takes other keywords than torch's
    found = explained(
        "TypeError: FullyShardedDataParallel.__init__() got an unexpected keyword argument 'use_orig_params'\n"
    )
    assert found.details["confidence"] == "likely" and "fairscale" in found.summary
    assert "came in torch 2.0" in found.summary


def test_trl_sft_config_rename_from_its_deprecation_text():
    leads_with(
        "TypeError: SFTConfig.__init__() got an unexpected keyword argument 'max_seq_length'",
        "dependency_version",
        "certain",
        ["removed in trl 0.20", "max_length=", "trl<0.20"],
    )


def test_trl_config_does_not_lose_the_fields_it_inherits():
    # GRPOConfig stopped overriding per_device_train_batch_size (TrainingArguments still has it): no row
    assert api_keywords.rows("GRPOConfig", "per_device_train_batch_size") == []


# --- the table and its generator ------------------------------------------------------------------------------


def test_table_is_small_and_every_row_has_its_package_releases():
    assert api_keywords.TABLE.stat().st_size < 300_000
    table = api_keywords.load()
    assert {"transformers", "accelerate", "peft", "torch", "pytorch_lightning"} <= set(table)
    for releases, rows in table.values():
        for row in rows:
            assert row.added or row.removed, row
            assert {v for v in (row.added, row.last, row.removed) if v} <= set(releases), row


def _wheel(tmp_path: Path, files: dict[str, str]) -> Path:
    return made_wheel(tmp_path, "transformers-4.99.0-py3-none-any.whl", files)


def test_generator_reads_dataclass_fields_bases_and_renamed_keywords(tmp_path):
    release = generator.Release(
        _wheel(
            tmp_path,
            {
                "transformers/training_args.py": (
                    "@dataclass\nclass TrainingArguments:\n    output_dir: str\n    eval_strategy: str = 'no'\n"
                ),
                "transformers/training_args_seq2seq.py": (
                    "@dataclass\nclass Seq2SeqTrainingArguments(TrainingArguments):\n    predict_with_generate: bool\n"
                ),
                "transformers/trainer.py": (
                    "class Trainer:\n"
                    "    @deprecate_kwarg('tokenizer', new_name='processing_class')\n"
                    "    def __init__(self, model=None, *, processing_class=None):\n        pass\n"
                ),
            },
        ),
        "transformers",
    )
    assert release.keywords(("transformers/training_args_seq2seq.py",), "Seq2SeqTrainingArguments") == {
        "Seq2SeqTrainingArguments": {"output_dir", "eval_strategy", "predict_with_generate"}
    }
    assert release.keywords(("transformers/trainer.py",), "Trainer")["Trainer"] == {
        "model",
        "processing_class",
        "tokenizer",
    }
    warning = '"`evaluation_strategy` is deprecated and will be removed in version 4.46. Use `eval_strategy` instead"'
    assert generator.renamed(warning, "evaluation_strategy", {"eval_strategy"}) == "eval_strategy"
    # a deprecation that names no keyword the next release takes is no rename
    assert generator.renamed(warning, "evaluation_strategy", {"output_dir"}) == ""


# --- the training libraries' own callables ---------------------------------------------------------------------


def test_peft_function_called_by_an_installed_trainer_is_certain():
    leads_with(
        called_from(
            f"{SITE}/llamafactory/model/adapter.py",
            "model = prepare_model_for_kbit_training(model, gradient_checkpointing_kwargs={'use_reentrant': False})",
            "prepare_model_for_kbit_training() got an unexpected keyword argument 'gradient_checkpointing_kwargs'",
        ),
        "dependency_version",
        "certain",
        ["came in peft 0.6", "peft>=0.6", "llamafactory makes the call"],
    )


def test_deepspeed_init_distributed_from_the_projects_code_is_likely():
    # read from DeepSpeed's source tars (it publishes no wheels)
    leads_with(
        called_from(
            "/home/ana/project/train.py",
            "deepspeed.init_distributed(dist_backend='nccl', rank=rank, world_size=world_size)",
            "init_distributed() got an unexpected keyword argument 'rank'",
        ),
        "dependency_version",
        "likely",
        ["came in deepspeed 0.8", "deepspeed>=0.8"],
    )


def test_sentence_transformers_keyword_names_the_pip_name():
    leads_with(
        "TypeError: SentenceTransformer.__init__() got an unexpected keyword argument 'trust_remote_code'",
        "dependency_version",
        "certain",
        ["came in sentence_transformers 2.3", "pip install -U 'sentence-transformers>=2.3'"],
    )


def test_trl_ppo_trainer_rewritten_in_0_12():
    leads_with(
        "TypeError: PPOTrainer.__init__() got an unexpected keyword argument 'num_shared_layers'",
        "dependency_version",
        "certain",
        ["removed in trl 0.12", "trl<0.12"],
    )


def test_a_keyword_deepspeed_initialize_never_took_is_left_alone():
    found = explained("TypeError: initialize() got an unexpected keyword argument 'config_file'\n")
    assert "deepspeed" not in found.fix or found.details.get("confidence") != "certain"
