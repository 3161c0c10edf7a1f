"""Elasticsearch and OpenSearch as the log store: the client and its failures (``client``), the query DSL
(``query``), paging (``search``), the collector (``collector``) and its part of a snapshot, bulk NDJSON
(``snapshot``). Another store is a sibling folder of this one under ``collectors/logs/``."""
