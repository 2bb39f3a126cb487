"""The stored documents a search read last, kept for the next searches on the same commit.

A search reads about a hundred stored documents: its rerank window's (step id and rank record,
`engine.search.step_search._rank_tier`) and its page's. Reading one decompresses its doc-store block
and converts every stored field, a large part of the main thread's time in a search; a kept one is a
dictionary lookup. Searches share most of what they read: different queries reach mostly documents
an earlier one reached (`scripts/bench_search_ab.py --phases` counts the documents read). A document
address is that of one searcher, so a `StoredDocs` belongs to one searcher object: the engine starts
an empty one whenever its reader hands out another (a reload). Not keyed by the commit's digest, as
the search cache is: a commit landing between reading the digest and reloading would give a new
searcher the old digest, and its addresses other documents.
"""

import threading
from collections import OrderedDict

import tantivy

from engine.index import doc_key

MAX_KEPT_DOCS = 8192
"""Documents kept (least recently read dropped first): what a couple of hundred different
searches read, in memory a small part of a searcher's (`scripts/bench_memory.py`)."""


class StoredDocs:
    """Stored documents of one searcher, the most recently read kept."""

    def __init__(self, searcher: tantivy.Searcher, capacity: int = MAX_KEPT_DOCS) -> None:
        self.searcher = searcher
        self._capacity = capacity
        self._kept: OrderedDict[tuple[int, int], tantivy.Document] = OrderedDict()
        self._lock = threading.Lock()  # reads may run on several threads (the MCP server)

    def __len__(self) -> int:
        return len(self._kept)

    def doc(self, address: tantivy.DocAddress) -> tantivy.Document:
        """The stored document at `address` of this searcher."""
        key = doc_key(address)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
                return kept
        read = self.searcher.doc(address)
        with self._lock:
            self._kept[key] = read
            if len(self._kept) > self._capacity:
                self._kept.popitem(last=False)
        return read
