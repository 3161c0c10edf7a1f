"""Benchmarks: per source (k8s_bench, prom_bench, logs_bench, exporter_bench) and end to end (run)."""
