"""The systems under evaluation: the registry and protocol (`registry`), the full-text baselines
(`fulltext`), the summary-based systems through aqgr's own pipeline (`pipeline`), and the index
backend a summary-based system runs on (`on_backend`, `NAME@milvus`)."""
