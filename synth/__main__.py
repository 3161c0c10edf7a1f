"""`python -m synth`: regenerate the committed incidents, write one, or write a scale experiment."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from synth.catalog import DEFAULT_SEED, DEMOS, DEMOS_DIR, SCENARIOS, SCENARIOS_DIR, Story
from synth.ids import Ids
from synth.scale import SCALE_FIELDS, ScaleOptions, write_scale
from synth.writer import write_recording


def _write_set(stories: dict[str, Story], root: Path, seed: int) -> None:
    for name, story in stories.items():
        folder = root / name
        if folder.exists():
            shutil.rmtree(folder)
        write_recording(story(Ids(seed)), folder, seed)
        print(f"wrote {folder}")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m synth", description=__doc__)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help=f"regenerate the demo incidents in {DEMOS_DIR}").add_argument(
        "--out", type=Path, default=DEMOS_DIR
    )
    sub.add_parser("scenarios", help=f"regenerate the acceptance scenarios in {SCENARIOS_DIR}").add_argument(
        "--out", type=Path, default=SCENARIOS_DIR
    )
    one = sub.add_parser("one", help="write one named incident")
    one.add_argument("name", choices=sorted({**SCENARIOS, **DEMOS}))
    one.add_argument("--out", type=Path, required=True)
    scale = sub.add_parser("scale", help="write a large experiment for the benchmark")
    scale.add_argument("--pods", type=int, default=512)
    scale.add_argument("--out", type=Path, required=True)
    scale.add_argument(
        "--events", type=int, default=None, help="Kubernetes events (default 50,000 x pods/512 x hours/6)"
    )
    scale.add_argument("--logs", type=int, default=None, help="log documents (default 1,000,000 x pods/512 x hours/6)")
    scale.add_argument("--attempts", type=int, default=1, help="JobSet restarts + 1: each earlier one ends in a fault")
    scale.add_argument(
        "--event-ttl", type=float, default=None, help="hours the API server keeps events (shorter: archived too)"
    )
    scale.add_argument("--hours", type=float, default=6.0)
    scale.add_argument("--scrape", type=int, default=15)
    scale.add_argument(
        "--fields", default=",".join(SCALE_FIELDS), help="dcgm-exporter fields to write, comma-separated"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    began = time.monotonic()
    if args.command == "demo":
        _write_set(DEMOS, args.out, args.seed)
    elif args.command == "scenarios":
        _write_set(SCENARIOS, args.out, args.seed)
    elif args.command == "one":
        story = {**SCENARIOS, **DEMOS}[args.name]
        write_recording(story(Ids(args.seed)), args.out, args.seed)
    else:
        fields = tuple(f for f in args.fields.split(",") if f)
        opts = ScaleOptions(
            args.pods,
            args.seed,
            args.hours,
            args.scrape,
            events=args.events,
            logs=args.logs,
            fields=fields,
            attempts=args.attempts,
            event_ttl_hours=args.event_ttl,
        )
        stats = write_scale(opts, args.out)
        print(stats)
    print(f"done in {time.monotonic() - began:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
