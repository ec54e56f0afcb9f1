"""The README's checkable promises, read from the README and held against the tool: the exit statuses, every
flag a `torchdoctor CMD ...` line shows (it is in that command's ``--help``), every finding id it names (some
check emits it), and what it shows `explain`, `net --read-log` and `scale` print on the repository's own files."""

import io
import re
import shlex
import sys
from pathlib import Path

import pytest
from helpers import main_here

from torchdoctor.cli import main

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
COMMANDS = ("check", "env", "net", "mpi", "launch", "explain", "report", "scale")
AREAS = ("sys", "env", "dist", "net", "gpu", "mpi")


def commands_shown() -> dict[str, set[str]]:
    """command -> the flags the README shows it taking, in `torchdoctor CMD ...` lines and inline code."""
    shown: dict[str, set[str]] = {c: set() for c in COMMANDS}
    for match in re.finditer(rf"torchdoctor ({'|'.join(COMMANDS)})\b([^`\n]*)", README):
        command, rest = match.groups()
        for token in rest.split():
            if command == "launch" and (token.endswith(".py") or token in ("-m", "--module")):
                break  # what follows the script is the script's
            if token in ("|", ">", "&&", ";", "#", "2>&1"):
                break
            flag = re.match(r"^(--[a-z][a-z0-9-]*|-[a-zA-Z])(?:=|$)", token)
            if flag and f"no such option: {flag.group(1)}" not in README:  # shown being refused
                shown[command].add(flag.group(1))
    return shown


def help_of(command: str, capsys) -> str:
    status = main([command, "--help"])
    out = capsys.readouterr().out
    assert status == 0, command
    return out


SHOWN = commands_shown()


def test_the_readme_shows_flags_of_most_commands():
    assert sum(bool(flags) for flags in SHOWN.values()) >= 6, SHOWN  # the reader itself works


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_the_readme_shows_is_in_the_commands_help(command, capsys):
    text = help_of(command, capsys)
    listed = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b", text))
    missing = sorted(SHOWN[command] - listed)
    assert not missing, f"the README shows `torchdoctor {command}` with {missing}, which its --help lacks"


def test_the_exit_statuses_the_readme_gives_are_the_tools(capsys):
    said = re.search(r"Exit status, for every command: (.*?)\n\n", README, re.S).group(1)
    promised = dict(re.findall(r"`(\d+)` ([a-z][^,`(]*)", said))
    assert {"0", "1", "2", "130"} <= set(promised), promised
    main(["--help"])
    text = capsys.readouterr().out
    for status in promised:
        assert re.search(rf"^\s+{status}\s+\S", text, re.M), (
            f"exit status {status} is not in torchdoctor --help"
        )


@pytest.mark.parametrize(
    "args, status",
    [
        ([], 0),  # the help
        (["--version"], 0),
        (["check", "--no-such-flag"], 2),
        (["net", "--timeout", "nan"], 2),
        (["explain", "/nonexistent/log.txt"], 2),
    ],
)
def test_the_exit_statuses_hold(args, status, capsys):
    assert main(args) == status
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if status == 2:
        assert err.count("\n") == 1 and err.startswith("torchdoctor: error: ")


def ids_in_the_readme() -> set[str]:
    found = set(re.findall(rf"[`(]((?:{'|'.join(AREAS)})\.[a-z][a-z0-9_]*)[`)]", README))
    return {i for i in found if not (i.startswith("sys.") and hasattr(sys, i.split(".", 1)[1]))}  # sys.argv


def ids_in_the_code() -> set[str]:
    from torchdoctor.checks import CHECK_MODULES, check_id, discover

    text = "\n".join(p.read_text() for p in (ROOT / "src" / "torchdoctor").rglob("*.py"))
    literal = set(re.findall(rf"\"((?:{'|'.join(AREAS)})\.[a-z][a-z0-9_]*)\"", text))
    from torchdoctor.mpi import checks as mpi  # `torchdoctor mpi`'s checks, which `check` does not run

    named = {check_id(f) for name, f in vars(mpi).items() if name.startswith("check_") and callable(f)}
    return literal | named | {check_id(check) for check in discover(CHECK_MODULES)}


