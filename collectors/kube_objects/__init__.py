"""Kubernetes objects as plain JSON (pods, nodes, Events), whoever fetched them: the API source, a snapshot's
``kubernetes/*.json``, the Events an archiver shipped into the log store, the reasons kube-state-metrics
exports. ``reasons`` is the one table of Kubernetes reason words; ``parse`` turns objects into timeline events."""
