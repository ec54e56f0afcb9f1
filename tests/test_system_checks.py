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
