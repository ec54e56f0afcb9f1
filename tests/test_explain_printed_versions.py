"""The release of each package a log prints as installed (explain/printed_versions.py), read from the reports as
the tools print them, and what it changes where the release tables decide a reading: a release that has the name
makes the reading likely, another installation named; one that lacks it is named in the reading."""

from __future__ import annotations

from pathlib import Path

import pytest
from explaining import called_from, certain, leads_with

from torchdoctor.explain.printed_versions import printed

SITE = "/home/ana/.venv/lib/python3.10/site-packages"

# transformers-cli env (transformers 4.41's commands/env.py), as pasted in its issue template
TRANSFORMERS_ENV = """\
Copy-and-paste the text below in your GitHub issue and FILL OUT the two last points.

- `transformers` version: 4.41.2
- Platform: Linux-5.15.0-105-generic-x86_64-with-glibc2.35
- Python version: 3.10.14
- Huggingface_hub version: 0.23.3
- Safetensors version: 0.4.3
- Accelerate version: 0.30.1
- Accelerate config: \tnot found
- PyTorch version (GPU?): 2.3.1+cu121 (True)
- Tensorflow version (GPU?): not installed (NA)
- Flax version (CPU?/GPU?/TPU?): not installed (NA)
- Jax version: not installed
- Using GPU in script?: <fill in>
"""

# accelerate env (commands/env.py)
ACCELERATE_ENV = """\
- `Accelerate` version: 0.30.1
- Platform: Linux-5.15.0-105-generic-x86_64-with-glibc2.35
- `accelerate` bash location: /home/ana/.venv/bin/accelerate
- Python version: 3.10.14
- Numpy version: 1.26.4
- PyTorch version (GPU?): 2.3.1+cu121 (True)
- PyTorch XPU available: False
- System RAM: 251.53 GB
- `Accelerate` default config:
\tNot found
"""

# ds_report's general environment info (deepspeed/env_report.py)
DS_REPORT = """\
DeepSpeed general environment info:
torch install path ............... ['/home/ana/.venv/lib/python3.10/site-packages/torch']
torch version .................... 2.1.0+cu121
deepspeed install path ........... ['/home/ana/.venv/lib/python3.10/site-packages/deepspeed']
deepspeed info ................... 0.12.3, unknown, unknown
torch cuda version ............... 12.1
torch hip version ................ None
nvcc version ..................... 12.1
deepspeed wheel compiled w. ...... torch 2.1, cuda 12.1
shared memory (/dev/shm) size .... 125.80 GB
"""

# python -m torch.utils.collect_env
COLLECT_ENV = """\
PyTorch version: 2.1.0+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
ROCM used to build PyTorch: N/A

Versions of relevant libraries:
[pip3] numpy==1.26.4
[pip3] torch==2.1.0
[pip3] triton==2.1.0
[conda] numpy                     1.26.4                   pypi_0    pypi
[conda] peft                      0.10.0                   pypi_0    pypi
"""

# Lightning's bug template, its older fields and its collect_env_details' tree
LIGHTNING_TEMPLATE = """\
- PyTorch Lightning Version (e.g., 1.5.0): 1.9.5
- PyTorch Version (e.g., 2.0): 1.13.1
- Python version (e.g., 3.9): 3.10
"""
LIGHTNING_DETAILS = """\
* Lightning:
\t- lightning:          2.2.1
\t- lightning-utilities: 0.11.2
\t- pytorch-lightning:  2.2.1
\t- torch:              2.2.1
\t- torchmetrics:       1.3.2
"""

# pip list, pip's install output and its conflict report
PIP_LIST = """\
Package                  Version
------------------------ ----------
accelerate               0.30.1
bitsandbytes             0.43.1
flash-attn               2.5.8
transformers             4.41.2
trl                      0.8.6
"""
PIP_INSTALL = """\
Requirement already satisfied: datasets in ./.venv/lib/python3.10/site-packages (2.19.1)
Successfully installed peft-0.11.1 tokenizers-0.19.1 transformers-4.41.2
ERROR: pip's dependency resolver does not currently take into account all the packages that are installed.
trl 0.8.6 requires transformers>=4.31.0, but you have transformers 4.30.2 which is incompatible.
"""


