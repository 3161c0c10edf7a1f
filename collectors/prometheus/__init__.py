"""The Prometheus source (Prometheus, VictoriaMetrics, Thanos, Mimir: any Prometheus query API): the client
(``client``), the metric vocabulary of every dcgm-exporter and kube-state-metrics release (``vocab``, ``model``),
the PromQL it asks (``promql``, ``queries``, ``edges``), the answers turned into series and events (``answers``,
``series``, ``signals``, ``events``, ``util``), the collector (``collector``) and its part of a snapshot
(``openmetrics``, ``snapshot``)."""
