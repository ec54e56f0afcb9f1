"""The sixtieth sample's train misses: each reading on its line as the source prints it, filled in as a run
would print it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2817-2822)."""

from __future__ import annotations

from explaining import explained


def likely(text: str, kind: str):
    found = explained(text)
    assert found.id == f"log.{kind}" and found.details["confidence"] == "likely", found.summary
    return found


# OneTrainer modules/modelSetup/BaseWuerstchenSetup.py prepare_text_caching (#1220 to #1558):
#     if not config.train_text_encoder_or_embedding():
#         model.text_encoder_to(self.train_device)
# modules/model/WuerstchenModel.py defines prior_text_encoder_to and decoder_text_encoder_to, no text_encoder_to
def test_onetrainer_wuerstchen_frozen_text_encoder_says_to_update_onetrainer():
    found = likely(
        "AttributeError: 'WuerstchenModel' object has no attribute 'text_encoder_to'\n",
        "library_version_bug",
    )
    assert "prior_text_encoder_to" in found.fix and "OneTrainer" in found.fix


def test_onetrainer_wuerstchen_in_its_traceback_reads_the_same():
    found = likely(
        "Traceback (most recent call last):\n"
        '  File "D:\\OneTrainer\\modules\\trainer\\GenericTrainer.py", line 161, in start\n'
        "    self.model_setup.prepare_text_caching(self.model, self.config)\n"
        '  File "D:\\OneTrainer\\modules\\modelSetup\\BaseWuerstchenSetup.py", line 362, in prepare_text_caching\n'
        "    model.text_encoder_to(self.train_device)\n"
        "AttributeError: 'WuerstchenModel' object has no attribute 'text_encoder_to'\n",
        "library_version_bug",
    )
    assert "#1558" in found.summary


def test_another_member_of_the_wuerstchen_model_is_not_that_call():
    found = explained("AttributeError: 'WuerstchenModel' object has no attribute 'prior_prior_to'\n")
    assert "prepare_text_caching" not in found.summary


def test_text_encoder_to_on_another_model_class_is_not_that_call():
    found = explained("AttributeError: 'StableDiffusionXLModel' object has no attribute 'text_encoder_to'\n")
    assert "Würstchen" not in found.summary
