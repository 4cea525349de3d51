"""Tuning the collector freezes what exists and sets (or keeps) the thresholds."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from lgos.gc_tuning import tune_collector


@pytest.fixture
def collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("collector")
def test_tuning_freezes_the_startup_objects_and_sets_thresholds() -> None:
    tune_collector((10_000, 5, 1_000))
    assert gc.get_threshold() == (10_000, 5, 1_000)
    assert gc.get_freeze_count() > 1000  # the modules imported so far, at the least
    # A collection no longer walks the frozen objects: only what was made since.
    assert len(gc.get_objects()) < gc.get_freeze_count()


@pytest.mark.usefixtures("collector")
def test_none_keeps_cpythons_thresholds() -> None:
    before = gc.get_threshold()
    tune_collector(None)
    assert gc.get_threshold() == before
