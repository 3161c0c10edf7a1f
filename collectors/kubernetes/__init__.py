"""The Kubernetes API source: access and its failures (``access``), raw requests (``api``), the collector
(``collector``), the containers' logs (``container_logs``) and its part of a snapshot (``snapshot``). What the
objects mean is in ``collectors/kube_objects/``, shared with the snapshot and the log store's archived events."""
