"""What a training script asks of the operating system that Windows does not have.

- A file or folder name with a character Windows refuses (``:*?"<>|``; a colon from a timestamp such as
  ``strftime('%H:%M:%S')`` or ``isoformat()``): ``os.makedirs`` gets Windows' ERROR_INVALID_NAME, which CPython's
  ``Modules/posixmodule.c`` raises as "[WinError 123] The filename, directory name, or volume label syntax is
  incorrect" (in the system's language), and ``open()``/``torch.save`` get the C runtime's EINVAL, "[Errno 22]
  Invalid argument: '<name>'". The WinError is certain; Errno 22 is this kind only where the quoted name holds one
  of those characters after its drive (elsewhere it has other causes).
- A module or a signal only Unix has: CPython's ``resource``, ``fcntl``, ``termios``, ``pwd``, ``grp``, ``pty``,
  ``tty``, ``syslog``, ``posix`` (and the old ``crypt``, ``spwd``, ``nis``) are "Availability: Unix" in its library
  reference, so on Windows the import fails with "No module named 'resource'"; Windows' ``signal`` module defines
  only SIGABRT, SIGFPE, SIGILL, SIGINT, SIGSEGV, SIGTERM and SIGBREAK, so ``signal.SIGALRM`` fails with "module
  'signal' has no attribute 'SIGALRM'". Certain: nothing installs these stdlib names. Whose code asked is read
  from the raising frame: an installed package's own (torch 1.13.0's torchrun timer, pytorch#85427; billiard's
  pool) is that release's, not the training code's, and its fix is another release or WSL, not a guard.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Context, Hit, Recogniser, first, on_ranks

FAMILY = "the machine and its operating system"

BAD_NAME = re.compile(
    r"(?P<win_invalid_name>\[WinError 123\])|\[Errno 22\] Invalid argument: (?:Path\()?"
    r"'(?P<bad_path>(?:[A-Za-z]:(?=[\\/])|(?![A-Za-z]:[\\/]))[^':*?\"<>|\n]*[:*?\"<>|][^'\n]*)'"
)
UNIX_MODULES = "resource|fcntl|termios|pwd|grp|pty|tty|syslog|posix|crypt|spwd|nis"
UNIX_SIGNALS = "ALRM|HUP|QUIT|USR1|USR2|KILL|CHLD|PIPE|TSTP|CONT|STOP|VTALRM|PROF|WINCH"
UNIX_ONLY = re.compile(
    rf"No module named '(?P<unix_module>{UNIX_MODULES})'|module 'signal' has no attribute '(?P<unix_signal>SIG(?:{UNIX_SIGNALS}))'"
)


def _bad_name(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    path = first(hits, "bad_path")
    named = f" ({path})" if path else ""
    return (
        f"a file or folder name{named} holds a character Windows does not allow in names (':' from a "
        'timestamp, or one of * ? " < > |)' + on_ranks(hits),
        "Build the name without those characters: a timestamp as time.strftime('%Y-%m-%d_%H-%M-%S') (not "
        "'%H:%M:%S', not datetime.isoformat()), and replace ':' in names read from configs or labels.",
    )


def _unix_only(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    module, signal = first(hits, "unix_module"), first(hits, "unix_signal")
    what = f"the module '{module}'" if module else f"signal.{signal}"
    package = first(hits, "raised_in_package")
    if package:
        # the frame that raised it is an installed package's own (torch 1.13.0's elastic timer, pytorch#85427;
        # billiard's pool): that release does not run on Windows, and the user's code has nothing to guard
        return (
            f"{package}'s own code (the traceback's innermost frame is in the installed {package}) uses {what}, "
            f"which only Unix has: the {package} release installed does not run on Windows, not your code"
            + on_ranks(hits),
            f"Nothing in your code uses it: install a {package} release that runs on Windows, if there is one "
            f"(pip install -U {package}; {package}'s issues for this message say which release guards it, or that "
            "none runs on Windows), or run the training under WSL or Linux.",
        )
    return (
        f"the training code uses {what}, which only Unix has: on Windows it does not exist" + on_ranks(hits),
        f"Guard the use of {what} (if sys.platform != 'win32': ... or try/except ImportError) or drop it on "
        "Windows (resource only raises the open-file limit; a SIGALRM timeout can be a threading.Timer); or run "
        "the training under WSL or Linux.",
    )


WINDOWS_INVALID_FILENAME = Recogniser(
    kind="windows_invalid_filename",
    title="a file name with a character Windows refuses",
    templates=(
        "third_party:windows-invalid-name-winerror-123",
        "third_party:cpython-errno-22-invalid-argument",
    ),
    anchors=("[WinError 123]", "[Errno 22] Invalid argument: "),
    match=BAD_NAME,
    facts=(BAD_NAME,),
    describe=_bad_name,
)

UNIX_ONLY_MODULE = Recogniser(
    kind="unix_only_module",
    title="a module or signal only Unix has, used on Windows",
    templates=("third_party:cpython-no-module-named", "third_party:cpython-signal-has-no-attribute"),
    anchors=("No module named '", "module 'signal' has no attribute 'SIG"),
    match=UNIX_ONLY,
    facts=(UNIX_ONLY,),
    absorbs=("broken_install",),
    describe=_unix_only,
)

RECOGNISERS = (WINDOWS_INVALID_FILENAME, UNIX_ONLY_MODULE)
