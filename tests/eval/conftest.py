"""Fixtures for the eval tests: a tiny AILA-shaped dataset in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest
from aila_tiny import write_dataset


@pytest.fixture
def tiny(tmp_path) -> Path:
    return write_dataset(tmp_path / "aila")
