"""Grafana dashboards generated from the metric catalog."""
