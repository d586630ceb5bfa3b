"""`llm.v1`: structured summaries from a language model (Gemini, an OpenAI-compatible server, ...).

engine   the engine: one zero-shot JSON request, or chain-of-thought over retrieved chunks
chunks   overlapping paragraph-aligned chunks and their per-judgment FAISS index
slots    slot groups, partial schemas and mechanical repair of model JSON
prompts/ the versioned prompt templates
"""
