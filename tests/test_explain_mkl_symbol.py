"""A conda PyTorch's libtorch_cpu.so needs Intel MKL's JIT-profiling symbols (iJIT_*), which mkl 2024.1 no longer
exports (pytorch#123097): glibc's "undefined symbol" for one of them is a dependency's version the installed torch
does not work with (dependency_version), with the MKL pin as its fix, not an extension built against another
torch."""

from __future__ import annotations

import pytest
from explaining import explained, leads_with, template

SITE = "/home/user/miniconda3/envs/train/lib/python3.10/site-packages"
IMPORT = (
    "Traceback (most recent call last):\n"
    '  File "/home/user/train.py", line 1, in <module>\n'
    "    import torch\n"
    f'  File "{SITE}/torch/__init__.py", line 237, in <module>\n'
    "    from torch._C import *  # noqa: F403\n"
)


@pytest.mark.parametrize("symbol", ["iJIT_NotifyEvent", "iJIT_IsProfilingActive", "iJIT_GetNewMethodID"])
def test_mkl_without_the_jit_profiling_symbols_is_a_dependency_version_pinned_below_2024_1(symbol):
    line = template("system:ld-undefined-symbol", f"{SITE}/torch/lib/libtorch_cpu.so", symbol)
    found = leads_with(
        IMPORT + line,
        "dependency_version",
        "certain",
        [f"libtorch_cpu.so needs {symbol}", "conda install mkl==2024.0", "pip install torch"],
    )
    assert "extension" not in found.summary


def test_another_undefined_symbol_stays_an_extensions_near_miss():
    # torch's own C++ symbol missing under an extension is still the extension built against another torch
    line = template("system:ld-undefined-symbol", f"{SITE}/flash_attn_2_cuda.so", "_ZN3c104cuda9SetDeviceEi")
    found = explained(IMPORT + line + "\n")
    assert found.id == "log.extension_import", found.summary
