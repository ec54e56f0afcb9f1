import json
import os
import random
import subprocess
import sys

import numpy
import pytest
import torch

from torchdoctor import seed_everything

DRAWS = """
import json, random, sys
import numpy, torch
from torchdoctor import seed_everything
seed_everything(int(sys.argv[1]))
print(json.dumps([random.random(), float(numpy.random.rand()), torch.rand(3).tolist()]))
"""


def draws():
    return [random.random(), float(numpy.random.rand()), torch.rand(3).tolist()]


def test_seeds_python_numpy_and_torch():
    assert seed_everything(1234) == 1234
    first = draws()
    seed_everything(1234)
    assert draws() == first
    seed_everything(1235)
    assert draws()[0] != first[0] and draws()[1] != first[1]


def test_another_process_draws_the_same_numbers_whatever_its_hash_seed():
    seed_everything(77)
    here = draws()
    env = dict(os.environ, PYTHONHASHSEED="12345")
    done = subprocess.run(
        [sys.executable, "-c", DRAWS, "77"], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    assert json.loads(done.stdout) == here


def test_leaves_the_environment_alone():
    before = dict(os.environ)
    seed_everything(0)
    assert dict(os.environ) == before  # PYTHONHASHSEED included: documented, not set


def test_accepts_numpy_integers_and_names_bad_seeds():
    assert seed_everything(numpy.int64(5)) == 5
    with pytest.raises(ValueError, match=r"seed=-1: expected an int between 0 and 4294967295"):
        seed_everything(-1)
    with pytest.raises(ValueError, match=r"seed=4294967296"):
        seed_everything(2**32)
    with pytest.raises(TypeError, match=r"seed='42'"):
        seed_everything("42")
    with pytest.raises(TypeError, match=r"seed=4.2"):
        seed_everything(4.2)
