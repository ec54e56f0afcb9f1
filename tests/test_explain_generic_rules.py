"""Rules read from a log's structure rather than one message: the compiler's first error line of a build
(kinds/compiler.py), every launcher's summary of a worker that failed (kinds/exits.py), an exception raised by
DeepSpeed's config checks (kinds/config_checks.py). Each on the real text its source prints (the catalog's
templates, filled) or a real train log, and each silent, or only "likely", where its evidence is incomplete."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")

# -- a build: the compiler's first error line names the cause class ------------------------------------------


@pytest.mark.parametrize(
    ("header", "said", "fixed"),
    [
        # DeepSpeed's async_io op includes libaio's header: the library's development package
        ("libaio.h", "cannot find the header libaio.h", "-dev"),
        # a library vendored as a submodule: the same class, the fix names the submodule too
        ("cutlass/numeric_types.h", "cannot find the header cutlass/numeric_types.h", "git submodule update"),
        # torch's own headers, not on the include path: the build does not see the torch installed
        ("torch/extension.h", "include folders of the torch installed", "--no-build-isolation"),
        # torch's old C headers other than THC.h/TH.h (which lead with dependency_version, below): removed in 1.11
        ("THC/THCDeviceUtils.cuh", "removed in 1.11", "torch release the source was written for"),
    ],
)
def test_a_header_the_build_cannot_find_is_read_by_whose_header_it_is(header, said, fixed):
    found = explained(f"csrc/ops/op.cu:4:10: {template('system:gcc-missing-header', header)}\n")
    assert found.id == "log.cuda_build"
    assert said in found.summary and fixed in found.fix
    # which header is missing is certain, why it is missing is not (a -dev package, a path, a submodule)
    assert found.details["confidence"] == "likely"


def test_the_cuda_toolkits_own_header_stays_certain():
    found = explained(template("system:gcc-missing-header", "cuda_runtime_api.h") + "\n")
    assert found.id == "log.cuda_build" and found.details["confidence"] == "certain"
    assert "CUDA header cuda_runtime_api.h" in found.summary and "CUDA_HOME" in found.fix


def test_msvc_and_clang_say_the_same_in_their_own_words():
    msvc = explained(template("system:msvc-cannot-open-include", r"C:\src\ext.cpp", "3", "libaio.h") + "\n")
    clang = explained(
        "src/ext.cpp:3:10: " + template("system:clang-header-not-found", "sparsehash/dense_hash_map")
    )
    assert msvc.id == "log.cuda_build" and "libaio.h" in msvc.summary
    assert clang.id == "log.cuda_build" and clang.details["confidence"] == "likely"


def test_a_name_the_headers_do_not_declare_is_a_source_written_for_another_torch():
    # train/223: gcc's C front end on an extension that uses THTensor, gone from torch's headers
    found = lead("223.txt")
    # torch's old C API in the error: the version reading leads (test_explain_legacy_torch_api.py), likely
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "THTensor" in found.summary and "torch API of another release" in found.summary
    assert {"log.cuda_build", "log.library_version_bug"} <= set(found.details["alternatives"])
    assert "version" in found.fix


@pytest.mark.parametrize(
    ("ident", "values", "named", "fixed"),
    [
        # AT_CHECK itself is read as code written for a torch before 1.5 (test_explain_twenty_sixth_sample.py)
        (
            "system:gcc-not-declared-in-scope",
            ("src/nms.cpp", "23", "18", "THCudaCheck"),
            "THCudaCheck",
            "1.11",
        ),
        (
            "system:gcc-has-no-member-named",
            ("src/x.cpp", "5", "3", "at::Tensor", "data"),
            "at::Tensor",
            "data_ptr",
        ),
        ("system:msvc-undeclared-identifier", (r"C:\x\roi.cu", "12", "THCState"), "THCState", "1.11"),
    ],
)
def test_torchs_own_api_in_the_error_names_the_torch_release_it_left(ident, values, named, fixed):
    found = explained(template(ident, *values) + "\n")
    # torch's old THC API leads with the version reading (test_explain_legacy_torch_api.py); current API (at::Tensor's
    # data) stays the build's reading
    legacy = named.startswith("THC")
    assert found.id == ("log.dependency_version" if legacy else "log.cuda_build"), found.summary
    assert found.details["confidence"] == "likely"
    assert named in found.summary and fixed in found.fix
    assert "log.library_version_bug" in found.details["alternatives"]


def test_another_librarys_api_names_no_torch_release():
    text = template(
        "system:clang-no-member-named", "src/ops.cu", "88", "12", "cudaGraphExecUpdate", "global namespace"
    )
    found = explained(text + "\n")
    assert found.id == "log.cuda_build" and "headers installed" in found.summary
    assert "torch installed:" not in found.summary


@pytest.mark.parametrize(
    "text",
    [
        # prose about a compile error, no compiler's "error" on the line
        "I think the variable was not declared in this scope when building on Windows",
        # a Python error that shares words with a compiler's
        "AttributeError: type object 'Config' has no member named 'fp16'",
    ],
)
def test_the_source_error_rule_needs_the_compilers_error_line(text):
    assert explained(text + "\n").id != "log.cuda_build"


def test_the_first_compiler_error_names_the_cause_over_the_build_tools_summary():
    log = (
        "[1/2] c++ -MMD -MF ext.o.d -c /src/ext.cpp -o ext.o\n"
        "FAILED: ext.o\n"
        "/src/ext.cpp:2:10: fatal error: THC/THC.h: No such file or directory\n"
        "compilation terminated.\n"
        "ninja: build stopped: subcommand failed.\n"
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
        "RuntimeError: Error building extension 'roi_align'\n"
    )
    found = explained(log)
    # torch's removed THC.h says the source was written for a torch before 1.11 (kinds/version_refusals.py)
    assert found.id == "log.dependency_version" and "THC/THC.h" in found.summary and "1.11" in found.fix
    # ninja's CalledProcessError is a build step's report, not a worker's: no launcher summary is read
    assert all(f.id != "log.child_failed" for f in _all(log))


# -- a launcher: the worker that failed, and how it ended ------------------------------------------------------


def _all(text: str):
    import io

    from torchdoctor.explain.diagnose import explain

    return explain(["-"], stdin=io.BytesIO(text.encode()))


@pytest.mark.parametrize(
    ("text", "launcher"),
    [
        # deepspeed/launcher/launch.py sigkill_handler, in DeepSpeed's log format
        (
            "[2024-01-01 00:00:00,000] [ERROR] [launch.py:321:sigkill_handler] "
            + template(
                "deepspeed:exits-with-return-code",
                "['/usr/bin/python', '-u', 'train.py', '--local_rank=0']",
                "1",
            ),
            "deepspeed launcher",
        ),
        # accelerate/commands/launch.py raises CPython's CalledProcessError for its worker
        (template("system:subprocess-non-zero-exit", "['/usr/bin/python', 'train.py']", "1"), "launcher"),
        (
            "torch.multiprocessing.spawn.ProcessExitedException: "
            + template("torch_native:spawn-terminated-with-exit-code", "1", "1"),
            "mp.spawn",
        ),
        (template("system:srun-task-exited", "node12", "3", "1"), "srun"),
    ],
)
def test_every_launchers_summary_names_the_worker_that_failed_never_a_cause(text, launcher):
    found = explained(text + "\n")
    assert found.id == "log.child_failed" and found.details["confidence"] == "likely"
    assert launcher in found.summary and "the cause is not in this log" in found.summary
    assert "Python exception" in found.fix  # exit status 1: the worker's own traceback is the cause


@pytest.mark.parametrize(
    ("code", "other"),
    [("2", "log.local_rank_argument"), ("127", "log.broken_install")],
)
def test_an_exit_status_that_says_more_names_its_reading(code, other):
    found = explained(template("system:srun-task-exited", "node1", "0", code) + "\n")
    assert found.id == "log.child_failed" and other in found.details["alternatives"]


def test_an_abort_says_native_code_and_the_watchdog():
    found = explained(template("torch_native:spawn-terminated-with-signal", "1", "SIGABRT") + "\n")
    assert found.id == "log.child_failed" and "SIGABRT" in found.summary
    assert "native code" in found.fix and "watchdog" in found.fix


def test_a_launchers_summary_follows_the_workers_own_error():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 12, in <module>\n'
        "    main()\n"
        # a worker's error no kind names (sampler.py's batch_size check now is dataloader_options)
        "ValueError: warmup_ratio must lie in [0, 1), got 1.5\n"
        + template("system:subprocess-non-zero-exit", "['/usr/bin/python', 'train.py']", "1")
        + "\n"
    )
    found = explained(log)
    assert found.id == "log.unrecognised" and "ValueError" in found.summary


def test_a_cause_beside_srun_summary_leads_it():
    # train/157: slurmstepd could not exec torchrun; srun's "Exited with exit code 2" is what it led to
    found = lead("157.txt")
    assert found.id == "log.broken_install"


# -- DeepSpeed refusing its config, told from the type and the frame --------------------------------------------

_SITE = "/usr/local/lib/python3.10/site-packages"


def test_deepspeeds_config_schema_refusing_a_key_is_the_config():
    # deepspeed/runtime/config_utils.py DeepSpeedConfigModel (pydantic, extra="forbid")
    found = explained(
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig\n"
        "stage3_gather_weights\n"
        "  Extra inputs are not permitted [type=extra_forbidden, input_value=True, input_type=bool]\n"
    )
    assert found.id == "log.deepspeed_config_mismatch" and found.details["confidence"] == "likely"
    assert found.details["alternatives"] == ["log.dependency_version"]
    assert "pip show deepspeed" in found.fix


def _raised_in(path: str, function: str, code: str, error: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 10, in <module>\n'
        "    engine, _, _, _ = deepspeed.initialize(model=model, config=cfg)\n"
        f'  File "{_SITE}/{path}", line 982, in {function}\n'
        f"    {code}\n"
        f"{error}\n"
    )


def test_an_assert_in_deepspeeds_config_check_is_the_config_not_a_bug():
    found = explained(
        _raised_in(
            "deepspeed/runtime/config.py",
            "_do_error_check",
            "assert self.gradient_accumulation_steps, 'DeepSpeedConfig: {} is not defined'",
            "AssertionError: DeepSpeedConfig: gradient_accumulation_steps is not defined",
        )
    )
    assert found.id == "log.deepspeed_config_mismatch" and found.details["confidence"] == "likely"


def test_an_assert_elsewhere_in_deepspeed_is_still_read_as_its_bug():
    found = explained(
        _raised_in(
            "deepspeed/runtime/zero/stage3.py",
            "defragment",
            "assert len(set(t.dtype for t in tensors)) == 1",
            "AssertionError",
        )
    )
    assert found.id == "log.library_version_bug"


def test_a_config_check_of_the_users_own_code_is_not_deepspeeds():
    found = explained(
        _raised_in(
            "myproject/config.py",
            "_do_error_check",
            "assert cfg.lr > 0",
            "AssertionError: lr must be positive",
        ).replace(f"{_SITE}/", "/home/u/")
    )
    assert found.id == "log.unrecognised"


def test_a_package_build_run_through_subprocess_is_not_a_worker():
    text = template("system:subprocess-non-zero-exit", "['/usr/bin/python3', 'setup.py', 'bdist_wheel']", "1")
    assert explained(text + "\n").id != "log.child_failed"


# -- an import: a submodule a library's release does not have ------------------------------------------------


def test_a_missing_submodule_of_an_installed_library_is_its_version():
    found = explained(template("system:python-no-module-named", "accelerate.utils.deepspeed_x") + "\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "likely"
    assert "log.broken_install" in found.details["alternatives"]
    assert "has no module accelerate.utils.deepspeed_x" in found.summary


@pytest.mark.parametrize(("module", "release"), [("torch._six", "2.0"), ("transformers.deepspeed", "4.46")])
def test_a_submodule_some_releases_have_is_certain_and_named(module, release):
    # modules the table of released names (api_history.tsv) has in some releases and not in others
    found = explained(template("system:python-no-module-named", module) + "\n")
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert module in found.summary and release in found.summary + found.fix


@pytest.mark.parametrize("module", ["mpi4py", "torch._C", "mypackage.models"])
def test_a_package_not_installed_or_torch_broken_is_not_a_version(module):
    # a top-level package missing is not installed; torch._C missing is a broken torch; one's own package: no
    assert explained(template("system:python-no-module-named", module) + "\n").id != "log.dependency_version"


# -- a CUDA runtime error: its class, wherever it is reported ------------------------------------------------


@pytest.mark.parametrize(
    "ident", ["illegal-address", "launch-failure", "misaligned-address", "illegal-instruction"]
)
def test_a_kernel_that_faulted_is_a_likely_library_bug_with_its_other_readings(ident):
    # torch's C10_CUDA_CHECK: "CUDA error: <cudaGetErrorString>"
    found = explained(f"RuntimeError: CUDA error: {template('cuda_runtime:' + ident)}\n")
    assert found.id == "log.library_version_bug" and found.details["confidence"] == "likely"
    assert "CUDA_LAUNCH_BLOCKING=1" in found.fix and "xid" in found.fix
    assert found.details["alternatives"] == ["log.device_assert"]


def test_a_kernel_fault_inside_nccl_names_an_nccl_release_not_an_index():
    text = (
        f"node1:1:2 [0] enqueue.cc:336 NCCL WARN Cuda failure '{template('cuda_runtime:illegal-address')}'\n"
    )
    found = explained(text)
    assert found.id == "log.library_version_bug" and "NCCL launched" in found.summary
    assert found.details["alternatives"] == ["log.nccl_bug_upgrade"]


def test_a_sentence_that_quotes_a_kernel_fault_is_not_one():
    assert explained("Is an illegal memory access was encountered error expected here?\n").id != (
        "log.library_version_bug"
    )


def test_cuda_that_cannot_start_is_a_fork_or_the_driver():
    found = explained(f"RuntimeError: CUDA error: {template('cuda_runtime:initialization-error')}\n")
    assert found.id == "log.cuda_fork" and found.details["confidence"] == "likely"
    assert "spawn" in found.fix and found.details["alternatives"] == ["log.driver_mismatch"]
    # torch's own message for the fork stays certain
    assert explained(template("torch:cannot-re-initialize-cuda-in-forked") + "\n").details["confidence"] == (
        "certain"
    )


# -- a build: what a device function or a linked symbol says ------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "named"),
    [
        # atomicAdd on double exists from compute capability 6.0 (nvcc's EDG front end)
        (
            template("system:nvcc-no-instance-of-overloaded", "/src/ops/roi.cu", "48", "atomicAdd"),
            "atomicAdd",
        ),
        # half arithmetic from 5.3
        (template("system:nvcc-identifier-undefined", "/src/attn.cu", "120", "__hmul2"), "__hmul2"),
    ],
)
def test_a_device_function_the_architecture_lacks_names_the_arch_list(line, named):
    found = explained(line + "\n")
    assert found.id == "log.cuda_build" and found.details["confidence"] == "likely"
    assert named in found.summary and "TORCH_CUDA_ARCH_LIST" in found.fix


def test_a_link_without_torchs_symbol_is_another_torch_or_abi():
    found = explained(
        "ext.cpp:(.text+0x1a4): "
        + template("system:ld-undefined-reference", "ext.o", "c10::detail::torchCheckFail(char const*)")
        + "\ncollect2: error: ld returned 1 exit status\n"
    )
    assert found.id == "log.cuda_build" and "torch's own symbol c10::detail::torchCheckFail" in found.summary
    assert "_GLIBCXX_USE_CXX11_ABI" in found.fix


def test_a_link_without_a_cuda_librarys_symbol_names_the_library():
    found = explained(template("system:ld-undefined-reference", "x.o", "cublasLtMatmul") + "\n")
    assert found.id == "log.cuda_build" and "libcublasLt" in found.summary and "-lcublasLt" in found.fix


def test_an_undefined_reference_of_the_projects_own_names_no_library():
    found = explained(template("system:ld-undefined-reference", "x.o", "roi_align_forward_cuda") + "\n")
    assert found.id == "log.cuda_build" and "not linked with" not in found.summary


# -- an import: a package missing inside another package's own import ---------------------------------------------


def test_a_module_missing_inside_a_packages_import_names_that_package():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 3, in <module>\n'
        "    import deepspeed\n"
        f'  File "{_SITE}/deepspeed/ops/transformer/inference/triton/__init__.py", line 6, in <module>\n'
        "    import triton\n" + template("system:python-no-module-named", "triton") + "\n"
    )
    assert found.id == "log.broken_install" and found.details["confidence"] == "likely"
    assert "deepspeed imports 'triton'" in found.summary and "pip install triton" in found.fix
    assert found.details["facts"]["raised_in_package"] == "deepspeed"


def test_a_module_missing_in_the_users_own_import_is_the_environments():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 3, in <module>\n'
        "    import datasets\n" + template("system:python-no-module-named", "datasets") + "\n"
    )
    assert found.id == "log.broken_install" and "cannot import 'datasets'" in found.summary
    assert "raised_in_package" not in found.details["facts"]
