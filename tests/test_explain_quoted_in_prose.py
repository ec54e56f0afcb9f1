"""An exception quoted inside a sentence, where no line of the log starts with one: the release tables read it
when nothing else in the log is recognised, as likely only (train 1337: "Raises the error TypeError: ...")."""

from explaining import explained, read

KEYWORD = "TypeError: Accelerator.__init__() got an unexpected keyword argument 'logging_dir'"


def test_a_keyword_refusal_quoted_in_a_sentence_is_read_by_the_keywords_table_as_likely():
    found = read("1337.txt", "dependency_version", "likely")
    assert "project_dir" in found.fix and found.details["quoted_in_prose"] is True
    found = explained(f"After upgrading, accelerate launch train.py fails with this error: {KEYWORD}\n")
    assert (found.id, found.details["confidence"]) == ("log.dependency_version", "likely")
    assert found.summary.startswith("likely: Accelerator(logging_dir=...)"), found.summary


def test_a_quote_the_tables_do_not_know_is_still_unrecognised():
    found = explained("I get this error: TypeError: my_step() got an unexpected keyword argument 'warmup'\n")
    assert (found.id, found.status) == ("log.unrecognised", "skip"), found.summary


def test_an_exception_the_log_raised_leads_over_one_quoted_in_a_sentence():
    log = (
        f"Before, I saw: {KEYWORD}\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 9, in <module>\n'
        "    main()\n"
        "RuntimeError: planted crash on rank 1\n"
    )
    found = explained(log)
    assert found.id == "log.unrecognised" and found.status == "fail", found.summary
    assert "planted crash on rank 1" in found.summary


def test_a_line_that_starts_with_the_exception_is_not_a_quote():
    # the exception line itself: read as an exception (likely: no stated release, no installed caller)
    found = explained(KEYWORD + "\n")
    assert (found.id, found.details["confidence"]) == ("log.dependency_version", "likely")
    assert "quoted_in_prose" not in found.details
