"""The fortieth sample's train misses read with confidence as another kind: each message as its source prints it,
filled in as the thread posted it, beside a near-miss that must keep its old reading
(tests/fixtures/corpus/SAMPLING.md, files 1817-1838)."""

from __future__ import annotations

import pytest
from explaining import explained

# lightning/pytorch/core/optimizer.py (pytorch_lightning/trainer/optimizers.py in 1.x)
NO_MONITOR = (
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: `configure_optimizers` must include a "
    'monitor when a `ReduceLROnPlateau` scheduler is used. For example: {"optimizer": optimizer, '
    '"lr_scheduler": scheduler, "monitor": "metric_to_track"}\n'
)
SITE = "/opt/conda/envs/ts/lib/python3.9/site-packages"


def _traceback(*frames: tuple[str, str]) -> str:
    lines = ["Traceback (most recent call last):"]
    for file, code in frames:
        lines += [f'  File "{file}", line 10, in f', f"    {code}"]
    return "\n".join(lines) + "\n" + NO_MONITOR


def test_a_missing_monitor_alone_is_likely_and_names_the_library_release():
    # unit8co/darts#802: darts 0.17.0's PLForecastingModule.configure_optimizers returned [optimizer], [scheduler]
    found = explained(NO_MONITOR)
    assert found.id == "log.scheduler_monitor_missing" and found.details["confidence"] == "likely"
    assert "log.library_version_bug" in found.details["alternatives"]
    assert "0.17.1" in found.fix and "ReduceLROnPlateau" in found.fix


def test_a_missing_monitor_under_a_library_s_fit_names_the_library():
    found = explained(
        _traceback(
            ("/home/ana/forecast/train.py", "model.fit(train_series, val_series=val_series)"),
            (f"{SITE}/darts/models/forecasting/torch_forecasting_model.py", "self.trainer.fit("),
            (f"{SITE}/pytorch_lightning/trainer/trainer.py", "self._run(model)"),
            (f"{SITE}/pytorch_lightning/trainer/optimizers.py", "raise MisconfigurationException("),
        )
    )
    assert found.details["confidence"] == "likely" and "darts" in found.summary


@pytest.mark.usefixtures("every_message_seen")  # a reading of the line as printed
def test_a_missing_monitor_in_the_user_s_own_module_stays_certain():
    found = explained(
        _traceback(
            ("/home/ana/voice/train.py", "trainer.fit(model, data_module)"),
            (f"{SITE}/pytorch_lightning/trainer/trainer.py", "self._run(model)"),
            (f"{SITE}/pytorch_lightning/trainer/optimizers.py", "raise MisconfigurationException("),
        )
    )
    assert found.id == "log.scheduler_monitor_missing" and found.details["confidence"] == "certain"
    assert not found.details.get("alternatives")


# pip/_internal: "Could not find a version that satisfies the requirement %s%s" with the requirement's
# comes-from, "(from X)" for a dependency of X
FROM_SAMPLER = (
    "Could not find a version that satisfies the requirement torch>=1.0.1 (from spatial-correlation-sampler) "
    "(from versions: 0.1.2, 0.1.2.post1)\n"
    "No matching distribution found for torch>=1.0.1 (from spatial-correlation-sampler)\n"
)


def test_torch_wanted_by_another_package_is_only_likely_no_wheel():
    # ClementPinard/FlowNetPytorch#71: the conda environment's PyTorch 0.4.1 older than the sampler's torch>=1.0.1
    found = explained(FROM_SAMPLER)
    assert found.id == "log.no_matching_wheel" and found.details["confidence"] == "likely"
    assert "log.dependency_version" in found.details["alternatives"]
    assert "--no-deps" in found.fix


@pytest.mark.usefixtures("every_message_seen")  # a reading of the line as printed
def test_pip_s_own_versions_list_is_not_a_package_asking_for_torch():
    found = explained(
        "ERROR: Could not find a version that satisfies the requirement torch==1.8.1+cu111 (from versions: "
        "1.11.0, 1.12.0, 1.12.1)\nERROR: No matching distribution found for torch==1.8.1+cu111\n"
    )
    assert found.id == "log.no_matching_wheel" and found.details["confidence"] == "certain"
    assert "log.dependency_version" not in found.details.get("alternatives", [])


@pytest.mark.usefixtures("every_message_seen")  # a reading of the line as printed
def test_a_requirements_file_is_not_a_package_asking_for_torch():
    found = explained(
        "ERROR: Could not find a version that satisfies the requirement torch==2.3.1 (from -r requirements.txt "
        "(line 3)) (from versions: none)\nERROR: No matching distribution found for torch==2.3.1\n"
    )
    assert found.id == "log.no_matching_wheel"
    assert "log.dependency_version" not in found.details.get("alternatives", [])
