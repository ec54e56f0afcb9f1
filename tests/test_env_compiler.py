"""The host compiler against the newest gcc a toolkit's nvcc accepts — fake gcc/nvcc scripts on PATH
print the real `--version` outputs; the limit comes from real 'unsupported GNU version' errors."""

import re
import shutil
import subprocess

import pytest
from env_fakes import environ, printing, toolkit

from torchdoctor.env.checks import check_host_compiler
from torchdoctor.env.compiler import compiler_version, newest_gcc, newest_gcc_from_table
from torchdoctor.env.machine import scan
from torchdoctor.env.toolkits import inspect_toolkit


@pytest.mark.parametrize(
    "nvcc_fixture, newest",
    [
        ("nvcc-10.2.txt", 8),
        ("nvcc-11.0.txt", 9),
        ("nvcc-11.1.txt", 10),
        ("nvcc-11.3.txt", 10),
        ("nvcc-11.4.txt", 10),  # V11.4.48 is 11.4.0, which kept 11.1's limit
        ("nvcc-12.5.txt", 13),
        ("nvcc-12.6.txt", 13),
    ],
)
def test_table_limit_for_real_nvcc_versions(tmp_path, nvcc_fixture, newest):
    found = inspect_toolkit(str(toolkit(tmp_path / "cuda", nvcc=nvcc_fixture)), "test")
    assert newest_gcc(found) == (newest, "table")


def test_table_rows_at_their_edges():
    assert newest_gcc_from_table("11.4", "11.4.100") == 11  # an 11.4 update
    assert newest_gcc_from_table("11.8", "11.8.89") == 11
    assert newest_gcc_from_table("12.2") == 12
    assert newest_gcc_from_table("12.3") is None  # read that toolkit's host_config.h
    assert newest_gcc_from_table("12.8", "12.8.61") == 14
    assert newest_gcc_from_table("13.0") == 15


@pytest.mark.parametrize(
    "error_fixture, version_json, newest",
    [
        ("nvcc-gcc-too-new-cuda10-gcc9.txt", "10.2.89", 8),
        ("nvcc-gcc-too-new-cuda12-gcc13.txt", "12.2.140", 12),
        ("nvcc-gcc-too-new-cuda13-gcc16.txt", "13.0.88", 15),
    ],
)
def test_toolkits_own_guard_agrees_with_the_table(tmp_path, error_fixture, version_json, newest):
    home = toolkit(tmp_path / "cuda", version_json=version_json, gcc_error=error_fixture)
    found = inspect_toolkit(str(home), "test")
    assert newest_gcc(found) == (newest, "host_config.h")
    assert newest_gcc_from_table(found.version, found.full_version) == newest


def test_12_3_without_a_header_assumes_the_stricter_limit(tmp_path):
    found = inspect_toolkit(str(toolkit(tmp_path / "cuda", version_json="12.3.107")), "test")
    newest, source = newest_gcc(found)
    assert newest == 12 and source.startswith("assumed")


def test_gcc_versions_read_from_real_outputs(tmp_path):
    ubuntu = printing(tmp_path / "gcc", "gcc-13.1-ubuntu.txt")
    conda = printing(tmp_path / "x86_64-conda-linux-gnu-gcc", "gcc-11.2-anaconda.txt")
    assert compiler_version(str(ubuntu)) == ("gcc", "13.1.0")
    assert compiler_version(str(conda)) == ("gcc", "11.2.0")


@pytest.fixture
def too_new(tmp_path):
    """CUDA 12.x whose host_config.h stops at gcc 12 (the Fedora report), gcc 13.1 first on PATH,
    and a gcc-11/g++-11 pair in the root's /usr/bin."""
    root = tmp_path / "root"
    home = toolkit(
        root / "usr/local/cuda-12.2", version_json="12.2.140", gcc_error="nvcc-gcc-too-new-cuda12-gcc13.txt"
    )
    printing(home / "bin" / "nvcc", "nvcc-12.5.txt")
    bin_dir = tmp_path / "bin"
    printing(bin_dir / "gcc", "gcc-13.1-ubuntu.txt")
    printing(root / "usr/bin/gcc-11", "gcc-11.2-anaconda.txt")
    printing(root / "usr/bin/g++-11", "gcc-11.2-anaconda.txt")
    return root, home, bin_dir