def test_every_finding_id_the_readme_names_exists():
    named = ids_in_the_readme()
    assert len(named) >= 20, named  # the reader itself works
    unknown = sorted(named - ids_in_the_code())
    assert not unknown, f"the README names finding ids no check emits: {unknown}"


@pytest.mark.parametrize("command", COMMANDS)
def test_the_options_promised_on_every_command_are_there(command, capsys):
    said = re.search(r"Exit status, for every command: (.*?)\n\n", README, re.S).group(1)
    promised = re.findall(r"`(--?[a-z-]+)`(?:/`(--?[a-z-]+)`)? on every command", said)
    flags = {f for pair in promised for f in pair if f}
    assert {"-h", "--help", "--no-color"} <= flags, promised
    text = help_of(command, capsys)
    assert all(re.search(rf"(?<![\w-]){re.escape(f)}\b", text) for f in flags), (command, flags)


def test_the_readme_lists_every_check_as_check_list_prints_it(capsys):
    """`torchdoctor check --list` in the README is the tool's own output: a check added (or reworded) without
    the README saying so is caught here, not by a newcomer comparing the two."""
    shown = re.search(r"\$ torchdoctor check --list\n(.*?)\n\$ ", README, re.S).group(1)
    assert main(["check", "--list"]) == 0
    printed = capsys.readouterr().out.strip()
    assert shown.strip() == printed, "the README's `torchdoctor check --list` differs from what it prints"


def test_every_link_inside_the_readme_leads_to_a_heading():
    """The Tour's links, as GitHub makes a heading's anchor: lower case, punctuation dropped, spaces to hyphens."""
    anchors = {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in re.findall(r"^#+ (.*)$", README, re.M)
    }
    links = set(re.findall(r"\]\(#([^)]+)\)", README))
    assert len(links) >= 10, links  # the Tour was read
    assert not links - anchors, f"links to no heading: {sorted(links - anchors)}"


def shown_runs() -> list[tuple[str, list[str]]]:
    """(command, the lines the README shows it printing) for each README console line that runs torchdoctor on
    the repository's own files or on a pasted line, so needs no machine of its own: `explain` on a fixture or on
    `printf '...' |`, `net --read-log` on a fixture, `scale`. The lines run up to the next `$ ` or the fence."""
    lines = README.splitlines()
    runs = []
    for at, line in enumerate(lines):
        if re.match(
            r"\$ (torchdoctor (explain|net --read-log) tests/fixtures/\S+|torchdoctor scale |printf '.*' \| torchdoctor explain )",
            line,
        ):
            end = at + 1
            while end < len(lines) and not lines[end].startswith(("$ ", "```")):
                end += 1
            runs.append((line[2:], lines[at + 1 : end]))
    return runs


RUNS = shown_runs()


def shows(shown: list[str], printed: list[str]) -> bool:
    """Whether ``shown`` is ``printed`` with `...` standing for any run of lines, and the end left off at will."""
    if not shown:
        return True
    if shown[0].strip() in ("...", "…"):
        return any(shows(shown[1:], printed[skip:]) for skip in range(len(printed) + 1))
    return bool(printed) and shown[0] == printed[0] and shows(shown[1:], printed[1:])


def test_the_readme_shows_runs_on_its_own_files():
    assert len(RUNS) >= 10, [command for command, _ in RUNS]  # the examples were found


@pytest.mark.parametrize("command, shown", RUNS, ids=[command[:60] for command, _ in RUNS])
def test_what_the_readme_shows_a_run_print_is_what_it_prints_now(command, shown, monkeypatch):
    """A newcomer runs the README's examples on the repository's fixtures and sees what the README shows
    (session 44: two `explain` folders and the tensor-parallel straggler run had drifted unnoticed)."""
    pasted = re.match(r"printf '(.*)' \| (.*)", command)
    if pasted:
        monkeypatch.setattr(
            sys, "stdin", io.TextIOWrapper(io.BytesIO(pasted.group(1).replace("\\n", "\n").encode()))
        )
        command = pasted.group(2)
    command, _, head = command.partition(" | head -")
    done = main_here(main, "torchdoctor", shlex.split(command)[1:], cwd=ROOT)
    printed = done.stdout.splitlines()[: int(head) if head else None]
    assert shows(shown, printed), (
        f"$ {command}\nthe README shows:\n" + "\n".join(shown) + "\nit prints:\n" + done.stdout
    )