@pytest.mark.parametrize(
    ("text", "versions"),
    [
        (
            TRANSFORMERS_ENV,
            {
                "transformers": "4.41.2",
                "huggingface_hub": "0.23.3",
                "accelerate": "0.30.1",
                "torch": "2.3.1+cu121",
            },
        ),
        (ACCELERATE_ENV, {"accelerate": "0.30.1", "numpy": "1.26.4", "torch": "2.3.1+cu121"}),
        (DS_REPORT, {"torch": "2.1.0+cu121", "deepspeed": "0.12.3", "cuda": "12.1"}),
        (COLLECT_ENV, {"torch": "2.1.0+cu121", "cuda": "12.1", "numpy": "1.26.4", "peft": "0.10.0"}),
        (LIGHTNING_TEMPLATE, {"pytorch_lightning": "1.9.5", "torch": "1.13.1"}),
        (
            LIGHTNING_DETAILS,
            {"lightning": "2.2.1", "pytorch_lightning": "2.2.1", "torch": "2.2.1", "torchmetrics": "1.3.2"},
        ),
        (
            PIP_LIST,
            {
                "accelerate": "0.30.1",
                "bitsandbytes": "0.43.1",
                "flash_attn": "2.5.8",
                "transformers": "4.41.2",
                "trl": "0.8.6",
            },
        ),
        (PIP_INSTALL, {"datasets": "2.19.1", "peft": "0.11.1", "transformers": "4.41.2"}),
        ("NCCL INFO NCCL version 2.18.1+cuda12.1\n", {"nccl": "2.18.1+cuda12.1"}),
        ("[pip3] nvidia-nccl-cu12==2.20.5\n", {"nccl": "2.20.5"}),
    ],
    ids=[
        "transformers-env",
        "accelerate-env",
        "ds_report",
        "collect_env",
        "lightning-template",
        "lightning-details",
        "pip-list",
        "pip-install",
        "nccl-info",
        "nccl-wheel",
    ],
)
def test_the_versions_each_tool_prints(text, versions):
    assert printed(text) == versions


@pytest.mark.parametrize(
    "text",
    [
        "pip install transformers==4.30.0",
        "$ pip install 'transformers>=4.30' accelerate==0.20.3",
        "Collecting transformers==4.30.0",
        "ERROR: Could not find a version that satisfies the requirement torch==2.1.0 (from versions: 2.2.0)",
        "trl 0.8.6 requires transformers>=4.31.0",
        "xformers 0.0.23 requires torch==2.1.1",
        "transformers>=4.31.0",
        "ImportError: peft>=0.5.0 is required for a normal functioning of this module, but found peft==0.4.0.",
        "    if torch.__version__ >= '2.1':",
        "DeepSpeed version: not installed",
        "transformers 4.30 broke the tokenizer, see the release notes for the details of the change",
        # tests/fixtures/gpu/overflow-overhead.txt: a table of timings, not a package list
        "transformers                       590.1    2.33x",
    ],
)
def test_a_version_asked_for_or_talked_about_is_not_an_installed_one(text):
    assert printed(text + "\n") == {}


# a requirement printed as a row of its own: a requirements file shown with cat, a freeze written to a file and
# printed later, a Dockerfile's pin as docker build echoes it, conda's spec; what was asked, not what is installed
REQUESTED = [
    "torch==2.1.0",
    "$ cat requirements.txt\ntorch==2.1.0\ntransformers==4.30.0\naccelerate>=0.20.3",
    "$ pip freeze > requirements.txt\n$ cat requirements.txt\nnumpy==1.26.4\npeft==0.10.0",
    "Step 5/9 : RUN pip install torch==2.1.0 torchvision==0.16.0",
    "RUN pip install --no-cache-dir torch==2.1.0",
    "$ conda install pytorch=2.1.0 torchvision=0.16.0 -c pytorch",
]


@pytest.mark.parametrize("text", REQUESTED)
def test_a_requirement_printed_as_a_row_is_not_an_installed_release(text):
    assert printed(text + "\n") == {}


def test_what_pip_installed_from_a_requirements_file_is_read_from_pips_own_words():
    log = (
        "$ cat requirements.txt\ntorch==2.1.0\ntransformers>=4.30\n$ pip install -r requirements.txt\n"
        "Collecting torch==2.1.0\nSuccessfully installed torch-2.1.0 transformers-4.41.2\n"
    )
    assert printed(log) == {"torch": "2.1.0", "transformers": "4.41.2"}


def test_pip_show_names_the_installed_release():
    show = (
        "Name: transformers\nVersion: 4.41.2\nSummary: State-of-the-art Machine Learning for JAX, PyTorch\n"
    )
    assert printed(show) == {"transformers": "4.41.2"}
    assert printed("Name: transformers\nSummary: x\nVersion: 4.41.2\n") == {}  # another package's row


