"""A search restricted to some documents, applied inside each engine the cheapest way it can.

A retriever takes `only`, the document numbers it may return. Naming them costs in proportion to
how many there are: nothing for a filter admitting 50 judgments, a great deal for one admitting
40% of a million (every one named to tantivy). So a filter's selection (`Admitted`) also carries
the filter itself (`Where`, retrieval/types.py), which an engine whose documents carry their filter fields applies
as part of its query (the tantivy engines: `filters_inside`); the dense store scores named
documents or masks the others out of its ANN search (`names_cheaply`).

An engine that can do neither (matrix.v1, whose documents carry no filter fields) still gets the restricted
ranking: scores do not depend on the restriction (BM25's statistics and the similarities are the
whole index's), so its best k are the first k admitted documents of the unrestricted ranking.
A broad restriction is therefore read after the search: the unrestricted ranking to the depth
expected to hold k admitted documents, deeper while it holds fewer (`Restriction.after`), while
that depth is below the number of documents named. Every path gives the same documents, with the
same slack for ties at the cut (`OVERFETCH` in retrieval/embedded/index.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence, Set

import numpy as np

from ..types import FIELD_SEP, Where

# The unrestricted ranking is read this much deeper than the depth where the admitted documents'
# share would hold the ones wanted: reading a little deeper costs far less than a second read.
MARGIN = 1.5


def field_terms(facets) -> tuple[list[str], int | None]:
    """A document's filter fields (retrieval/embedded/facets.py `DocFacets`) as an engine indexes them:
    its terms and its date as a YYYYMMDD integer (None: no date)."""
    if facets is None:
        return [], None
    return [f"{name}{FIELD_SEP}{value}" for name, value in facets.terms], date_number(facets.decided)


def date_number(iso: str | None) -> int | None:
    """An ISO date (or the facets' open-ended bounds "0000-00-00" / "9999-99-99") as YYYYMMDD."""
    return int(iso.replace("-", "")) if iso else None


class Admitted(Set):
    """The judgment ids a filter admits, held as the sorted document numbers of one index
    generation (`SummaryIndex.admitted`): a set of ids for whoever reads it as one, without
    building a set of strings, and its numbers as they are for the index that made it."""

    def __init__(self, ns: np.ndarray, ids: Sequence[str | None], n_of: Mapping[str, int], where: Where | None = None):
        self.ns = np.array(ns, dtype=np.int64)
        self.ns.flags.writeable = False
        self.where = where  # the filter that selected them, for engines that filter inside their search
        self._ids, self._n_of = ids, n_of
        self._mask: np.ndarray | None = None

    def made_by(self, ids: Sequence[str | None]) -> bool:
        """Whether these numbers are those of the generation whose n -> id list is `ids`."""
        return ids is self._ids

    @property
    def mask(self) -> np.ndarray:
        """n -> admitted, over every n of the generation (made on first use, then kept)."""
        if self._mask is None:
            self._mask = _mask(self.ns, len(self._ids))
        return self._mask

    def __contains__(self, doc_id: object) -> bool:
        n = self._n_of.get(doc_id) if isinstance(doc_id, str) else None
        return n is not None and bool(self.mask[n])

    def __iter__(self) -> Iterator[str]:
        return (self._ids[int(n)] for n in self.ns)

    def __len__(self) -> int:
        return len(self.ns)

    def __repr__(self) -> str:
        return f"Admitted({len(self)} judgments)"


class Restriction:
    """The document numbers a search may return (`ns`, sorted, unique) over `size` numbers, of
    which `live` are live documents."""

    def __init__(
        self, ns: np.ndarray, size: int, live: int, mask: np.ndarray | None = None, where: Where | None = None
    ):
        self.ns, self._size, self._live, self.where = ns, size, live, where
        self.ns.flags.writeable = False  # one restriction, several searches: engines may keep what they made of it
        self._mask = mask

    @property
    def mask(self) -> np.ndarray:
        if self._mask is None:
            self._mask = _mask(self.ns, self._size)
        return self._mask

    def admits(self, n: int) -> bool:
        return n < self._size and bool(self.mask[n])

    def after(self, want: int, held: int | None = None, read: int | None = None) -> int | None:
        """The depth of the unrestricted ranking to read for `want` admitted documents, when
        reading that deep costs less than naming every admitted document to the engine; else None.

        First (nothing read yet) the depth where the admitted share of the archive would hold
        them, with MARGIN to spare (the admitted documents are not spread evenly down a ranking);
        after reading `read` deep and finding `held` admitted, the depth that rate predicts, with
        the margin, and at least twice as deep."""
        if not len(self.ns) or not self._live:
            return None
        if read is None:
            depth = math.ceil(MARGIN * want * self._live / len(self.ns))
        else:
            depth = max(2 * read, math.ceil(MARGIN * want * read / max(held or 0, 1)))
        return depth if depth < len(self.ns) else None

    def __len__(self) -> int:
        return len(self.ns)


def _mask(ns: np.ndarray, size: int) -> np.ndarray:
    """A boolean array of `size`, True at `ns`."""
    mask = np.zeros(size, dtype=bool)
    mask[ns] = True
    return mask
