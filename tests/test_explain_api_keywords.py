"""The table of keywords each release of a library's callables takes (catalog/api_keywords.tsv, written by
benchmarks/api_keywords.py from the released wheels: every public class, method and function) and what `explain` says on CPython's "X.__init__() got an
unexpected keyword argument 'k'": the release that added or removed it, the rename, the pin or the upgrade; and
what it does not say (a misspelt keyword, a bare __init__ nothing names, a class of the project's own). Nothing is
downloaded here: the generator is tried on a wheel made in the test."""

from __future__ import annotations

import sys
from pathlib import Path

from explaining import called_from, explained, leads_with, made_wheel

from torchdoctor.explain.kinds import api_keywords

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import api_callables  # noqa: E402
import api_keywords as generator  # noqa: E402

SITE = "/opt/conda/lib/python3.11/site-packages"


# --- the 3.10+ form: CPython names the class ------------------------------------------------------------------


def test_accelerate_renamed_keyword_names_the_new_one_and_the_release():
    # pip freeze states the installed release, which does not take it: certain
    leads_with(
        "[pip3] accelerate==0.27.2\nTypeError: Accelerator.__init__() got an unexpected keyword argument 'logging_dir'",
        "dependency_version",
        "certain",
        ["removed in accelerate 0.20", "project_dir=", "accelerate<0.20", "accelerate 0.27.2 is newer"],
    )
    # the line alone: Lightning has an Accelerator too, and the project may have its own
    leads_with(
        "TypeError: Accelerator.__init__() got an unexpected keyword argument 'logging_dir'",
        "dependency_version",
        "likely",
        [
            "removed in accelerate 0.20",
            "the Accelerator of colossalai, pytorch_lightning",
            "an Accelerator of the project's own",
        ],
    )


def test_peft_keyword_added_later_says_upgrade():
    leads_with(
        "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'use_dora'",
        "dependency_version",
        "likely",
        ["came in peft 0.9", "peft>=0.9"],
    )


def test_torch_scheduler_verbose_removed_in_2_7():
    # collect_env's line states the release
    leads_with(
        "PyTorch version: 2.7.1+cu126\n"
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
        "likely",
        [
            "after 1.6, by pytorch_lightning 1.8",
            "detect_anomaly=",
            "pytorch-lightning==1.6.*",
            "the Trainer of colossalai, transformers",
        ],
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
        "likely",
        ["removed in trl 0.20", "max_length=", "trl<0.20"],
    )


def test_trl_config_does_not_lose_the_fields_it_inherits():
    # GRPOConfig stopped overriding per_device_train_batch_size (TrainingArguments still has it): no row
    assert api_keywords.rows("GRPOConfig", "per_device_train_batch_size") == []


# --- the table and its generator ------------------------------------------------------------------------------


def test_table_is_small_and_every_row_has_its_package_releases():
    assert api_keywords.TABLE.stat().st_size < 1_500_000
    table = api_keywords.load()
    assert {"transformers", "accelerate", "peft", "torch", "pytorch_lightning"} <= set(table)
    for releases, rows in table.values():
        for row in rows:
            assert row.added or row.removed, row
            assert {v for v in (row.added, row.last, row.removed) if v} <= set(releases), row


def _wheel(tmp_path: Path, files: dict[str, str]) -> Path:
    return made_wheel(tmp_path, "transformers-4.99.0-py3-none-any.whl", files)


