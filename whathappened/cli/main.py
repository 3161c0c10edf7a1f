"""The ``whathappened`` entry point: ``whathappened EXPERIMENT [options]`` plus the other commands.

``whathappened NAME`` is ``whathappened explain NAME``; an experiment named like a command is reached with
``whathappened explain NAME``. Errors print one red line and exit with the contract's code; tracebacks only
with ``--debug``. Heavy libraries are imported by the commands that need them, so ``--help`` stays fast.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
import threading
from collections.abc import Sequence

import typer

from whathappened.errors import WhathappenedError, scrub

COMMANDS = ("explain", "collect", "demo", "exporter", "preflight", "dashboards", "watch", "fleet")
# Commands that make one report and exit (not the exporter, which runs for days).
ONE_SHOT = ("explain", "collect", "demo")
HELP = (
    "Why did my training run die? One timeline of everything that touched the experiment, the rank that failed "
    "first, why, and what to do next.\n\n"
    "Usage: whathappened EXPERIMENT [options]   (same as: whathappened explain EXPERIMENT [options])\n\n"
    "Exit codes: 0 report made; 3 report made but a source failed; 4 experiment not found; 1 error; 2 usage."
)

app = typer.Typer(
    name="whathappened",
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _register() -> None:
    from whathappened.cli import collect, demo, explain

    explain.register(app)
    collect.register(app)
    demo.register(app)
    for optional in ("exporter", "dashboards", "watch", "fleet"):
        try:
            module = __import__(f"whathappened.cli.{optional}", fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != f"whathappened.cli.{optional}":
                raise
            continue
        module.register(app)


def route(argv: Sequence[str]) -> list[str]:
    """Insert ``explain`` when the first word is not a command: ``whathappened EXP -n ns`` or ``-n ns EXP``."""
    args = list(argv)
    if not args or args[0] in ("-h", "--help"):
        return args
    if args[0] in COMMANDS:
        return args
    return ["explain", *args]


def run(argv: Sequence[str] | None = None) -> None:
    args = route(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    one_shot = bool(args) and args[0] in ONE_SHOT
    if one_shot:
        # One short process that exits when the report is out: the cyclic collector's passes over a heap of
        # a few hundred thousand parsed objects cost about a fifth of a 512-pod run's CPU, and a run makes
        # almost no cyclic garbage (peak RSS measured the same with and without it), so it stays off.
        gc.disable()
    _register()
    as_json = wants_json(args)
    try:
        code = app(args=args, prog_name="whathappened", standalone_mode=False)
    except KeyboardInterrupt:
        fail("interrupted", 130, debug, one_shot, as_json)
    except SystemExit as done:
        finish(done.code, one_shot)
    except WhathappenedError as exc:
        fail(str(exc), exc.exit_code, debug, one_shot, as_json, _details(exc))
    except Exception as exc:  # the CLI entry turns anything unexpected into one line
        if _from_click(exc, "ClickException"):  # a bad option or argument: click's own message, exit 2
            exc.show()  # type: ignore[attr-defined]
            if as_json:
                write_error_document(exc.format_message(), exc.exit_code)  # type: ignore[attr-defined]
            finish(exc.exit_code, one_shot)  # type: ignore[attr-defined]
        if _from_click(exc, "Abort"):
            fail("interrupted", 130, debug, one_shot, as_json)
        said = str(exc) or "no message"
        fail(f"internal error: {type(exc).__name__}: {said} (--debug shows where)", 1, debug, one_shot, as_json)
    finish(code if isinstance(code, int) else 0, one_shot)


def _from_click(exc: Exception, name: str) -> bool:
    """Click's exception classes by name: typer ships its own copy of click in some versions, plain click in
    others, and only the class names are the same."""
    return any(kind.__name__ == name for kind in type(exc).__mro__)


def wants_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for JSON: then every failure also writes a JSON error document to stdout,
    so a script reading stdout never gets empty input."""
    for i, arg in enumerate(args):
        if arg in ("-o", "--output") and i + 1 < len(args) and args[i + 1] == "json":
            return True
        if arg in ("--output=json", "-ojson"):
            return True
    return False


_KINDS = {1: "error", 2: "usage", 3: "source-failed", 4: "not-found", 130: "interrupted"}


def write_error_document(message: str, code: int, details: dict[str, object] | None = None) -> None:
    import json

    error: dict[str, object] = {"kind": _KINDS.get(code, "error"), "exit_code": code, "message": scrub(message)}
    error.update(details or {})
    sys.stdout.write(json.dumps({"schema": "whathappened/v1", "error": error}, ensure_ascii=False) + "\n")


def _details(exc: WhathappenedError) -> dict[str, object]:
    said: dict[str, object] = {}
    for name in ("suggestions", "namespaces"):
        values = getattr(exc, name, None)
        if values:
            said[name] = list(values)
    return said


def finish(code: object, quick: bool = False) -> None:
    """Exit now. A source that missed its deadline may still hold a thread blocked on a socket; waiting for it
    at interpreter exit would break the deadline promise (and can abort the interpreter), so leave at once.
    A one-shot command (``quick``) leaves at once too: tearing down every module and freeing the heap one
    object at a time adds 0.1-0.2 s to a large run for nothing. Either way the exit hooks still run (the
    clients' temporary certificate files are removed there)."""
    status = code if isinstance(code, int) else (0 if code is None else 1)
    if isinstance(code, str):
        sys.stderr.write(f"{code}\n")
    # (not under a profiler or tracer: it writes its results when the program returns)
    now = threading.active_count() > 1 or (quick and sys.getprofile() is None and sys.gettrace() is None)
    if now:
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that went away (| head) is not an error
            stream.flush()
    if now:
        os._exit(status)
    raise SystemExit(status)


def fail(
    message: str,
    code: int,
    debug: bool,
    quick: bool = False,
    as_json: bool = False,
    details: dict[str, object] | None = None,
) -> None:
    if as_json:
        write_error_document(message, code, details)
    if debug:
        import traceback

        sys.stderr.write(scrub(traceback.format_exc()))
    red = sys.stderr.isatty()
    line = f"whathappened: {scrub(message)}".splitlines()[0] if message else "whathappened: error"
    sys.stderr.write(f"\x1b[31m{line}\x1b[0m\n" if red else f"{line}\n")
    finish(code, quick)


if __name__ == "__main__":
    run()
