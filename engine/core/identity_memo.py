"""Values derived from shared objects, remembered by identity.

Parsed observations are shared by every record that holds the same one (`knowledge_root.parse_step`:
agents see the same screens again and again), and what a step's analysis derives from its
observation alone (field texts, the session context's refs, observed secrets) is then the same
for all of them. Observations are pydantic models: not hashable, and hashing their contents
would cost what deriving does, so the derived value is remembered by the object's identity.
"""

from collections.abc import Callable
from typing import Generic, TypeVar

OBSERVATIONS_CACHED = 2_048
"""Distinct observations a process keeps parsed (`knowledge_root.parse_step`), and values
derived from them."""

K = TypeVar("K")
V = TypeVar("V")


class ByIdentity(Generic[K, V]):
    """`derive(obj)`, remembered for the last `size` objects it was asked about. Objects must
    never change once asked about (records are copied, never changed in place). Each entry
    holds its object, so no other object can take its id while the entry exists."""

    def __init__(self, derive: Callable[[K], V], size: int) -> None:
        self._derive = derive
        self._size = size
        self._entries: dict[int, tuple[K, V]] = {}

    def __call__(self, obj: K) -> V:
        entry = self._entries.get(id(obj))
        if entry is None:
            entry = self._entries[id(obj)] = (obj, self._derive(obj))
            if len(self._entries) > self._size:
                del self._entries[next(iter(self._entries))]  # the oldest
        return entry[1]
