"""What the benchmark commands share: run, print the result as JSON, exit codes; a percentile."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100), linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def print_result(run: Callable[[], dict], errors: tuple[type[Exception], ...] = ()) -> int:
    """Print `run()` as JSON on stdout and return 0; an AqgrError (or one of `errors`) is
    printed on stderr as "error: ..." and returns 2."""
    from aqgr.foundation.errors import AqgrError

    try:
        result = run()
    except (AqgrError, *errors) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1))
    return 0
