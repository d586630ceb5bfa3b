"""Stage 1: judgments in, structured summaries out.

`readers` turns files into text, `base` defines the engine interface and registry,
`extractive` is the deterministic offline engine (the default).
"""
