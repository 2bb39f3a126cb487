"""Answers of recent searches, for agents that ask the same thing again.

An answer is kept for `TTL_SECONDS` under the request, the caller's current session and the
commit the reader was showing when it was computed (`IndexReader.commit`: the generation and a
digest of its Tantivy `meta.json`, taken before each reload, whose opstamp every commit changes).
So a commit by any process is seen by the next refresh and the next identical search computes
afresh: freshness never waits for the TTL.

The cache is consulted only after the generation passed the engine's per-read check, and it is
emptied whenever damage is found, so a damaged index is refused (`IndexDamaged`), never answered
from memory. Answers given in a degraded mode (model unavailable) are not kept: the next search
tries the model again. Time-relative parts of an answer (`sinceHours`, recency) may lag by up
to the TTL.
"""

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from engine.core import SearchInput, SearchPage

TTL_SECONDS = 300.0
MAX_ENTRIES = 256
"""Pages kept (least recently used dropped first): a few MB at most."""

CacheKey = tuple[str, str | None, str, bytes]


def cache_key(
    request: SearchInput, current_session: str | None, generation: str, commit: bytes
) -> CacheKey:
    return (request.model_dump_json(), current_session, generation, commit)


class SearchCache:
    """A small LRU of search pages with a time to live. The MCP server searches on worker
    threads, so every access holds a lock (a get's expiry and a put's eviction would otherwise
    race on the same key)."""

    def __init__(
        self,
        ttl: float = TTL_SECONDS,
        size: int = MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.size = size
        self._clock = clock
        self._pages: OrderedDict[CacheKey, tuple[float, SearchPage]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: CacheKey) -> SearchPage | None:
        with self._lock:
            entry = self._pages.get(key)
            if entry is None:
                return None
            stored, page = entry
            if self._clock() - stored > self.ttl:
                del self._pages[key]
                return None
            self._pages.move_to_end(key)
            return page

    def put(self, key: CacheKey, page: SearchPage) -> None:
        with self._lock:
            self._pages[key] = (self._clock(), page)
            self._pages.move_to_end(key)
            while len(self._pages) > self.size:
                self._pages.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._pages.clear()
