"""Log documents and the failure lines in them, whichever store holds them: the field presets of every shipper
(``fields``), the shapes of indices (``shapes``), pods found in documents (``discover``), the signature table
(``signatures``) and its scanner (``linescan``), documents turned into timeline events (``parse``). The store
is a sibling folder: ``elasticsearch/`` (Elasticsearch and OpenSearch)."""
