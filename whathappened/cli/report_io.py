"""Rendering a report to the chosen output and destination, and the spinner while sources answer."""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from whathappened.cli.options import Output
from whathappened.errors import WhathappenedError, scrub
from whathappened.model import Report
from whathappened.scope import Collector


def render(report: Report, output: Output, color: bool, debug: bool = False, verbose: bool = False) -> str:
    if output is Output.json:
        from whathappened.render.jsonout import render_json

        return render_json(report, debug)
    if output is Output.markdown:
        from whathappened.render.markdown import render_markdown

        return render_markdown(report)
    if output is Output.html:
        try:
            from whathappened.render.html import render_html
        except ModuleNotFoundError as exc:
            raise WhathappenedError("the HTML report is not available in this build") from exc
        return render_html(report)
    from whathappened.render.terminal import render_terminal

    buffer = io.StringIO()
    render_terminal(report, buffer, color=color, verbose=verbose)
    return buffer.getvalue()


def emit(report: Report, output: Output | None, out: Path | None, debug: bool = False, verbose: bool = False) -> None:
    to_terminal = out is None and sys.stdout.isatty()
    chosen = output or Output.rich
    if chosen is Output.rich and to_terminal:
        from whathappened.render.terminal import render_terminal

        render_terminal(report, verbose=verbose)
        return
    deliver(render(report, chosen, color=False, debug=debug, verbose=verbose), out)


def deliver(text: str, out: Path | None) -> None:
    """The rendered output to standard output, or to ``--out``; a file that cannot be written is named."""
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise WhathappenedError(f"cannot write {out}: {exc.strerror}") from exc


@contextlib.contextmanager
def progress(message: str) -> Iterator[None]:
    """A spinner on standard error while sources answer, only when a person is watching."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(message):
        yield


def debug_requests(collectors: Iterable[Collector]) -> None:
    """``--debug``: every source's requests on standard error, scrubbed like every other message."""
    for collector in collectors:
        lines = getattr(collector, "request_log", None) or []
        for line in lines:
            sys.stderr.write(f"debug: {collector.name}: {scrub(str(line))}\n")
        sys.stderr.write(f"debug: {collector.name}: {collector.requests} requests\n")