@pytest.mark.usefixtures("every_message_seen")
def test_a_pinned_torch_is_not_the_installed_torch_of_a_reading():
    # torchrun came with torch 1.10: a requirement of 1.9.0 is not a torch without torchrun (the launcher off
    # PATH stays certain); the release pip or collect_env prints is
    found = certain("torch==1.9.0\nbash: torchrun: command not found\n", "broken_install")
    assert "on PATH" in found.fix
    # a minimum the code states, beside a pin: the installed release is not named from the pin
    found = certain("torch==2.5.1\nImportError: FSDP2 requires PyTorch >= 2.6.0\n", "dependency_version")
    assert "2.5.1 is installed" not in found.summary, found.summary
    found = certain(
        "Successfully installed torch-2.5.1\nImportError: FSDP2 requires PyTorch >= 2.6.0\n",
        "dependency_version",
    )
    assert "2.5.1 is installed" in found.summary, found.summary


def test_nccl_s_own_line_in_a_recorded_debug_log():
    # NCCL_DEBUG=INFO of a real run (tests/fixtures/gpu), rank prefixes and all
    log = (Path(__file__).parent / "fixtures" / "gpu" / "net-nccl-debug-rank0.log").read_text()
    assert printed(log) == {"nccl": "2.28.9+cuda13.0"}


def test_a_container_builds_release_is_read_whole():
    # NVIDIA's PyTorch containers print a pre-release with a local part: the summary quotes it as printed
    assert printed("PyTorch version: 2.6.0a0+ecf3bae40a.nv25.01\n") == {"torch": "2.6.0a0+ecf3bae40a.nv25.01"}
    assert printed("torch==2.1.0+cu121.\n") == {}  # a sentence's full stop is no part of a pip freeze row


def test_the_first_release_printed_is_the_one_read():
    assert printed("[pip3] transformers==4.41.2\n- `transformers` version: 4.30.0\n") == {
        "transformers": "4.41.2"
    }


# --- a name the release tables place (api_history.tsv): transformers' LlamaForCausalLM came in 4.28 -------------

LLAMA = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/project/train.py", line 3, in <module>\n'
    "    from transformers import LlamaForCausalLM, LlamaTokenizer\n"
    "ImportError: cannot import name 'LlamaForCausalLM' from 'transformers' "
    f"({SITE}/transformers/__init__.py)\n"
)


@pytest.mark.parametrize("report", [TRANSFORMERS_ENV, PIP_LIST], ids=["transformers-env", "pip-list"])
def test_a_name_the_printed_transformers_has_is_only_likely_another_installation(report):
    found = leads_with(
        report + LLAMA,
        "dependency_version",
        "likely",
        ["which transformers has had since 4.28", "transformers 4.41.2 installed", "transformers.__file__"],
    )
    assert "older than the code" not in found.summary


def test_a_name_the_printed_transformers_lacks_is_named_with_that_release():
    found = certain("- `transformers` version: 4.27.4\n" + LLAMA, "dependency_version")
    assert "the installed transformers 4.27.4 is older" in found.summary, found.summary


def test_with_no_transformers_printed_the_reading_is_as_before():
    found = certain(LLAMA, "dependency_version")
    assert "the installed transformers is older" in found.summary, found.summary


def test_a_wished_for_transformers_is_not_read_as_the_installed_one():
    # the command asks for 4.41.2; nothing says it was installed: the table's reading stands
    found = certain("$ pip install transformers==4.41.2\n" + LLAMA, "dependency_version")
    assert "likely another one" not in found.summary, found.summary


# --- a member (api_members.tsv): LlamaAttention.rotary_emb went in transformers 4.48 ---------------------------

ROTARY = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/project/train.py", line 88, in <module>\n'
    "    trainer.train()\n"
    f'  File "{SITE}/transformers/models/llama/modeling_llama.py", line 640, in forward\n'
    "    hidden_states, self_attn_weights, present_key_value = self.self_attn(\n"
    '  File "/home/ana/project/llama_patch.py", line 41, in forward\n'
    "    cos, sin = self.rotary_emb(value_states, position_ids)\n"
    f'  File "{SITE}/torch/nn/modules/module.py", line 1931, in __getattr__\n'
    "    raise AttributeError(\n"
    "AttributeError: 'LlamaAttention' object has no attribute 'rotary_emb'\n"
)


def test_a_member_the_printed_release_has_is_only_likely_another_installation_or_class():
    leads_with(
        "- `transformers` version: 4.46.3\n" + ROTARY,
        "dependency_version",
        "likely",
        ["which transformers 4.46.3 has", "likely another one", "the project's own LlamaAttention"],
    )


def test_a_member_the_printed_release_lacks_is_certain_and_named():
    leads_with(
        "transformers             4.49.0\n" + ROTARY,
        "dependency_version",
        "certain",
        ["the installed transformers 4.49.0 is newer", "transformers<4.48"],
    )


# --- a keyword (api_keywords.tsv): Trainer's processing_class came in transformers 4.46 --------------------------

