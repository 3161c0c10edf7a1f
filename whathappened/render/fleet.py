"""``whathappened fleet``'s output forms from one FleetResult: JSON (everything), CSV (the ``--by`` table), and
markdown and the terminal (the totals, then the ``--by`` table; by default the causes and the lemon list)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import IO, Any

from whathappened.fleet.result import FleetResult

# The columns each table shows, with their headings (JSON keeps every field).
COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "cause": (("cause", "cause"), ("category", "category"), ("incidents", "incidents"), ("share", "share"),
              ("pod_deaths", "pod deaths"), ("gpu_hours_lost", "GPU-hours lost")),
    "node": (("node", "node"), ("root_incidents", "root of incidents"), ("experiments_killed", "experiments killed"),
             ("xids_seen", "Xids seen"), ("xid_codes", "Xid codes"), ("causes", "causes"), ("verdict", "verdict")),
    "gpu": (("gpu", "GPU"), ("root_incidents", "root of incidents"), ("experiments_killed", "experiments killed"),
            ("xids_seen", "Xids seen"), ("xid_codes", "Xid codes"), ("causes", "causes"), ("verdict", "verdict")),
    "experiment": (("namespace", "namespace"), ("experiment", "experiment"), ("incidents", "incidents"),
                   ("causes", "causes"), ("pod_deaths", "pod deaths"), ("gpu_hours_lost", "GPU-hours lost")),
}  # fmt: skip
COVERED_ENOUGH = 0.99  # a scrape missed here and there is not a gap worth a sentence
SPANS_NAMED = 3  # the rest are in the JSON: a month of outages must not bury the headline
TITLES = {"cause": "By cause", "node": "Lemon nodes", "gpu": "Lemon GPUs", "experiment": "By experiment"}


def render_json(result: FleetResult) -> str:
    return json.dumps(result.as_dict(), indent=2) + "\n"


def render_csv(result: FleetResult, by: str) -> str:
    buffer = io.StringIO()
    columns = COLUMNS[by]
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([key for key, _ in columns])
    for row in result.table(by):
        # raw numbers for spreadsheets (a share as 0.25, not 25.0%); lists space-separated
        writer.writerow([cell("", v) if isinstance(v := row.get(key), list) else v for key, _ in columns])
    return buffer.getvalue()


def headline(result: FleetResult) -> str:
    totals = result.rollup.totals
    window = f"{result.window.start:%Y-%m-%d %H:%M} to {result.window.end:%Y-%m-%d %H:%M} UTC"
    if not result.history:
        return f"No kube-state-metrics history from {window}: no pod death could be counted."
    if result.outcome == "no-failure":
        said = f"No experiment pod died from {window} (as kube-state-metrics history tells it)."
    elif result.outcome == "no-evidence":
        said = f"{totals['incidents']} incident(s) from {window}, and none could be explained: the evidence is gone."
    else:
        said = (
            f"{totals['incidents']} incident(s), {totals['pod_deaths']} pod deaths, {totals['gpu_hours_lost']} "
            f"GPU-hours lost from {window}."
        )
    return said + gaps(result)


def gaps(result: FleetResult) -> str:
    """What the history leaves out, when it does: a sentence to follow the headline."""
    if result.coverage >= COVERED_ENOUGH:
        return ""
    named = [f"{w.start:%m-%d %H:%M} to {w.end:%m-%d %H:%M}" for w in result.history[:SPANS_NAMED]]
    more = len(result.history) - SPANS_NAMED
    spans = ", ".join(named) + (f" and {more} more spans" if more > 0 else "")
    return (
        f" kube-state-metrics history covers only {result.coverage:.0%} of the window ({spans} UTC): deaths outside "
        "it are not counted."
    )


def shown(by: str | None) -> Sequence[str]:
    return (by,) if by else ("cause", "node", "gpu")


def render_markdown(result: FleetResult, by: str | None = None) -> str:
    lines = ["# whathappened fleet", "", headline(result), ""]
    for table in shown(by):
        rows = rows_of(result, table)
        lines += [f"## {TITLES[table]}", ""]
        if not rows:
            lines += ["None.", ""]
            continue
        columns = COLUMNS[table]
        lines.append("| " + " | ".join(title for _, title in columns) + " |")
        lines.append("| " + " | ".join("---" for _ in columns) + " |")
        lines += [
            "| " + " | ".join(cell(key, row.get(key)).replace("|", "\\|") for key, _ in columns) + " |" for row in rows
        ]
        lines.append("")
    return "\n".join(lines)


def render_terminal(
    result: FleetResult, file: IO[str] | None = None, by: str | None = None, color: bool = True
) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file, no_color=not color, width=160 if file is not None else None)
    console.print(headline(result))
    for table in shown(by):
        rows = rows_of(result, table)
        view = Table(title=TITLES[table], title_justify="left")
        for _, title in COLUMNS[table]:
            view.add_column(title)
        for row in rows:
            view.add_row(*(cell(key, row.get(key)) for key, _ in COLUMNS[table]))
        console.print(view if rows else f"{TITLES[table]}: none.")


def rows_of(result: FleetResult, table: str) -> list[dict[str, Any]]:
    rows = result.table(table)
    # the lemon lists name the nodes and GPUs that were the root of something; the rest is in the JSON
    return [r for r in rows if r.get("root_incidents")] if table in ("node", "gpu") else rows


def cell(key: str, value: Any) -> str:
    """A table value as text: a share as a percentage, a float without trailing zeros, a list space-separated."""
    if key == "share" and isinstance(value, float):
        return f"{value:.1%}"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return "" if value is None else str(value)
