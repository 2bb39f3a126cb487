"""Python's garbage collector tuned for a process that answers many searches.

Why: a search holds ~1,000-2,000 young container objects at its peak (hits, rows, lists of
addresses), so with CPython's default gen-0 threshold (700) nearly every search triggered a
young collection, and every few hundred searches a full collection walked the loaded model and
index objects. Searches make no reference cycles worth collecting early: with the threshold
raised to `GEN0_THRESHOLD`, a run of 200 searches collected nothing. Freezing what is alive
once loaded (imports, model, vocabularies) takes it out of every later full collection. The
latencies this keeps down are measured by `scripts/bench_speed.py`.

It is process-wide, so only the entry points that serve searches call it (`knowhow
batch-search`, `knowhow serve`), never the engine itself.
"""

import gc

GEN0_THRESHOLD = 10_000
"""Allocations (net of frees) between two young collections: above a search's peak."""


def settle_for_searching() -> None:
    """Freeze the objects alive now (they are never collected) and raise the gen-0 threshold."""
    gc.collect()
    gc.freeze()
    gen0, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(max(GEN0_THRESHOLD, gen0), gen1, gen2)
