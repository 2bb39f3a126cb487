"""The step order of a long session whose file names do not tell it, kept while its files are
unchanged.

A session that mixes the two name forms (knowhow recording into a session another recorder
started) is in the order of its records' times (`engine.records.step_names`), so ordering it
reads every step file. A summary of a long session is read a page at a time, and each page
needs that order: it is kept per process by the session's listing signature (the names, sizes
and modification times of its files, `list_session`: one `lstat` a file, no file read), so only
the first page reads the whole session and the next ones read their own steps.
"""

import threading

from engine.records import KnowledgeStore, list_session

SESSIONS_KEPT = 8
"""Sessions whose order a process keeps, the least recently asked dropped first."""


class TimedOrders:
    """Step file names in step order, by session and listing signature."""

    def __init__(self) -> None:
        self._orders: dict[tuple[str, str], tuple[str, list[str]]] = {}
        self._lock = threading.Lock()

    def order(self, store: KnowledgeStore, session_id: str) -> list[str]:
        """The session's readable step files in step order (read whole unless kept)."""
        key = (str(store.root), session_id)
        signature = list_session(store.root, session_id).signature
        with self._lock:
            kept = self._orders.pop(key, None)
            if kept is not None and kept[0] == signature:
                self._orders[key] = kept  # now the most recently asked
                return kept[1]
        whole = store.load_session(session_id)
        ordered = [step.step_id.split("/", 1)[1] + ".json" for step in whole.steps]
        if whole.signature == signature:  # unchanged while it was read
            with self._lock:
                self._orders[key] = (signature, ordered)
                if len(self._orders) > SESSIONS_KEPT:
                    del self._orders[next(iter(self._orders))]
        return ordered


timed_orders = TimedOrders()
"""The process's kept orders (`engine.history.recipe.summarize_page` asks it)."""
