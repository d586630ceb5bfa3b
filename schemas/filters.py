"""What a search may be narrowed to (filters) and what its candidates were (facets).

`Filters` is one typed request, the same in every door: `Archive.search(..., filters=Filters(...))`,
`aqgr search --court --from --to --judge --kind --statute --disposal`, the HTTP body's `filters`
object and the MCP tools' `filters` argument. Every field is optional; given fields all hold
for a hit (and), and each is matched against values normalised when the index was built
(aqgr/retrieval/embedded/facets.py), so "SC", "Hon'ble Supreme Court" and "Supreme Court of India" are one
court and "Sikri, J." is "Justice A.K. Sikri".

Dates are ISO (`2010-03-23`), a month (`2010-03`) or a year (`2010`): `decided_from` a year
means its first day, `decided_to` its last. A range that ends before it starts, or a date
that cannot be read, is refused when the model is made (pydantic's ValidationError, a 422 over
HTTP, exit 2 on the command line).
"""

from __future__ import annotations

import calendar
import re
from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

DISPOSALS = ("allowed", "dismissed", "partly")
COURT_LEVELS = ("supreme", "high", "district", "tribunal")

_PARTIAL = re.compile(r"^\s*(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?\s*$")


def _as_date(value, *, end: bool) -> date | None:
    """An ISO date, month or year as a date (a month or year: its first day, or with `end` its last)."""
    if value is None or isinstance(value, date):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError("give a date as YYYY-MM-DD, YYYY-MM or YYYY")
    if not value.strip():
        return None
    found = _PARTIAL.match(value)
    if not found:
        raise ValueError(f"{value!r} is not a date: give YYYY-MM-DD, YYYY-MM or YYYY")
    year, month, day = int(found[1]), found[2], found[3]
    try:
        if month is None:
            return date(year, 12, 31) if end else date(year, 1, 1)
        if day is None:
            m = int(month)
            return date(year, m, calendar.monthrange(year, m)[1] if end else 1)
        return date(year, int(month), int(day))
    except ValueError:
        raise ValueError(f"{value!r} is not a date: give YYYY-MM-DD, YYYY-MM or YYYY") from None


class Filters(BaseModel):
    """Optional narrowing of a search: only judgments matching every given field are ranked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    court: str | None = Field(
        default=None,
        max_length=200,
        description="A court, in any usual spelling: 'SC', 'Supreme Court of India', 'Bombay HC'.",
    )
    court_level: Literal["supreme", "high", "district", "tribunal"] | None = Field(
        default=None, description="A level of court (Indian courts: supreme, high, district, tribunal)."
    )
    decided_from: date | None = Field(default=None, description="Decided on or after (YYYY-MM-DD, YYYY-MM or YYYY).")
    decided_to: date | None = Field(default=None, description="Decided on or before (YYYY-MM-DD, YYYY-MM or YYYY).")
    judge: str | None = Field(
        default=None, max_length=200, description="A judge on the bench: 'A.K. Sikri', 'Sikri, J.', 'Justice Sikri'."
    )
    kind: str | None = Field(
        default=None,
        max_length=200,
        description="Kind of judgment as the summary names it: 'criminal appeal', 'writ petition', 'appeal'.",
    )
    statute: str | None = Field(
        default=None,
        max_length=300,
        description="A statute or section referred to: 'IPC', 'Section 302 IPC', 'Article 21 of the Constitution'.",
    )
    disposal: Literal["allowed", "dismissed", "partly"] | None = Field(
        default=None, description="How the final order disposed of the case."
    )

    @field_validator("decided_from", mode="before")
    @classmethod
    def _from(cls, value):
        return _as_date(value, end=False)

    @field_validator("decided_to", mode="before")
    @classmethod
    def _to(cls, value):
        return _as_date(value, end=True)

    @field_validator("court", "judge", "kind", "statute", mode="before")
    @classmethod
    def _text(cls, value):
        if isinstance(value, str):
            value = " ".join(value.split())
            return value or None
        return value

    @field_validator("disposal", "court_level", mode="before")
    @classmethod
    def _lower(cls, value):
        if isinstance(value, str):
            value = value.strip().lower()
            return {"partly allowed": "partly", "partial": "partly", "partially allowed": "partly"}.get(
                value, value
            ) or None
        return value

    @model_validator(mode="after")
    def _ordered(self):
        if self.decided_from and self.decided_to and self.decided_from > self.decided_to:
            raise ValueError(
                f"the date range ends ({self.decided_to.isoformat()}) before it starts "
                f"({self.decided_from.isoformat()}): swap --from and --to"
            )
        return self

    def active(self) -> dict[str, str]:
        """The given fields as strings (name -> value), for notes and the page."""
        return {
            name: value.isoformat() if isinstance(value, date) else str(value)
            for name, value in self.model_dump().items()
            if value is not None
        }

    def __bool__(self) -> bool:
        return bool(self.active())


class FacetCount(BaseModel):
    """One value of a facet and how many of the search's candidates have it."""

    model_config = ConfigDict(extra="forbid")

    value: str = Field(
        description="The normalised value, as a filter takes it (e.g. 'Supreme Court of India', '1999', 'IPC s. 302')."
    )
    count: int = Field(ge=1)


class Facets(BaseModel):
    """Counts over the candidates a search ranked (its fused list, not only the hits shown), per
    field, most frequent first; what the page offers to narrow by."""

    model_config = ConfigDict(extra="forbid")

    candidates: int = Field(ge=0, description="How many ranked candidates were counted.")
    court: list[FacetCount] = Field(default_factory=list)
    year: list[FacetCount] = Field(default_factory=list)
    decade: list[FacetCount] = Field(default_factory=list)
    statute: list[FacetCount] = Field(
        default_factory=list, description="Statutes (acts) referred to; a judgment counts once per act."
    )
    section: list[FacetCount] = Field(default_factory=list, description="Sections referred to ('IPC s. 302').")
    judge: list[FacetCount] = Field(default_factory=list)
    kind: list[FacetCount] = Field(default_factory=list)
    disposal: list[FacetCount] = Field(default_factory=list)


FacetField = Literal["court", "year", "decade", "statute", "section", "judge", "kind", "disposal"]


def make_filters(**fields) -> Filters | None:
    """`Filters` from optional fields (None ones left out; None when none is given), a field that
    cannot be read refused as InvalidFilterError (what the command line and the tools report)."""
    from pydantic import ValidationError

    from aqgr.foundation.errors import InvalidFilterError

    given = {name: value for name, value in fields.items() if value is not None}
    if not given:
        return None
    try:
        return Filters(**given)
    except ValidationError as exc:
        raise InvalidFilterError(
            "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'filters'}: {e['msg'].removeprefix('Value error, ')}"
                for e in exc.errors()
            )
        ) from None


def facet_lines(result, *, shown: int = 5) -> list[str]:
    """A search result's active filters and main facets as plain lines (the command line's view):
    'filters: court=Supreme Court of India', 'court: Supreme Court of India 14 · Bombay High Court 3'."""
    lines = []
    if result.filters:
        lines.append("filters: " + ", ".join(f"{name}={value}" for name, value in result.filters.active().items()))
    facets = result.facets
    if facets is not None and facets.candidates:
        for name in ("court", "decade", "statute", "disposal"):
            counts = getattr(facets, name)
            if counts:
                lines.append(f"{name}: " + " · ".join(f"{c.value} {c.count}" for c in counts[:shown]))
    return lines
