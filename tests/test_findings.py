import json

import pytest
from rich.console import Console

from torchdoctor.findings import Finding, exit_code, render_human, render_markdown, to_json, worst


def test_worst_and_exit_code():
    ok = Finding("a.ok", "ok", "fine")
    skip = Finding("a.skip", "skip", "not here")
    warn = Finding("a.warn", "warn", "hmm", fix="do x")
    fail = Finding("a.fail", "fail", "broken", fix="do y")
    assert worst([]) == "ok"
    assert worst([ok, skip]) == "ok"
    assert worst([ok, warn, skip]) == "warn"
    assert worst([warn, fail, ok]) == "fail"
    assert exit_code([ok, warn]) == 0
    assert exit_code([fail]) == 1


def test_bad_status_names_the_value():
    with pytest.raises(ValueError, match="'bad'"):
        Finding("a.b", "bad", "x")


def test_json_shape():
    data = json.loads(to_json([Finding("a.b", "warn", "s", {"k": 1}, "fix it")]))
    assert data == {
        "status": "warn",
        "findings": [{"id": "a.b", "status": "warn", "summary": "s", "details": {"k": 1}, "fix": "fix it"}],
    }


def test_human_shows_fix_under_failures_and_details_only_when_verbose():
    console = Console(record=True, width=200, color_system=None)
    findings = [
        Finding("a.ok", "ok", "all good", {"v": 3}),
        Finding("a.bad", "fail", "broken", {"w": 4}, "run x"),
    ]
    render_human(findings, console=console)
    text = console.export_text()
    assert "✓ all good (a.ok)" in text and "✗ broken (a.bad)" in text
    assert "    run x" in text and "w: 4" not in text
    console = Console(record=True, width=200, color_system=None)
    render_human(findings, console=console, verbose=True)
    assert "    w: 4" in console.export_text()


def test_markdown_table_and_fixes():
    text = render_markdown([Finding("a.b", "fail", "x | y", fix="do z")])
    assert "| ✗ | `a.b` | x \\| y |" in text and "```\ndo z\n```" in text