def test_gcc_too_new_fails_with_the_symlink_fix(too_new):
    root, home, bin_dir = too_new
    env = environ(bin_dir, CUDA_HOME=home)
    finding = check_host_compiler(scan(env, root))
    assert finding.status == "fail"
    assert re.search(
        r"gcc 13\.1\.0 \(\S+/bin/gcc, on PATH\) is newer than CUDA 12\.2's nvcc accepts \(gcc 12 at most\)",
        finding.summary,
    )
    assert finding.details["newest_gcc_from"] == "host_config.h"
    lines = finding.fix.splitlines()
    assert lines[0] == f"ln -s {root}/usr/bin/gcc-11 {home}/bin/gcc"
    assert lines[1] == f"ln -s {root}/usr/bin/g++-11 {home}/bin/g++"
    assert (
        lines[-1]
        == f"export CC={root}/usr/bin/gcc-11 CXX={root}/usr/bin/g++-11 CUDAHOSTCXX={root}/usr/bin/g++-11"
    )


def test_running_the_printed_fix_makes_the_check_pass(too_new):
    root, home, bin_dir = too_new
    env = environ(bin_dir, CUDA_HOME=home)
    fix = check_host_compiler(scan(env, root)).fix
    symlinks = "\n".join(line for line in fix.splitlines() if line.startswith("ln -s"))
    subprocess.run([shutil.which("sh") or "/bin/sh", "-ec", symlinks], check=True, timeout=30)
    after = check_host_compiler(scan(env, root))
    assert after.status == "ok", after.summary
    assert after.summary.startswith(
        f"gcc 11.2.0 ({home}/bin/gcc, in the toolkit's bin/), gcc 11.2.0 ({home}/bin/g++, in the toolkit's bin/)"
    )


def test_cc_too_new_is_fixed_through_cc(too_new):
    root, home, bin_dir = too_new
    env = environ(bin_dir, CUDA_HOME=home, CC=bin_dir / "gcc")
    finding = check_host_compiler(scan(env, root))
    assert finding.status == "fail" and f"({bin_dir}/gcc, CC)" in finding.summary
    assert finding.fix.splitlines()[-1].startswith(f"export CC={root}/usr/bin/gcc-11")
    assert not any(line.startswith("ln -s") for line in finding.fix.splitlines())


def test_cxx_that_torch_checks_is_fixed_through_the_variables(too_new):
    root, home, bin_dir = too_new
    (bin_dir / "gcc").unlink()
    printing(bin_dir / "gcc", "gcc-11.2-anaconda.txt")  # nvcc's own gcc is fine now
    printing(bin_dir / "c++", "gcc-13.1-ubuntu.txt")  # but torch holds c++ to the same bounds
    finding = check_host_compiler(scan(environ(bin_dir, CUDA_HOME=home), root))
    assert finding.status == "fail" and f"gcc 13.1.0 ({bin_dir}/c++, c++ on PATH)" in finding.summary
    assert finding.fix == (
        f"export CC={root}/usr/bin/gcc-11 CXX={root}/usr/bin/g++-11 CUDAHOSTCXX={root}/usr/bin/g++-11"
    )
    fixed = environ(bin_dir, CUDA_HOME=home, CC=root / "usr/bin/gcc-11", CXX=root / "usr/bin/g++-11")
    assert check_host_compiler(scan(fixed, root)).status == "ok"


def test_no_older_gcc_installed_prints_the_install_line(tmp_path):
    root = tmp_path / "root"
    home = toolkit(root / "usr/local/cuda-10.2", nvcc="nvcc-10.2.txt", version_txt="10.2.89")
    printing(tmp_path / "bin" / "gcc", "gcc-11.2-anaconda.txt")
    finding = check_host_compiler(scan(environ(tmp_path / "bin", CUDA_HOME=home), root))
    assert finding.status == "fail" and "gcc 8 at most" in finding.summary
    assert finding.fix.splitlines()[:2] == [
        "sudo apt install gcc-8 g++-8   # no gcc-8 or older found here",
        f"ln -s /usr/bin/gcc-8 {home}/bin/gcc",
    ]


def test_no_toolkit_skips(tmp_path):
    assert check_host_compiler(scan(environ(tmp_path), tmp_path)).status == "skip"


@pytest.mark.skipif(not (shutil.which("nvcc") and shutil.which("gcc")), reason="needs a real nvcc and gcc")
def test_this_machines_real_nvcc_and_gcc():
    finding = check_host_compiler(scan())
    cuda = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, timeout=30).stdout
    gcc = subprocess.run(
        ["gcc", "-dumpfullversion"], capture_output=True, text=True, timeout=30
    ).stdout.strip()
    assert finding.details["cuda"] == re.search(r"release (\d+\.\d+)", cuda).group(1)
    assert any(c["version"] == gcc for c in finding.details["compilers"])
    accepted = int(gcc.split(".")[0]) <= finding.details["newest_gcc"]
    assert finding.status == ("ok" if accepted else "fail")
