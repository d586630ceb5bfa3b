"""Test-wide rules: no network except loopback, slow tests opt-in, offline env."""

from __future__ import annotations

import os
import socket

import pytest

for _var, _value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "DO_NOT_TRACK": "1",
    "SCARF_NO_ANALYTICS": "1",
}.items():
    os.environ.setdefault(_var, _value)

_LOOPBACK = ("127.", "::1", "localhost")
_real_connect = socket.socket.connect
_real_create_connection = socket.create_connection


def _is_loopback(address) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = str(address[0])
    return host.startswith(_LOOPBACK)


def _guarded_connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
        raise OSError(f"network access blocked in tests: {address!r}")
    return _real_connect(self, address)


def _guarded_create_connection(address, *args, **kwargs):
    if not _is_loopback(address):
        raise OSError(f"network access blocked in tests: {address!r}")
    return _real_create_connection(address, *args, **kwargs)


socket.socket.connect = _guarded_connect
socket.create_connection = _guarded_create_connection


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="run slow tests over the real AILA data")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: opt in with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


# Every Archive a test module makes is closed when the module ends (after its module-scoped
# fixtures, a live server among them): its database connections and index files are released,
# not left for the garbage collector while the rest of the suite runs (the descriptors pile up).
_archives: list = []


def _track_archives() -> None:
    import functools
    import weakref

    from aqgr.archive.home import Archive

    made = Archive.__init__

    @functools.wraps(made)  # inspect.signature(Archive) still reads the real one
    def tracked(self, *args, **kwargs):
        made(self, *args, **kwargs)
        _archives.append(weakref.ref(self))

    Archive.__init__ = tracked


_track_archives()


@pytest.fixture(scope="module", autouse=True)
def _close_archives():
    yield
    while _archives:
        archive = _archives.pop()()
        if archive is not None:
            archive.close()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh aqgr home directory for one test."""
    path = tmp_path / "aqgr-home"
    monkeypatch.setenv("AQGR_HOME", str(path))
    return path


# Property-based tests (hypothesis): a bounded profile for CI by default; a larger one by hand:
#   AQGR_HYPOTHESIS_PROFILE=thorough python -m pytest tests -k properties
try:
    from hypothesis import HealthCheck
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # the test extra not installed: the property tests skip themselves
    pass
else:
    _slow_ok = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large]
    _hypothesis_settings.register_profile(
        "ci", max_examples=25, deadline=None, suppress_health_check=_slow_ok, derandomize=True
    )
    _hypothesis_settings.register_profile("thorough", max_examples=500, deadline=None, suppress_health_check=_slow_ok)
    _hypothesis_settings.load_profile(os.environ.get("AQGR_HYPOTHESIS_PROFILE", "ci"))
