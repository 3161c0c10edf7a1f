"""Reports: rich terminal, JSON, Markdown and HTML."""
