"""The deterministic offline extractive engine (`extractive.v1`).

Every slot is cut verbatim out of the judgment by cue phrases and patterns: no model,
no network, no downloads. `engine` wires the pieces; each other module fills one group
of slots (`header`, `citations`, `issues`, `sections`, `principles`, `keyphrases`)
over the shared `document.Document` view of the text.
"""
