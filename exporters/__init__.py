"""The exporter sidecar: cloud maintenance notices, the launch preflight and GPU health as metrics."""
