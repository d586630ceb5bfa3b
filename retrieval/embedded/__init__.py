"""The embedded index backend (embedded.v1): the index directory, its doc store, retrievers, filters and facets."""
