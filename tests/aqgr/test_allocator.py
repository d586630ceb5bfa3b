"""A long index build must not keep, as resident memory, the large blocks it freed: glibc's
allocator does by default once its mmap threshold has risen (aqgr.foundation.allocator)."""

import os
import subprocess
import sys
import textwrap

import pytest

from aqgr.foundation import allocator

pytestmark = pytest.mark.skipif(allocator._glibc() is None, reason="glibc's allocator only")

# Freed large blocks the heap keeps: a large block freed first (glibc then serves blocks below
# its size from the heap), 200 MiB of 1 MiB blocks, a small block above them, the 200 freed.
PATTERN = textwrap.dedent("""
    import sys
    from aqgr.foundation.allocator import release_freed, tune_for_build
    def anon():
        return next(int(l.split()[1]) // 1024 for l in open("/proc/self/status") if l.startswith("RssAnon:"))
    if sys.argv[1] == "tune":
        assert tune_for_build()
    big = bytearray(8 << 20); del big
    before = anon()
    blocks = [bytearray(1 << 20) for _ in range(200)]
    pin = bytearray(64 << 10)
    del blocks
    if sys.argv[1] == "trim":
        assert release_freed()
    print(anon() - before)
""")


def _kept_mb(mode: str, **env: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", PATTERN, mode],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return int(out.stdout.split()[-1])


def test_without_tuning_the_heap_keeps_freed_blocks():
    assert _kept_mb("off", AQGR_MALLOC_TUNING="0") >= 150  # what the two below are measured against


def test_a_tuned_process_maps_large_blocks_and_gives_them_back():
    assert _kept_mb("tune") < 20


def test_release_freed_hands_the_heaps_free_pages_back():
    assert _kept_mb("trim") < 20


def test_a_users_own_glibc_setting_is_left_alone(monkeypatch):
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "1")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "1")
    assert allocator.tune_for_build() is False
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_")
    monkeypatch.setenv("AQGR_MALLOC_TUNING", "off")
    assert allocator.tune_for_build() is False
    assert allocator.release_freed() is False
