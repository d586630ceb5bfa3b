"""Dense retrieval: embedders, the ONNX MiniLM, the embedding cache, window vectors and their on-disk store."""
