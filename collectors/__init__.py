"""The sources: one folder each, owning its client, its parsers and its part of a snapshot folder.

``kubernetes/`` (the API), ``prometheus/`` (any Prometheus-compatible query API), ``logs/`` (log documents and
the lines in them; ``logs/elasticsearch/`` is the store, so another store is a sibling folder), ``snapshot/``
(a recorded incident folder: which parts it holds, and writing one). Two shared layers sit beneath the sources:
``kube_objects/`` (Kubernetes objects as JSON: the API serves them, a snapshot records them, and event archivers
ship them into the log store) and ``recorded.py`` (what every snapshot reader shares). The sources never import
each other (an import-linter contract says so); nothing here imports a heavy client at module level outside the
module that owns it, so ``--help`` and the demo stay fast.
"""
