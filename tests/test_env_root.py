"""``--root DIR`` means the image, all of it: no tool of the host (``nvcc``, ``gcc`` on the host's PATH,
``CUDA_HOME``, ``CC``) takes part in the verdict about the image."""

import json
import os

import pytest
from env_fakes import printing, toolkit

from torchdoctor.env.machine import under_root


@pytest.fixture
def host_and_image(tmp_path):
    host = toolkit(tmp_path / "host/cuda-12.6", nvcc="nvcc-12.6.txt", version_json="12.6.77")
    printing(tmp_path / "host/bin/gcc", "gcc-13.1-ubuntu.txt")
    image = tmp_path / "image"
    toolkit(image / "usr/local/cuda-11.3", nvcc="nvcc-11.3.txt", version_json="11.3.109")
    (image / "usr/local/cuda").symlink_to("cuda-11.3")
    printing(image / "usr/bin/gcc", "gcc-11.2-anaconda.txt")
    return tmp_path / "host", host, image


@pytest.mark.parametrize(
    "variables",
    [
        {},  # the host's nvcc and gcc on PATH
        {"CUDA_HOME": "{cuda}"},
        {"CUDA_PATH": "{cuda}"},
        {"CC": "{host}/bin/gcc", "CXX": "{host}/bin/gcc"},
        {"LD_LIBRARY_PATH": "{cuda}/lib64"},
    ],
    ids=["PATH", "CUDA_HOME", "CUDA_PATH", "CC", "LD_LIBRARY_PATH"],
)
def test_nothing_of_the_host_decides_about_the_image(cli, host_and_image, variables, monkeypatch, capsys):
    host, cuda, image = host_and_image
    env = {
        "PATH": f"{cuda}/bin{os.pathsep}{host}/bin{os.pathsep}{os.environ['PATH']}",
        **{name: value.format(cuda=cuda, host=host) for name, value in variables.items()},
    }
    args = ["env", "--json", "--root", str(image)]
    if not variables:  # the host's PATH: in a real process, as a user runs it
        result = cli(*args, env=env, timeout=180)
        status, out, err = result.returncode, result.stdout, result.stderr
    else:  # the same `main` in this process, which has torch imported already (3 s of CPU a process)
        from torchdoctor.cli import main

        for name, value in env.items():
            monkeypatch.setenv(name, value)
        status = main(args)
        out, err = capsys.readouterr()
    assert status in (0, 1), err
    findings = {f["id"]: f for f in json.loads(out)["findings"]}
    in_the_image = out.replace(f"{image}{host}", "IMAGE")  # the host's path, looked for in the image
    assert str(host) not in in_the_image  # not one path of the host's, in any verdict or fact
    assert (
        "CUDA 11.3" in findings["env.toolkits"]["summary"]
        and "12.6" not in findings["env.toolkits"]["summary"]
    )
    if not {"CUDA_HOME", "CUDA_PATH", "CC"} & set(variables):  # those name a path the image lacks: no toolkit
        assert f"{image}/usr/bin/gcc" in findings["env.host_compiler"]["summary"]


def test_paths_move_inside_the_root_and_bare_names_stay():
    moved = under_root({"PATH": "/opt/bin:/img/usr/bin", "CC": "gcc", "CUDA_HOME": "/usr/local/cuda"}, "/img")
    assert moved["PATH"].split(os.pathsep)[:2] == ["/img/opt/bin", "/img/usr/bin"]
    assert "/img/usr/local/cuda/bin" in moved["PATH"].split(os.pathsep)
    assert moved["CC"] == "gcc" and moved["CUDA_HOME"] == "/img/usr/local/cuda"
    assert under_root({"PATH": "/usr/bin"}, "/") == {"PATH": "/usr/bin"}
