"""Experiment trackers and the HF example scripts, read from the code that prints them (session 38, OTHER3):
wandb's init timeout, MLflow refusing a param's new value, the examples' non-empty output_dir. Each message is the
catalog template filled as its source fills it, inside the traceback a run prints."""

from __future__ import annotations

from explaining import explained

from torchdoctor.explain.catalog import by_id


def likely(text: str, kind: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "likely", found.summary
    return found


def template(template_id: str) -> str:
    return by_id()[template_id].text


# wandb/sdk/wandb_init.py _WandbInit.init: the service created no run within init_timeout
def test_wandb_init_timeout_is_a_server_out_of_reach_and_says_how_to_wait_longer():
    found = likely(
        '  File "/opt/conda/lib/python3.10/site-packages/wandb/sdk/wandb_init.py", line 1266, in init\n'
        "    wandb._sentry.reraise(e)\n"
        "wandb.errors.errors.CommError: Run initialization has timed out after 90.0 sec. Please try increasing the "
        "timeout with the `init_timeout` setting: `wandb.init(settings=wandb.Settings(init_timeout=120))`.\n",
        "wandb_server_unreachable",
    )
    assert "90.0 s" in found.summary
    assert "WANDB_MODE=offline" in found.fix and "init_timeout" in found.fix and "rank 0" in found.fix


def test_the_older_timeout_wording_reads_the_same():
    # 0.15-0.19 follow the sentence with a link to the docs, 60 s in earlier defaults
    found = likely(
        "wandb: ERROR Run initialization has timed out after 60.0 sec. \n"
        "wandb: ERROR Please refer to the documentation for additional information: "
        "https://docs.wandb.ai/guides/track/tracking-faq#initstarterror-error-communicating-with-wandb-process-\n",
        "wandb_server_unreachable",
    )
    assert "60.0 s" in found.summary


def test_a_retry_loop_beside_the_timeout_names_the_network_error():
    found = likely(
        "wandb: Network error (ProxyError), entering retry loop.\n"
        "wandb.errors.errors.CommError: Run initialization has timed out after 120.0 sec.\n",
        "wandb_server_unreachable",
    )
    assert "ProxyError" in found.summary


def test_the_catalog_maps_the_timeout_template():
    assert "Run initialization has timed out after {} sec." == template(
        "third_party:wandb-run-initialization-timed-out"
    )


# mlflow/store/tracking/file_store.py FileStore._validate_new_param_value
def test_mlflow_refusing_a_param_change_names_the_key_and_both_values():
    text = template("third_party:mlflow-changing-param-values-not-allowed").format(
        "per_device_train_batch_size", "4", "8a3c1f0e2b7d4c6e9f1a2b3c4d5e6f70", "8"
    )
    found = likely(
        '  File "/usr/local/lib/python3.10/dist-packages/mlflow/store/tracking/file_store.py", line 1054, in '
        "_validate_new_param_value\n"
        "    raise MlflowException(\n"
        f"mlflow.exceptions.MlflowException: {text}\n",
        "tracker_param_changed",
    )
    assert (
        "'per_device_train_batch_size'" in found.summary and "'4'" in found.summary and "'8'" in found.summary
    )
    assert "MLFLOW_RUN_ID" in found.fix and "log_metric" in found.fix and "rank 0" in found.fix


def test_the_sql_stores_wording_reads_without_the_values():
    found = likely(
        "mlflow.exceptions.MlflowException: Changing param values is not allowed. Params were already logged="
        "'[<Param: key='lr', value='0.001'>]' for run ID='1c2d'.\n",
        "tracker_param_changed",
    )
    assert "a param already logged" in found.summary


def test_an_mlflow_error_of_another_kind_is_not_a_param_change():
    found = explained("mlflow.exceptions.MlflowException: Run '1c2d3e' not found\n")
    assert found.id != "log.tracker_param_changed"


# transformers/examples/pytorch/*/run_*.py main: a non-empty output_dir without a checkpoint-N folder
def test_an_examples_output_dir_that_is_not_empty_says_the_three_ways_on():
    text = template("transformers:output-directory-exists-not-empty").format("./outputs/llama-7b-lora")
    found = likely(
        f'  File "run_clm.py", line 289, in main\n    raise ValueError(\nValueError: {text}\n',
        "trainer_arguments",
    )
    assert "--overwrite_output_dir" in found.fix and "--resume_from_checkpoint" in found.fix
    assert "--output_dir" in found.fix


# peft/utils/config.py PeftConfigMixin.from_pretrained builds the config class from adapter_config.json's keys
ADAPTER_LOAD = (
    "Traceback (most recent call last):\n"
    '  File "finetune.py", line 120, in <module>\n'
    '    model = PeftModel.from_pretrained(model, "outputs/checkpoint-1000")\n'
    '  File "/opt/conda/lib/python3.9/site-packages/peft/peft_model.py", line 181, in from_pretrained\n'
    "    config = PEFT_TYPE_TO_CONFIG_MAPPING[PeftConfig.from_pretrained(model_id).peft_type]"
    ".from_pretrained(model_id)\n"
    '  File "/opt/conda/lib/python3.9/site-packages/peft/utils/config.py", line 110, in from_pretrained\n'
    "    config = cls(**kwargs)\n"
)


def test_an_adapter_saved_by_a_newer_peft_names_the_release_that_reads_its_key():
    found = likely(
        ADAPTER_LOAD + "TypeError: __init__() got an unexpected keyword argument 'use_rslora'\n",
        "dependency_version",
    )
    assert "LoraConfig(use_rslora=...)" in found.summary and "adapter_config.json" in found.summary
    assert "pip install -U 'peft>=0.8'" in found.fix and 'delete "use_rslora"' in found.fix
    assert "project's own" not in found.summary


def test_python_3_10_names_the_class_and_reads_the_same():
    found = likely(
        ADAPTER_LOAD.replace("python3.9", "python3.10")
        + "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'layer_replication'\n",
        "dependency_version",
    )
    assert "'peft>=0.10'" in found.fix and "adapter_config.json" in found.fix


def test_a_key_no_peft_release_takes_is_not_read_as_a_release():
    found = explained(
        ADAPTER_LOAD + "TypeError: __init__() got an unexpected keyword argument 'not_a_peft_key'\n"
    )
    assert found.id != "log.dependency_version"


def test_a_bare_init_elsewhere_is_not_taken_for_a_peft_config():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    cfg = make(**kwargs)\n"
        "TypeError: __init__() got an unexpected keyword argument 'use_rslora'\n"
    )
    assert "adapter_config.json" not in found.summary
