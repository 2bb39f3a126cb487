"""Search, the top of the read path: one boosted query over step and session documents,
the rerank of its top window, the semantic leg joined (`engine.meaning`), session memories,
why each result matched, and the answers kept for agents that ask again. May import every layer
below it.
"""

from engine.search.search_cache import MAX_ENTRIES, SearchCache, cache_key
from engine.search.step_search import Coverage, search

__all__ = ["MAX_ENTRIES", "Coverage", "SearchCache", "cache_key", "search"]
