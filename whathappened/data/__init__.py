"""Package data: the demo incidents and the JSON schema."""
