"""Statistics over runs: paired bootstrap intervals (`bootstrap`), the chance level of a measure
(`chance`), the agreement of two index backends (`agreement`), and whether a dataset's judgments
can be found from its query texts at all (`findability`, a command)."""