def test_generator_reads_dataclass_fields_bases_and_renamed_keywords(tmp_path):
    found = api_callables.read(
        _wheel(
            tmp_path,
            {
                "transformers/training_args.py": (
                    "@dataclass\nclass TrainingArguments:\n    output_dir: str\n    eval_strategy: str = 'no'\n"
                ),
                "transformers/training_args_seq2seq.py": (
                    "from .training_args import TrainingArguments\n"
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
    ).every({})
    assert found["Seq2SeqTrainingArguments"] == {"output_dir", "eval_strategy", "predict_with_generate"}
    assert found["Trainer"] == {"model", "processing_class", "tokenizer"}
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
        "likely",
        ["came in sentence_transformers 2.3", "pip install -U 'sentence-transformers>=2.3'"],
    )


def test_trl_ppo_trainer_rewritten_in_0_12():
    leads_with(
        "TypeError: PPOTrainer.__init__() got an unexpected keyword argument 'num_shared_layers'",
        "dependency_version",
        "likely",
        ["removed in trl 0.12", "trl<0.12"],
    )


def test_a_keyword_deepspeed_initialize_never_took_is_left_alone():
    found = explained("TypeError: initialize() got an unexpected keyword argument 'config_file'\n")
    assert "deepspeed" not in found.fix or found.details.get("confidence") != "certain"


# --- the widened table: every public class, method and function ---------------------------------------------------


def _checkpoint_call(keyword: str, path: str = "/home/ana/project/train.py") -> str:
    return called_from(
        path,
        f"checkpoint = ModelCheckpoint({keyword}='ckpt/{{epoch}}', monitor='val_loss')",
        f"__init__() got an unexpected keyword argument '{keyword}'",
    )


def test_bare_init_names_a_lightning_callback_from_its_call_line():
    # a class the hand-picked list never had: pytorch_lightning's ModelCheckpoint dropped filepath in 1.2
    assert "ModelCheckpoint" not in str(generator.CALLABLES)
    leads_with(
        _checkpoint_call("filepath"),
        "dependency_version",
        "likely",
        ["removed in pytorch_lightning 1.2", "dirpath=", "pytorch-lightning<1.2", "train.py:41"],
    )


def test_an_installed_release_stated_without_the_keyword_is_certain():
    leads_with(
        "[pip3] pytorch-lightning==1.5.10\n" + _checkpoint_call("filepath"),
        "dependency_version",
        "certain",
        ["pytorch_lightning 1.5.10 is newer than the code", "dirpath="],
    )


def test_an_installed_release_stated_with_the_keyword_is_only_likely_another_installation():
    # 1.1.8 takes filepath: whatever refused it, it is not that release; another one imported, or the project's own
    found = leads_with(
        "[pip3] pytorch-lightning==1.1.8\n" + _checkpoint_call("filepath") + "\n",
        "dependency_version",
        "likely",
        ["which it takes in pytorch_lightning 1.1.8", "likely another one", "pytorch_lightning.__file__"],
    )
    assert "newer than the code" not in found.summary


def test_a_keyword_every_release_takes_is_the_scripts_own():
    assert api_keywords.rows("ModelCheckpoint", "monitor") == []
    found = explained(_checkpoint_call("monitr") + "\n")
    assert found.id != "log.dependency_version"


def test_a_class_of_the_users_own_is_not_read():
    text = called_from(
        "/home/ana/project/train.py",
        "model = MyNet(dropout=0.1)",
        "__init__() got an unexpected keyword argument 'dropout'",
    )
    assert explained(text + "\n").id != "log.dependency_version"


def test_a_package_calling_its_own_class_is_not_certain():
    # a release calling its own class with a keyword it does not take is not two releases that disagree
    found = explained(_checkpoint_call("filepath", f"{SITE}/pytorch_lightning/callbacks/factory.py") + "\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"


def test_a_method_as_python_3_10_names_it():
    leads_with(
        "TypeError: LlamaForCausalLM.forward() got an unexpected keyword argument 'cache_position'",
        "dependency_version",
        "likely",
        ["came in transformers 4.38", "transformers>=4.38"],
    )
    leads_with(
        "TypeError: Trainer.fit() got an unexpected keyword argument 'train_dataloader'",
        "dependency_version",
        "likely",
        ["removed in pytorch_lightning 1.6", "pytorch-lightning<1.6"],
    )


def test_a_name_two_packages_changed_is_read_only_where_the_log_names_one():
    # transformers' set_seed took deterministic from 4.40, accelerate's from 0.29
    assert {r.package for r in api_keywords.rows("set_seed", "deterministic")} == {
        "transformers",
        "accelerate",
    }
    bare = "TypeError: set_seed() got an unexpected keyword argument 'deterministic'\n"
    assert explained(bare).id != "log.dependency_version"
    found = explained("[pip3] accelerate==0.28.0\n" + bare)
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "came in accelerate 0.29" in found.summary and "transformers" not in found.summary


def test_generator_reads_every_public_class_method_and_function(tmp_path):
    callables = api_callables.read(
        made_wheel(
            tmp_path,
            "demo-1.0.0-py3-none-any.whl",
            {
                "demo/__init__.py": "",
                "demo/base.py": (
                    "class Base:\n    def __init__(self, a, *, b=1):\n        pass\n"
                    "    def fit(self, data, epochs=1):\n        pass\n"
                    "    @property\n    def size(self):\n        return 1\n"
                ),
                "demo/child.py": (
                    "from dataclasses import dataclass, field\nfrom demo.base import Base\n"
                    "class Child(Base):\n    pass\n"
                    "@dataclass\nclass Config:\n    lr: float = 0.1\n    step: int = field(default=0, init=False)\n"
                    "def load(path, strict=True):\n    pass\n"
                ),
                "demo/other.py": "def load(f, map_location=None):\n    pass\n",
            },
        ),
        "demo",
    )
    found = callables.every({})
    # a class without its own __init__ takes its base's, found through the import
    assert found["Child"] == found["Base"] == {"a", "b"}
    assert found["Base.fit"] == {"data", "epochs"} and "Base.size" not in found
    assert found["Config"] == {"lr"}  # a field(init=False) is no keyword
    # two functions of one name with other keywords: undecided, unless pinned to the file a script means
    assert found["load"] is None
    assert callables.every({"load": ("demo/child.py",)})["load"] == {"path", "strict"}


def test_a_sentence_quoting_the_bare_form_names_its_class():
    # corpus train/1574: the sentence that quotes the error is the only "call line" there is
    leads_with(
        "When filepath is used as an argument in ModelCheckpoint it says TypeError: __init__() got an unexpected "
        "keyword argument 'filepath'",
        "dependency_version",
        "likely",
        ["removed in pytorch_lightning 1.2", "dirpath="],
    )
    # two classes the table has in one sentence: not decided
    found = explained(
        "With ModelCheckpoint and EarlyStopping it says TypeError: __init__() got an unexpected keyword argument "
        "'filepath'\n"
    )
    assert found.id != "log.dependency_version"


def test_the_fix_names_the_keyword_the_refusal_names():
    # poseidon#3 (train 5918): the script passes eval_strategy to a transformers older than 4.41; the upgrade
    # step names the keyword, as a pin of a removed one does
    text = (Path(__file__).parent / "fixtures" / "corpus" / "train" / "5918.txt").read_text()
    found = leads_with(text, "dependency_version", "likely", ["eval_strategy", "transformers>=4.41"])
    assert "takes eval_strategy=" in found.fix
    removed = explained(
        "TypeError: Accelerator.__init__() got an unexpected keyword argument 'logging_dir'\n"
    )
    assert "the last release that takes logging_dir=" in removed.fix


# --- the packages read for their keywords only: ColossalAI, pytorch-metric-learning ------------------------------


def _gemini_call(keyword: str, path: str = "/home/ana/chat/coati/trainer/strategies/colossalai.py") -> str:
    return called_from(
        path,
        f"plugin_initializer = lambda: GeminiPlugin({keyword}=get_current_device(), placement_policy='cuda')",
        f"__init__() got an unexpected keyword argument '{keyword}'",
    )


def test_colossalai_keyword_a_later_release_removed_pins_the_last_release_with_it():
    # GeminiPlugin's device= is in every source tar read up to 0.3.1, gone from 0.3.2 (chunk_init_device came);
    # patches read follow each other only as far as the table knows, so the pin is the last release with it
    assert "colossalai" not in generator.MINORS and "colossalai" in generator.READ
    (row,) = api_keywords.rows("GeminiPlugin", "device")
    assert (row.package, row.last, row.removed) == ("colossalai", "0.3.1", "0.3.2")
    leads_with(
        _gemini_call("device"),
        "dependency_version",
        "likely",
        ["removed after 0.3.1, by colossalai 0.3.2", "colossalai==0.3.1", "colossalai.py:41"],
    )


def test_colossalai_keyword_a_later_release_added_says_upgrade():
    (row,) = api_keywords.rows("GeminiPlugin", "enable_flash_attention")
    assert (row.added, row.removed) == ("0.3.5", "")
    leads_with(
        _gemini_call("enable_flash_attention"),
        "dependency_version",
        "likely",
        ["came after 0.3.4, by colossalai 0.3.5", "colossalai>=0.3.5"],
    )


def test_a_misspelt_colossalai_keyword_gets_no_release():
    assert api_keywords.rows("GeminiPlugin", "devices") == []
    found = explained(_gemini_call("devices"))
    assert "in colossalai 0." not in found.summary and "pip install" not in found.fix


def test_a_keyword_the_release_that_took_kwargs_says_nothing_of_is_not_read():
    # pytorch-metric-learning's DistributedLossWrapper.forward took (emb, labels, ...) until 2.5 and **kwargs from
    # 2.6: emb= is gone in 2.6, but embeddings= (which 2.6 passes on) has no release to name
    (row,) = api_keywords.rows("DistributedLossWrapper.forward", "emb")
    assert (row.last, row.removed) == ("2.5.0", "2.6.0")
    assert api_keywords.rows("DistributedLossWrapper.forward", "embeddings") == []
    found = explained(
        "TypeError: DistributedLossWrapper.forward() got an unexpected keyword argument 'embeddings'\n"
    )
    assert "pytorch-metric-learning" not in found.fix


def test_webdataset_splitter_keyword_gone_in_0_1_73():
    # webdataset/webdataset#219 (corpus train 7568): WebDataset(splitter=...) of the 0.1 multinode example; the
    # releases read have it in 0.1.62 and not from 0.1.73. datasets defines a WebDataset too (its '#namesakes'
    # line), so CPython 3.10's qualified line is likely, the release named
    leads_with(
        "TypeError: WebDataset.__init__() got an unexpected keyword argument 'splitter'",
        "dependency_version",
        "likely",
        ["splitter=", "webdataset 0.1.73", "webdataset==0.1.62"],
    )


def test_webdataset_splitter_bare_init_with_the_call_line():
    # before 3.10 CPython prints a bare __init__(): the traceback's call line names the class
    leads_with(
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n'
        "    ds = wds.WebDataset(urls, splitter=wds.split_by_node)\n"
        "TypeError: __init__() got an unexpected keyword argument 'splitter'",
        "dependency_version",
        "likely",
        ["webdataset 0.1.73", "webdataset==0.1.62"],
    )
