import json
import os
import subprocess
import sys

import pytest
import torch

from torchdoctor.checks import discover
from torchdoctor.system import MIN_SHM_BYTES, check_kernel, check_shm


def test_kernel_older_than_5_5_warns_with_the_upgrade():
    finding = check_kernel("5.4.0-42-generic", "Linux")
    assert finding.id == "sys.kernel" and finding.status == "warn"
    assert "5.4.0-42-generic" in finding.summary and "5.5" in finding.fix
    assert finding.details == {"system": "Linux", "release": "5.4.0-42-generic"}


def test_kernel_5_5_and_newer_is_fine():
    for release in ("5.5.0", "5.15.0-91-generic", "6.8.0-1015-aws", "10.0.1"):
        assert check_kernel(release, "Linux").status == "ok", release


def test_kernel_check_skips_other_systems_and_odd_releases():
    assert check_kernel("23.1.0", "Darwin").status == "skip"
    odd = check_kernel("custom-build", "Linux")
    assert odd.status == "skip" and "custom-build" in odd.summary


def test_kernel_check_reads_this_machine_by_default():
    import platform

    finding = check_kernel()
    assert finding.details["release"] == platform.release()


def test_docker_default_shm_warns_with_shm_size_fix():
    finding = check_shm(64 * 2**20, 60 * 2**20)
    assert finding.id == "sys.shm" and finding.status == "warn"
    assert "64 MiB" in finding.summary and "--shm-size" in finding.fix and "--ipc=host" in finding.fix


def test_shm_of_at_least_1_gib_is_fine():
    finding = check_shm(MIN_SHM_BYTES, MIN_SHM_BYTES)
    assert finding.status == "ok" and "1.0 GiB" in finding.summary
    assert check_shm(MIN_SHM_BYTES - 1).status == "warn"


def test_a_full_shm_warns_and_says_how_to_find_what_fills_it():
    finding = check_shm(16 * 2**30, 200 * 2**20)
    assert finding.status == "warn" and "16.0 GiB but only 200 MiB is free" in finding.summary
    assert finding.fix.startswith("du -sh /dev/shm/*")


def test_shm_size_is_read_from_the_path(tmp_path):
    import shutil

    finding = check_shm(path=str(tmp_path))
    assert finding.details["size_bytes"] == shutil.disk_usage(tmp_path).total
    roomy = min(finding.details["size_bytes"], finding.details["free_bytes"]) >= MIN_SHM_BYTES
    assert finding.status == ("ok" if roomy else "warn")


def test_missing_shm_on_linux_warns(tmp_path):
    import platform

    finding = check_shm(path=str(tmp_path / "no-shm"))
    assert finding.status == ("warn" if platform.system() == "Linux" else "skip")


def test_kernel_and_shm_are_discovered_after_the_first_checks():
    names = [fn.__name__ for fn in discover(["torchdoctor.system"])]
    assert names.index("check_kernel") > names.index("check_accelerators")
    assert "check_shm" in names


BROKEN_TORCH_ENVIRONMENTS = [
    (
        {"TORCH_DISTRIBUTED_DEBUG": "ALL"},
        "TORCH_DISTRIBUTED_DEBUG='ALL'",
        "export TORCH_DISTRIBUTED_DEBUG=DETAIL",
    ),
    ({"TORCH_DISTRIBUTED_DEBUG": ""}, "TORCH_DISTRIBUTED_DEBUG=''", "export TORCH_DISTRIBUTED_DEBUG=DETAIL"),
    ({"TORCH_DISTRIBUTED_DEBUG": "verbose"}, "TORCH_DISTRIBUTED_DEBUG='verbose'", "OFF, INFO or DETAIL"),
    ({"TORCH_LOGS": "bogus"}, "TORCH_LOGS='bogus'", "unset TORCH_LOGS"),
    ({"TORCH_LOGS": "+dynamo,not_a_log"}, "TORCH_LOGS='+dynamo,not_a_log'", "unset TORCH_LOGS"),
    # two at once: torch stops at the first it reads; that one is named
    ({"TORCH_LOGS": "bogus", "TORCH_DISTRIBUTED_DEBUG": "ALL"}, "TORCH_DISTRIBUTED_DEBUG='ALL'", "DETAIL"),
]


