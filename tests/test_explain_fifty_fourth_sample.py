"""The fifty-fourth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2517-2566)."""

from __future__ import annotations

from explaining import explained, leads_with, template

# transformers/models/qwen2_vl/modeling_qwen2_vl.py Qwen2VLModel.forward, under the Trainer's training step
CUT_SAMPLE = (
    '  File "/opt/conda/lib/python3.10/site-packages/transformers/models/qwen2_vl/modeling_qwen2_vl.py", '
    "line 1682, in forward\n"
    "    raise ValueError(\n"
    "ValueError: "
    + template("third_party:transformers-image-features-and-image-tokens-do-not-match", "1024", "1728")
)


def test_fewer_image_tokens_than_features_reads_as_a_cut_sample():
    found = leads_with(CUT_SAMPLE, "image_tokens_truncated", "likely", ["cutoff_len", "max_length"])
    assert "fewer tokens than features" in found.summary and "1024 tokens, 1728 features" in found.summary


def test_more_video_tokens_than_features_names_tokens_no_video_accounts_for():
    found = leads_with(
        "ValueError: "
        + template("third_party:transformers-video-features-and-video-tokens-do-not-match", "2117", "2116"),
        "image_tokens_truncated",
        "likely",
        ["more tokens than features"],
    )
    assert "cut by the maximum" not in found.summary


def test_an_audio_feature_mismatch_is_not_an_image_token_reading():
    found = explained("ValueError: Audio features and audio tokens do not match: tokens: 100, features 120\n")
    assert found.id != "log.image_tokens_truncated"


# llamafactory/data/parser.py get_dataset_list, run by llamafactory-cli train outside the repository folder
UNDEFINED_DATASET = (
    '  File "/kaggle/working/LLaMA-Factory/src/llamafactory/data/parser.py", line 129, in get_dataset_list\n'
    '    raise ValueError(f"Undefined dataset {name} in {DATA_CONFIG}.")\n'
    "ValueError: " + template("third_party:llamafactory-undefined-dataset", "alpaca_zh_demo")
)


def test_llamafactorys_undefined_dataset_names_the_folder_it_runs_from():
    found = leads_with(
        UNDEFINED_DATASET, "data_path_missing", "likely", ["cd LLaMA-Factory", "dataset_info.json"]
    )
    assert "'alpaca_zh_demo'" in found.summary and "dataset_dir" in found.fix


def test_a_registered_dataset_without_its_file_name_is_not_an_undefined_one():
    # the same parser's next refusal: the entry exists but does not name its file
    found = explained("ValueError: Dataset my_data must define `file_name` in dataset_info.json.\n")
    assert "found no dataset" not in found.summary
