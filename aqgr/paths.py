"""Where aqgr's own data lies: the sample archive it ships and the shared evaluation datasets."""

import os
from pathlib import Path

# datasets/sample of the checkout (aqgr/sample links to it); package data in a wheel.
SAMPLE = Path(__file__).parent / "sample"


def shared_datasets() -> Path:
    """The folder holding aila2019/ and aila2019-citebench/: $AQGR_DATASETS, else ../shared/datasets
    beside the checkout. The data is never copied into the repository or the wheel."""
    configured = os.environ.get("AQGR_DATASETS")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2] / "shared" / "datasets"