@pytest.mark.parametrize("variables, named, fix", BROKEN_TORCH_ENVIRONMENTS)
def test_an_environment_that_breaks_import_torch_is_a_failed_check_not_a_crash(cli, variables, named, fix):
    result = cli("check", "--json", "--skip", "net", env=variables, timeout=180)
    assert result.returncode == 1, (result.returncode, result.stderr[-2000:])  # not 134 (SIGABRT)
    assert result.stderr == ""
    findings = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    torch_finding = findings["sys.torch"]
    assert torch_finding["status"] == "fail" and named in torch_finding["summary"], torch_finding
    assert "import torch fails" in torch_finding["summary"] and fix in torch_finding["fix"]
    assert "Traceback" in torch_finding["details"]["traceback"]
    # the rest ran: what needs torch says so, what does not gave its verdict
    assert findings["sys.python"]["status"] == "ok" and findings["sys.kernel"]["status"] == "ok"
    assert findings["sys.accelerators"]["status"] == "skip"
    assert findings["sys.accelerators"]["summary"].startswith("needs torch, which cannot be imported here")
    assert findings["env.toolkits"]["status"] in ("ok", "skip", "warn")
    assert findings["env.nccl"]["summary"].startswith(f"torch {torch.__version__}")  # read without importing
    assert not any("crashed" in f["summary"] for f in findings.values())


def test_broken_import_torch_under_every_area_and_in_report(cli):
    broken = {"TORCH_DISTRIBUTED_DEBUG": "ALL"}
    everything = cli("check", env=broken, timeout=300)  # net too: its workers get the same environment
    assert everything.returncode == 1, everything.stderr[-2000:]
    assert "import torch fails because of TORCH_DISTRIBUTED_DEBUG='ALL'" in everything.stdout
    assert "(net.smoke)" in everything.stdout and "Traceback" not in everything.stdout + everything.stderr
    report = cli("report", "--skip", "net", env=broken, timeout=180)
    assert report.returncode == 1, report.stderr[-2000:]
    assert f"| torch | {torch.__version__}, but import torch fails: ValueError: " in report.stdout
    assert "cannot ask torch: import torch fails" in report.stdout


def test_import_torch_is_tried_once_and_a_second_import_is_a_plain_import_error():
    """In a fresh process: the first failure is kept, a second import raises instead of aborting."""
    script = (
        "from torchdoctor.torch_import import import_torch\n"
        "first = import_torch(); again = import_torch()\n"
        "assert first == again and first.startswith('ValueError: The value of TORCH_DISTRIBUTED_DEBUG'), first\n"
        "try:\n    import torch.distributed\nexcept ImportError as error:\n    print('ImportError', error)\n"
    )
    env = dict(os.environ, TORCH_DISTRIBUTED_DEBUG="ALL")
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ImportError")


def test_a_low_open_files_limit_warns_with_the_command_that_raises_it():
    from torchdoctor.system import check_open_files

    low = check_open_files((256, 1048576))
    assert low.id == "sys.open_files" and low.status == "warn" and "is 256, hard 1048576" in low.summary
    assert 'ulimit -n "$(ulimit -Hn)"' in low.fix
    stuck = check_open_files((256, 256))  # the hard limit is low too: ulimit -n cannot raise it
    assert stuck.status == "warn" and "hard limit is 256 too" in stuck.fix
    assert check_open_files((1024, 4096)).status == "ok"


def test_a_thread_count_openmp_ignores_warns_and_a_valid_one_says_nothing():
    from torchdoctor.system import check_threads

    assert check_threads({}) is None and check_threads({"OMP_NUM_THREADS": "4"}) is None
    for value in ("0", "-1", "four", ""):
        finding = check_threads({"OMP_NUM_THREADS": value})
        assert finding.id == "sys.threads" and finding.status == "warn", value
        assert f"OMP_NUM_THREADS={value!r}" in finding.summary and "export OMP_NUM_THREADS=1" in finding.fix


