"""The command line's consoles: every string is plain text, never rich markup.

Party names, file names, ids, questions and error messages come from judgments and from
users ("Mohan [/x] Lal v State", "Suresh Kumar [since deceased] through LRs"): printed
through rich markup they would crash the command (MarkupError) or lose words. So every
console the CLI prints to comes from `console()`, which has markup, emoji codes and
highlighting off; colour is added only with `styled()`, which takes (text, style) pairs
and never parses its text. A string that cannot be encoded (a lone surrogate, or a file
name's undecodable bytes kept by Python as \\udcXX) is shown escaped instead of failing.

Control characters are shown escaped too (`printable`): a party name or a file name holding
ESC[2J would otherwise clear the user's screen, a CR would overwrite the line before it, and
a bidirectional override would reorder what the user reads. Every string printed through
`console()` or built with `styled()` passes `printable`, so a command has one rule to follow:
print data only through these (never `typer.echo` or `print` of a data string).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Union

from aqgr.foundation.inputs import shown

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

Part = Union[str, "tuple[str, str]"]

# C0 controls but tab and newline, DEL, C1 controls (U+0080-U+009F: U+009B is a one-character
# CSI on some terminals), and the bidirectional embeddings, overrides and isolates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: "re.Match[str]") -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: str) -> str:
    """`value` safe to show on a terminal: control characters and escape sequences as \\xNN
    (ESC[2J as \\x1b[2J), bidirectional controls as \\uNNNN, undecodable bytes as with `shown`;
    tab and newline kept. Plain text is returned unchanged."""
    return _CONTROL.sub(_escape, shown(value))


def styled(*parts: Part) -> "Text":
    """Text from plain strings and (string, style) pairs, e.g. styled(("error:", "red"), " ", message).
    No part is ever read as markup."""
    from rich.text import Text

    return Text.assemble(*((printable(p[0]), p[1]) if isinstance(p, tuple) else printable(str(p)) for p in parts))


def console(*, stderr: bool = False) -> "Console":
    """A rich console that prints strings as they are (no markup, no emoji codes, no highlighting)."""
    from rich.console import Console

    class PlainConsole(Console):
        def print(self, *objects, **kwargs) -> None:  # type: ignore[override]
            kwargs["markup"] = False
            kwargs["emoji"] = False
            super().print(*(printable(o) if isinstance(o, str) else o for o in objects), **kwargs)

    return PlainConsole(stderr=stderr, highlight=False, markup=False, emoji=False)
