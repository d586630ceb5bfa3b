"""Checks on text that comes from outside (facts, questions, ids): one place for every interface.

Python strings can hold lone surrogates (U+D800-U+DFFF): a JSON escape such as "\\ud800", or
bytes that are not UTF-8 decoded with `surrogateescape` (a command-line argument). They cannot
be encoded, stored or sent back, so they are refused with `InvalidTextError` (422 over HTTP, a
tool error over MCP, a one-line error on the command line) before any work is done.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from aqgr.foundation.errors import InvalidTextError, ReadError

_SURROGATE = re.compile("[\ud800-\udfff]")


def check_text(value: str, what: str = "text") -> str:
    """`value` unchanged, or InvalidTextError naming `what` and the position of the first lone surrogate."""
    found = _SURROGATE.search(value) if isinstance(value, str) else None
    if found is not None:
        raise InvalidTextError(what, found.start(), found.group())
    return value


def check_texts(values: Iterable[str] | None, what: str = "questions") -> None:
    for value in values or ():
        check_text(value, what)


def first_invalid(value: object) -> tuple[int, str] | None:
    """(position, character) of the first lone surrogate in any string inside `value` (dicts, lists), else None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found is not None:
                return found.start(), found.group()
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return None


def encodable(value: str) -> bool:
    """Whether `value` can be encoded as UTF-8 (stored, sent, printed as it is)."""
    try:
        value.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def shown(value: str) -> str:
    """`value` as it can be stored or printed: undecodable bytes of a file name (kept by Python as
    \\udcXX) as \\xNN, any other lone surrogate as \\udXXX."""
    if encodable(value):
        return value
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")


# A judgment id is looked up in the database, never used as a path; still, nothing path-like or
# unprintable, and nothing that a route of the HTTP API would read as its own suffix.
_ID = re.compile(r"^[^\x00-\x1f\x7f-\x9f\\\ud800-\udfff]{1,300}$")
ROUTE_SUFFIXES = ("text", "citations")  # /api/judgments/{id}/text, /api/judgments/{id}/citations
ID_RULE = (
    "1 to 300 characters, without control characters, '\\', a leading '/', an empty, '.' or '..' part "
    f"between slashes, or a last part {' or '.join(repr(s) for s in ROUTE_SUFFIXES)} after a slash"
)


def id_problem(value: object) -> str | None:
    """What makes `value` unusable as a judgment id, or None when it is one: the one id rule of every
    door (summarize, import, the HTTP API, MCP), so that every stored judgment can be opened by its id
    and no id answers for another's route (an id "X/text" would open X's text)."""
    if not isinstance(value, str):
        return f"a judgment id is a string, not {type(value).__name__}"
    if not _ID.match(value):
        return f"{shown(value)[:80]!r} is not a judgment id: ids are {ID_RULE}"
    parts = value.split("/")
    if any(p in ("", ".", "..") for p in parts) or (len(parts) > 1 and parts[-1] in ROUTE_SUFFIXES):
        return f"{value[:80]!r} is not a judgment id: ids are {ID_RULE}"
    return None


def many(value, what: str, example: str):
    """`value` unchanged when it is a collection (list, tuple, set, generator, ...) or None; a TypeError
    that says so when it is one string, bytes or path, or not iterable at all. Python iterates a string
    character by character: `summarize("SC999.txt")` would otherwise summarise "S", "C", ..., "." (the
    current folder), and `restrict="SC1"` would keep the judgments "S", "C" and "1"."""
    if value is None:
        return None
    import os

    if isinstance(value, (str, bytes, bytearray, os.PathLike)):
        kind = "string" if isinstance(value, str) else type(value).__name__
        raise TypeError(
            f"{what} takes a list, e.g. {example}, not one {kind} ({value!r:.60}): "
            "put it in a list (a string would be read character by character)"
        )
    try:
        iter(value)
    except TypeError:
        raise TypeError(f"{what} takes a list, e.g. {example}, not {type(value).__name__}") from None
    return value


def option_problem(exc: ValueError, env: dict[str, str] | None = None) -> str:
    """A settings validation error (pydantic's) as the options a user types, on one line: "invalid
    --structured-output (or AQGR_STRUCTURED_OUTPUT) 'bogus': Input should be 'auto', ..." (`env`: field
    -> environment variable). Any other ValueError: its message."""
    errors = exc.errors() if callable(getattr(exc, "errors", None)) else None
    if not errors:
        return str(exc)
    parts = []
    for error in errors:
        field = str(error["loc"][0]) if error.get("loc") else ""
        variable = (env or {}).get(field)
        where = (f"--{field.replace('_', '-')}" + (f" (or {variable})" if variable else "")) if field else "a setting"
        value = error.get("input")
        shown_value = f" {value!r:.80}" if isinstance(value, (str, int, float)) else ""
        parts.append(f"invalid {where}{shown_value}: {error.get('msg', 'not accepted')}")
    return "; ".join(parts)


def check_count(value, what: str = "k"):
    """`value` when it is None or a whole number of at least 1; a ValueError (TypeError for a non-number)
    that says so otherwise. A slice by -1 drops the last item and 0 reads as "the default": neither is
    what a caller asking for k results meant."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be a whole number of at least 1, not {type(value).__name__} {value!r:.40}")
    if value < 1:
        raise ValueError(f"{what} must be at least 1, not {value}")
    return value


def files_in(paths: Iterable[str | Path], pattern: str, *, recursive: bool, missing: str) -> list[Path]:
    """The files named in `paths`, and those matching `pattern` inside the folders named (their
    subfolders too when `recursive`), sorted per folder; a path that is neither: ReadError
    'not_found' with `missing` as its detail."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in (path.rglob(pattern) if recursive else path.glob(pattern)) if p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            raise ReadError(str(path), "not_found", missing)
    return found
