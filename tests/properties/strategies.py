"""Hostile input for the property tests: any text (lone surrogates, control characters, rich markup,
path pieces), numbers of any size, bytes, and JSON nested deeply."""

from __future__ import annotations

from hypothesis import strategies as st

FACTS = (
    "An elderly shopkeeper was attacked with an axe by his neighbour during a dispute over a boundary wall. "
    "Before dying in the hospital he gave a statement to the treating doctor naming the neighbour"
)

NASTY = [
    "[/x]",
    "[bold]",
    "[since deceased]",
    ":smile:",
    "\x00",
    "\ud800",
    "\udcff",
    "..",
    "../",
    "/",
    "\\",
    "%2F",
    "\u202e",
    "\ufeff",
    "'",
    '"',
    "{",
    "}",
    "\r\n",
    "\t",
    " ",
    "é",
    "\U0001f600",
    "NaN",
    "-1",
    "9" * 50,
]

# every code point, lone surrogates included (hypothesis leaves them out by default)
any_char = st.characters(codec=None, exclude_categories=())
any_text = st.one_of(
    st.text(any_char, max_size=60),
    st.lists(st.sampled_from(NASTY), max_size=6).map("".join),
    st.builds(lambda a, b: a + b, st.text(any_char, max_size=20), st.sampled_from(NASTY)),
)
# facts that are sometimes long enough to search on, with hostile text anywhere
facts = st.one_of(
    any_text, st.builds(lambda t, at_end: FACTS + " " + t if at_end else t + " " + FACTS, any_text, st.booleans())
)
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 10**4000]),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, any_text)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(any_text, inner, max_size=4)),
    max_leaves=12,
)


def deep(depth: int, kind: str = "list") -> str:
    """JSON text nested `depth` levels."""
    return ("[" * depth + "]" * depth) if kind == "list" else ('{"a":' * depth + "1" + "}" * depth)


nested_json = st.builds(deep, st.sampled_from([100, 1_000, 10_000, 30_000]), st.sampled_from(["list", "dict"]))
