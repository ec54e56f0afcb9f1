"""The knowledge the fifteenth sample by symptom (corpus files 567-582, train half) asked for, each anchored on the
message its source prints: ATen's FFTs refusing half input (SpectralOps.cpp, MKL's FFT), autocast refusing
binary_cross_entropy (autocast_mode.cpp), Tcl/Tk and matplotlib refusing a GUI backend without a display or from
another thread, and the C library's ESTALE on a shared filesystem. Beside each, a line that must stay silent, or
be another kind, or only likely."""

from __future__ import annotations

import pytest
from explaining import explained, lead, template

pytestmark = pytest.mark.usefixtures("every_message_seen")


def test_an_fft_in_half_precision_is_half_unsupported_op_certain_beside_the_fft():
    # 573.txt (pytorch/pytorch#70664): torch.fft.rfft2 on a float16 tensor
    found = lead("573.txt")
    assert found.id == "log.half_unsupported_op" and found.details["confidence"] == "certain"
    assert "FFT" in found.summary
    assert "complex32" in found.fix and "1.12" in found.fix and "enabled=False" in found.fix
    # MKL's CPU FFT names itself: certain without a frame
    found = explained("RuntimeError: " + template("torch_native:mkl-fft-unsupported-type", "Half") + "\n")
    assert found.id == "log.half_unsupported_op" and found.details["confidence"] == "certain"


def test_unsupported_dtype_without_an_fft_is_only_likely_and_not_for_full_precision():
    # ATen prints "Unsupported dtype" elsewhere too: alone it is only likely
    found = explained("RuntimeError: " + template("torch_native:fft-unsupported-dtype", "Half") + "\n")
    assert found.id == "log.half_unsupported_op" and found.details["confidence"] == "likely"
    # a full-precision or integer dtype is not mixed precision
    assert explained("RuntimeError: Unsupported dtype Long\n").id != "log.half_unsupported_op"


def test_bce_under_autocast_is_autocast_unsafe_loss_certain():
    # 576.txt (dice-group/dice-embeddings#12): BCELoss on sigmoid outputs under 16-bit precision
    found = lead("576.txt")
    assert found.id == "log.autocast_unsafe_loss" and found.details["confidence"] == "certain"
    assert "BCEWithLogitsLoss" in found.fix and "enabled=False" in found.fix
    line = "RuntimeError: " + template("torch_native:autocast-binary-cross-entropy-unsafe")
    assert explained(line + "\n").id == "log.autocast_unsafe_loss"


def test_a_loss_that_is_safe_to_autocast_is_not_autocast_unsafe_loss():
    # torch's own advice names the safe forms; a log quoting only them is no failure of this kind
    found = explained("binary_cross_entropy_with_logits and BCEWithLogits are safe to autocast.\n")
    assert found.id != "log.autocast_unsafe_loss"


def test_tcl_teardown_from_another_thread_is_a_gui_backend_likely_certain_with_matplotlib():
    # 581.txt (facebookresearch/eb_jepa#29): evaluation plots drawn from a worker thread of a headless run
    found = lead("581.txt")
    assert found.id == "log.matplotlib_gui_backend" and found.details["confidence"] == "likely"
    assert "MPLBACKEND=Agg" in found.fix and "matplotlib.use('Agg')" in found.fix
    # with matplotlib in the traceback the Tcl/Tk line is certain
    frame = '  File "/usr/lib/python3/dist-packages/matplotlib/pyplot.py", line 272, in figure\n'
    no_display = "_tkinter.TclError: " + template(
        "third_party:tk-couldnt-connect-to-display", "localhost:64.0"
    )
    found = explained(frame + no_display + "\n")
    assert found.id == "log.matplotlib_gui_backend" and found.details["confidence"] == "certain"
    # matplotlib's own refusal is certain alone
    line = "ImportError: " + template(
        "third_party:matplotlib-backend-requires-interactive-framework", "'tkagg'", "'tk'", "'headless'"
    )
    found = explained(line + "\n")
    assert found.id == "log.matplotlib_gui_backend" and found.details["confidence"] == "certain"


def test_a_display_word_in_other_text_is_not_a_gui_backend():
    # a near miss: a message about a display that is not Tk's refusal
    assert explained("WARNING: could not connect to the display server, falling back\n").id != (
        "log.matplotlib_gui_backend"
    )


def test_a_stale_file_handle_is_a_shared_filesystem_certain():
    # ESTALE: only network and shared filesystems return it. Without a cache the log names (a checkpoint here),
    # the shared filesystem is the finding; with Triton's cache in the log (569.txt, a Triton cache on NFS
    # shared by several nodes) the narrower kind leads and takes this one in (test_explain_sixteenth_sample)
    for template_id in ("system:estale-stale-file-handle", "system:estale-stale-nfs-file-handle"):
        found = explained("OSError: " + template(template_id) + ": '/nfs/ckpt/last.pt'\n")
        assert found.id == "log.shared_filesystem_io" and found.details["confidence"] == "certain"
        assert "TRITON_CACHE_DIR" in found.fix and "/tmp" in found.fix
    found = lead("569.txt")
    assert found.id == "log.compile_cache_shared" and found.details["confidence"] == "certain"


def test_a_missing_file_is_not_a_stale_file_handle():
    found = explained("FileNotFoundError: [Errno 2] No such file or directory: '/nfs/ckpt/last.pt'\n")
    assert found.id != "log.shared_filesystem_io"
