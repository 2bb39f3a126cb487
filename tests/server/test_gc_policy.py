"""A searching process collects garbage rarely: what was loaded is frozen, young collections
wait for more allocations than a search makes (`server.gc_policy`)."""

import gc
from collections.abc import Iterator

import pytest

from server.gc_policy import GEN0_THRESHOLD, settle_for_searching


@pytest.fixture
def restored_gc() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


@pytest.mark.usefixtures("restored_gc")
def test_loaded_objects_are_frozen_and_young_collections_wait() -> None:
    loaded = [object() for _ in range(10)]
    settle_for_searching()
    assert gc.get_freeze_count() >= len(loaded)
    assert gc.get_threshold()[0] >= GEN0_THRESHOLD
    collections = gc.get_stats()[0]["collections"]
    young = [[n] for n in range(GEN0_THRESHOLD // 2)]  # more than the default 700 allow
    assert gc.get_stats()[0]["collections"] == collections
    assert len(young) == GEN0_THRESHOLD // 2