def test_packages_say_what_pip_check_says_and_a_torch_companion_from_another_release_fails():
    from torchdoctor.system import check_packages

    fine = {"torch": ("2.13.0+cpu", ["filelock"]), "filelock": ("3.20.0", [])}
    assert check_packages(fine).status == "ok"
    mismatched = fine | {
        "torchvision": ("0.20.1", ["numpy", "torch==2.5.1", "scipy; extra == 'scipy'"]),
        "numpy": ("2.4.6", []),
    }
    bad = check_packages(mismatched)
    assert bad.id == "sys.packages" and bad.status == "fail"
    assert bad.summary == "torchvision 0.20.1 requires torch==2.5.1, 2.13.0+cpu is installed"
    assert bad.fix.startswith("pip install -U torchvision   # a release made for torch 2.13.0+cpu")
    other = fine | {
        "transformers": ("4.30.0", ["requests", "tokenizers<0.14,>=0.11.1"]),
        "tokenizers": ("0.23.3", []),
    }
    found = check_packages(other)  # transformers is part of the training stack: its conflicts fail too
    assert found.status == "fail" and "transformers 4.30.0 requires requests, not installed" in found.summary
    assert 'pip install "requests"' in found.fix.splitlines()
    elsewhere = fine | {"rich": ("13.0.0", ["pygments<3.0.0,>=2.13.0"]), "pygments": ("2.10.0", [])}
    assert check_packages(elsewhere).status == "warn"  # not the training stack's: a warning


def test_a_cuda_visible_devices_entry_cuda_cannot_read_warns_saying_which_gpus_stay():
    from torchdoctor.system import check_visible_devices

    for quiet in ({}, {"CUDA_VISIBLE_DEVICES": ""}, {"CUDA_VISIBLE_DEVICES": "-1"}):
        assert check_visible_devices(quiet) is None, quiet
    for fine in ("0", "0,1,2,3", "GPU-8f6a1c2e-1b2c-4d5e-9f00-123456789abc", "MIG-1a2b3c4d-5e6f"):
        assert check_visible_devices({"CUDA_VISIBLE_DEVICES": fine}).status == "ok", fine
    none = check_visible_devices({"CUDA_VISIBLE_DEVICES": "abc"})
    assert none.id == "sys.visible_devices" and none.status == "warn" and "no GPU is visible" in none.summary
    some = check_visible_devices({"CUDA_VISIBLE_DEVICES": "0,1,gpu2,3"})
    assert "cannot read 'gpu2'" in some.summary and "only 0,1 stay visible" in some.summary
    assert "only 0 stays visible" in check_visible_devices({"CUDA_VISIBLE_DEVICES": "0,abc"}).summary
    assert "unset CUDA_VISIBLE_DEVICES" in some.fix


def test_a_gpu_named_twice_in_cuda_visible_devices_fails_as_no_gpu_at_all():
    # torch/cuda/__init__.py _parse_visible_devices: "Repeated ordinal results in empty set", as CUDA does
    from torchdoctor.system import check_visible_devices

    twice = check_visible_devices({"CUDA_VISIBLE_DEVICES": "0,0"})
    assert (
        twice.status == "fail" and "names GPU 0 twice" in twice.summary and "no GPU at all" in twice.summary
    )
    assert twice.fix.startswith("export CUDA_VISIBLE_DEVICES=0 ")
    assert check_visible_devices({"CUDA_VISIBLE_DEVICES": "1,00,2,0"}).fix.startswith(
        "export CUDA_VISIBLE_DEVICES=1,00,2 "
    )
    # a repeat after an entry CUDA cannot read is never reached: that entry's warning stands
    assert check_visible_devices({"CUDA_VISIBLE_DEVICES": "0,gpu1,0"}).status == "warn"
