"""``whathappened fleet``: every experiment's pod deaths over a long window, explained and rolled up (CONTRACT.md
section 3a): ends found first (collectors/prometheus/fleet.py), grouped into incidents (incidents.py), each
explained by the CLI's correlator in its own narrow window (survey.py), then rolled up with pandas (rollup.py)."""
