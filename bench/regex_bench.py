"""The signature table against lines programs really print beside the ones we look for: each signature's
worst time on adversarial lines (long runs of each character class, repeated prefixes of its own examples,
hex and base64 blobs), through the same matcher the collectors use.

    .venv/bin/python -m bench.regex_bench --size 1000000        # the issue's 1 MB line
    .venv/bin/python -m bench.regex_bench --size 20000 --raw    # the bare patterns, no prefilter or bound
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Iterator

from whathappened.collectors.logs.extractors import Signature
from whathappened.collectors.logs.signatures import SIGNATURES

RUNS = {
    "digits": "0123456789",
    "letters": "abcdefghijklmnopqrstuvwxyz",
    "word-dots": "a.b-c_d1",
    "spaces": " ",
    "hex": "0123456789abcdef",
    "base64": "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODk+/",
    "colons": "a: ",
    "tensor": "[0.1234, -0.5678, ",
}


def adversarial(signature: Signature, size: int) -> Iterator[tuple[str, str]]:
    for name, unit in RUNS.items():
        yield name, (unit * (size // len(unit) + 1))[:size]
    for number, example in enumerate(signature.examples[:3]):
        for cut in (len(example) // 2, len(example) - 1):
            head = example[:cut]
            if head:
                yield f"example{number}[:{cut}]x", (head * (size // len(head) + 1))[:size]


def worst(signature: Signature, size: int, match: Callable[[Signature, str], object]) -> tuple[float, str]:
    slowest, which = 0.0, ""
    for name, line in adversarial(signature, size):
        started = time.perf_counter()
        match(signature, line)
        took = time.perf_counter() - started
        if took > slowest:
            slowest, which = took, name
    return slowest, which


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--raw", action="store_true", help="the bare patterns (unbounded, no prefilter)")
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    if args.raw:
        match: Callable[[Signature, str], object] = lambda s, line: s.pattern.search(line)  # noqa: E731
    else:
        from whathappened.collectors.logs.linescan import bounded, normalize

        match = lambda s, line: s.search(bounded(normalize(line)))  # noqa: E731
    results = sorted(((worst(s, args.size, match), s.name) for s in SIGNATURES), reverse=True)
    print(f"line of {args.size:,} characters, {len(SIGNATURES)} signatures, load {os.getloadavg()[0]:.2f}")
    for (took, which), name in results[: args.top]:
        print(f"  {took * 1000:10.1f} ms  {name:32s} ({which})")
    scan = "x" * args.size
    started = time.perf_counter()
    _ = "Link" in scan
    print(f"  plain substring scan of the line: {(time.perf_counter() - started) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
