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
from collections.abc import Sequence

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
        return self.docs([address])[0]

    def docs(self, addresses: Sequence[tantivy.DocAddress]) -> list[tantivy.Document]:
        """The stored documents at `addresses` of this searcher, in order (a rerank window's
        hundred at once: the kept ones are looked up under one lock)."""
        keys = [doc_key(address) for address in addresses]
        kept = self._kept
        with self._lock:
            found = {key: doc for key in keys if (doc := kept.get(key)) is not None}
            for key in found:
                kept.move_to_end(key)
        read = {
            key: self.searcher.doc(address)
            for key, address in zip(keys, addresses, strict=True)
            if key not in found
        }
        if read:
            with self._lock:
                kept.update(read)
                while len(kept) > self._capacity:
                    kept.popitem(last=False)
            found |= read
        return [found[key] for key in keys]
