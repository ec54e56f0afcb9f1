"""Frames a log holds that are no traceback: logging's ``stack_info=True`` prints "Stack (most recent call last):"
and the frames a running program logged from (logging/__init__.py, Logger.findCaller), and the run goes on. T59
read frames without a traceback's header as a paste cut at both ends; these are not one, and no exception ended
the run there."""

from explaining import explained

FRAMES = (
    '  File "/home/u/train.py", line 30, in <module>\n'
    "    main()\n"
    '  File "/home/u/train.py", line 25, in main\n'
    '    logging.warning("slow step", stack_info=True)\n'
)


def test_a_logged_stack_is_not_read_as_a_cut_traceback():
    logged = explained(
        "INFO:root:epoch 1 loss 0.52\nWARNING:root:slow step\nStack (most recent call last):\n"
        + FRAMES
        + "INFO:root:epoch 2 loss 0.41\nINFO:root:training done\n"
    )
    assert logged.id == "log.unrecognised" and "cut" not in logged.summary, logged.summary
    assert "no known failure" in logged.summary, logged.summary
    # the same frames pasted alone (no header, no error line) are still read as a cut paste
    pasted = explained(FRAMES)
    assert "without its header or its error line" in pasted.summary, pasted.summary
    # and a traceback cut after its frames, beside a logged stack, is still said to stop before its error line
    cut = explained(
        "WARNING:root:slow step\nStack (most recent call last):\n" + FRAMES + "Traceback (most recent "
        "call last):\n" + FRAMES
    )
    assert "stops before its error line" in cut.summary, cut.summary
