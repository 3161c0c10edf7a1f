"""Synthetic incident generator: recorded incidents in the shared scenario format, made from fault stories.

One generator feeds three consumers: the demo incidents shipped as package data (`whathappened demo`), the extra
acceptance scenarios under tests/scenarios/, and the large experiments of the scale benchmark. Output is
deterministic for a given seed. Run `python -m synth --help`.
"""

from __future__ import annotations
