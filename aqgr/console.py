"""The command line's consoles: every string is plain text, never rich markup.

Party names, file names, ids, questions and error messages come from judgments and from
users ("Mohan [/x] Lal v State", "Suresh Kumar [since deceased] through LRs"): printed
through rich markup they would crash the command (MarkupError) or lose words. So every
console the CLI prints to comes from `console()`, which has markup, emoji codes and
highlighting off; colour is added only with `styled()`, which takes (text, style) pairs
and never parses its text. A string that cannot be encoded (a lone surrogate, or a file
name's undecodable bytes kept by Python as \\udcXX) is shown escaped instead of failing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from aqgr.inputs import shown

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

Part = Union[str, "tuple[str, str]"]


def styled(*parts: Part) -> "Text":
    """Text from plain strings and (string, style) pairs, e.g. styled(("error:", "red"), " ", message).
    No part is ever read as markup."""
    from rich.text import Text

    return Text.assemble(*((shown(p[0]), p[1]) if isinstance(p, tuple) else shown(str(p)) for p in parts))


def console(*, stderr: bool = False) -> "Console":
    """A rich console that prints strings as they are (no markup, no emoji codes, no highlighting)."""
    from rich.console import Console

    class PlainConsole(Console):
        def print(self, *objects, **kwargs) -> None:  # type: ignore[override]
            kwargs["markup"] = False
            kwargs["emoji"] = False
            super().print(*(shown(o) if isinstance(o, str) else o for o in objects), **kwargs)

    return PlainConsole(stderr=stderr, highlight=False, markup=False, emoji=False)
