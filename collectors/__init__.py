"""Sources of evidence: Kubernetes, Prometheus, Elasticsearch/OpenSearch logs, and offline snapshots."""
