"""Where aqgr's own data lies: the sample archive it ships and the shared evaluation datasets."""

import hashlib
import os
from pathlib import Path

# datasets/sample of the checkout (aqgr/sample links to it); package data in a wheel.
SAMPLE = Path(__file__).parent.parent / "sample"


def shared_datasets() -> Path:
    """The folder holding aila2019/ and aila2019-citebench/: $AQGR_DATASETS, else ../shared/datasets
    beside the checkout. The data is never copied into the repository or the wheel."""
    configured = os.environ.get("AQGR_DATASETS")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[3] / "shared" / "datasets"


def file_sha256(path: str | Path) -> str:
    """The hex sha256 of a file's bytes, read a MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