PROCESSING_CLASS = called_from(
    f"{SITE}/trl/trainer/sft_trainer.py",
    "super().__init__(model=model, args=args, processing_class=processing_class)",
    "Trainer.__init__() got an unexpected keyword argument 'processing_class'",
)


def test_a_keyword_the_printed_release_takes_is_only_likely_another_installation():
    leads_with(
        "[pip3] transformers==4.46.3\n" + PROCESSING_CLASS,
        "dependency_version",
        "likely",
        ["which it takes in transformers 4.46.3", "likely another one", "transformers.__file__"],
    )


def test_a_keyword_the_printed_release_lacks_names_it():
    leads_with(
        TRANSFORMERS_ENV + PROCESSING_CLASS,
        "dependency_version",
        "certain",
        ["the installed transformers 4.41.2 is older", "transformers>=4.46", "pip show trl transformers"],
    )


# --- a signature (api_signatures.tsv): torch 2.7 removed the LR schedulers' verbose -----------------------------

STEPLR = called_from(
    "/home/ana/project/train.py",
    "scheduler = StepLR(optimizer, 30, 0.1, -1, True)",
    "StepLR.__init__() takes from 3 to 5 positional arguments but 6 were given",
)


def test_a_call_the_printed_torch_takes_is_only_likely_another_installation():
    found = leads_with(
        DS_REPORT + STEPLR,
        "dependency_version",
        "likely",
        ["that torch 2.1.0+cu121 takes", "likely another one", "torch.__file__"],
    )
    assert "torch<2.7" not in found.fix


def test_a_call_the_printed_torch_refuses_names_it():
    leads_with(
        "PyTorch version: 2.7.1+cu126\n" + STEPLR,
        "dependency_version",
        "likely",
        ["the log shows torch 2.7.1+cu126 installed, one of those", "torch<2.7"],
    )


# --- pip freeze printed in the terminal: its command line above it, only the rows a freeze prints between --------

# as pip freeze prints an environment (pip/_internal/operations/freeze.py: "name==version", a direct URL's
# "name @ url", an editable's "-e <vcs url>"), under the command that ran it
FREEZE_IN_A_TERMINAL = [
    (
        '(venv) ana@gpu01:~/proj$ pip freeze | grep -i -E "torch|transformers"\n'
        "torch==2.1.0+cu121\ntorchvision==0.16.0+cu121\ntransformers==4.30.0\n",
        {"torch": "2.1.0+cu121", "torchvision": "0.16.0+cu121", "transformers": "4.30.0"},
    ),
    (
        "$ python -m pip freeze\naccelerate==0.20.3\n"
        "certifi @ file:///croot/certifi_1690232220950/work/certifi\n"
        "-e git+https://github.com/ana/proj.git@4f1c2e0#egg=proj\nnumpy==1.26.4\ntorch==2.1.0\n",
        {"accelerate": "0.20.3", "numpy": "1.26.4", "torch": "2.1.0"},
    ),
    ("In [3]: !pip list --format=freeze\npeft==0.10.0\r\ntrl==0.8.6\r\n", {"peft": "0.10.0", "trl": "0.8.6"}),
]


@pytest.mark.parametrize(
    ("text", "versions"), FREEZE_IN_A_TERMINAL, ids=["grep", "direct-and-editable", "list"]
)
def test_a_freeze_printed_under_its_command_line_is_what_is_installed(text, versions):
    assert printed(text) == versions


@pytest.mark.parametrize(
    "text",
    [
        # written away, then a requirements file shown: what was asked
        "$ pip freeze > requirements.txt\n$ cat requirements.txt\nnumpy==1.26.4\npeft==0.10.0\n",
        # a requirements file's own lines end the block: a range, pip-compile's "# via", an "-r"
        "$ pip freeze\naccelerate>=0.20.3\ntorch==2.1.0\n",
        "$ pip freeze\n    # via accelerate\ntorch==2.1.0\n",
        "$ pip freeze\n-r base.txt\ntorch==2.1.0\n",
        # a row under another command: a requirements file with cat, pip's own download line
        "$ cat requirements.txt\ntorch==2.1.0\n",
        "$ pip download torch==2.1.0\ntorch==2.1.0\n",
    ],
)
def test_rows_a_freeze_is_not_seen_printing_stay_requirements(text):
    assert printed(text) == {}


def test_a_freeze_under_its_command_names_the_installed_release_and_a_cat_does_not():
    freeze = "(venv) $ pip freeze | grep transformers\ntransformers==4.27.4\n"
    found = certain(freeze + LLAMA, "dependency_version")
    assert "the installed transformers 4.27.4 is older" in found.summary, found.summary
    found = certain("(venv) $ cat requirements.txt\ntransformers==4.27.4\n" + LLAMA, "dependency_version")
    assert "4.27.4" not in found.summary, found.summary
