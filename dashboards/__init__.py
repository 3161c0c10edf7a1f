"""Grafana dashboards generated from the metric catalog.

``whathappened dashboards generate --out DIR`` writes them (the committed ``dashboards/*.json`` are that output),
``whathappened dashboards install --grafana-url URL`` uploads them (token from WHATHAPPENED_GRAFANA_TOKEN), and
``provisioning.yaml`` serves them from files. Modules: ``promql`` (catalogued metric names, the experiment's pods
and nodes), ``grafana`` and ``envelope`` (the dashboard JSON model), one module per dashboard (``experiment``,
``fleet``, ``maintenance``), ``generate`` and ``install``.
"""
