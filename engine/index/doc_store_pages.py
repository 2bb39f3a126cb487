"""Unmap the doc-store pages searches read, every few searches (Linux; elsewhere nothing;
the engine decides when: `PageRelease`).

Why: Tantivy memory-maps every segment file, and each page a read touches stays mapped, counted
in the searcher's resident memory, until the reader closes. For the doc store that adds up to
most of the file: a search reads a hundred or more stored documents at random places, and the
kernel maps the pages around every page fault from the page cache (fault-around;
`MADV_RANDOM` does not change it). After a few hundred searches of a large index most of its
doc store was resident, the largest part of a searcher's RSS (`scripts/bench_memory.py` shows
the breakdown). Where the page cache holds the file in large folios (ext4 on Linux 6.x, once
the file is read back after being evicted), a fault maps the whole folio, many times a
document's pages, so the engine also releases on growth (`RELEASE_GROWTH_BYTES`, measured by
`resident_bytes`). The doc store is not a working set: each search reads its own documents.
`madvise(DONTNEED)` on a read-only file mapping only drops the process's page-table entries:
the pages stay in the kernel's page cache (shared, and reclaimable first once no process maps
them), and the next read of one maps it again with a minor fault, a small cost per search. The
other index files (postings, term dictionaries, fieldnorms, fast fields) are what every search
reads again: they stay mapped (unmapping them too made every search fault them back in).

Safety: `DONTNEED` discards anonymous memory, so a range is released only when it is certainly
a live doc-store mapping: the `.store` file of a segment the caller's searcher holds (the
searcher keeps its mapping in place while the caller holds it), mapped without write
permission, and listed exactly once in `/proc/self/maps` when looked up. A mapping that stays
in place while the file is read is listed exactly once; a second one of the same file (another
index object of this process, a merge of the writer) could be unmapped meanwhile, and its
address reused, so such a file is left mapped. Without `/proc/self/maps` or `madvise` nothing
is released.
"""

import ctypes
import mmap
from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path

MAPS = Path("/proc/self/maps")
STATM = Path("/proc/self/statm")
SEARCHES_PER_RELEASE = 8
"""Searches between two releases of the doc-store pages they mapped: releasing costs a walk
of the whole mapping and the pages a later search reads again fault back in, so it is paid
once per few searches; the searcher's resident memory then holds at most the pages of the
last few searches' stored documents (`scripts/bench_memory.py`)."""
RELEASE_GROWTH_BYTES = 32 * 1024 * 1024
"""...or sooner, once the process's resident memory grew this much since the last release.
How much a stored document maps depends on the kernel's page cache, not on us: where it holds
a file in large folios (ext4 on Linux 6.x, once a file is read back after being evicted), a
fault maps the whole folio, and a few searches' worth then raised a searcher's RSS well above
a fresh index's; released on growth, it stays near it (`scripts/bench_speed.py` and
`scripts/bench_memory.py` at 1M steps; docs/benchmarks.md)."""


class PageRelease:
    """When to release a reader's doc-store pages: once `SEARCHES_PER_RELEASE` searches' worth
    of reads ran since the last release, or sooner once the process's resident memory grew by
    `RELEASE_GROWTH_BYTES` (before any release: since the first read)."""

    def __init__(self) -> None:
        self._unreleased = 0
        """Searches' worth of reads since the pages were last released."""
        self._resident_at_release: int | None = None
        """The process's resident bytes after that release."""

    def count(self, searches: int) -> None:
        """A read ran, worth `searches` searches (a search 1, a reload 0, any other read, which
        may read thousands of documents, all of them: released at once)."""
        self._unreleased += searches

    def due(self) -> bool:
        return self._unreleased >= SEARCHES_PER_RELEASE or self._resident_grew()

    def released(self) -> None:
        self._unreleased = 0
        self._resident_at_release = resident_bytes()

    def _resident_grew(self) -> bool:
        """Whether the process's resident memory grew by `RELEASE_GROWTH_BYTES` since the last
        release (before any: since the first read)."""
        resident = resident_bytes()
        if resident is None or self._resident_at_release is None:
            self._resident_at_release = resident
            return False
        return resident - self._resident_at_release > RELEASE_GROWTH_BYTES


def store_files(generation: Path, segment_ids: Iterable[str]) -> frozenset[str]:
    """The doc-store files of these segments (Tantivy's segment ids, as in its `meta.json`),
    as `/proc/self/maps` names them (the real path)."""
    folder = generation.resolve()
    return frozenset(str(folder / f"{sid.replace('-', '')}.store") for sid in segment_ids)


class StoreMappings:
    """The mappings of one searcher's doc-store `files`; the caller keeps the searcher alive
    as long as this object (see the module docstring).

    Each file is looked up in `/proc/self/maps` once, at the first release after a searcher
    first holds it (reading the listing walks every
    mapping of the process, hundreds with a loaded model, and the server reloads its searcher
    before every query). A searcher loaded while the `previous`
    one (of the same index object) is alive shares that one's mappings of the files both hold
    (Tantivy maps a file once per index object while it is mapped), so what the previous
    found, or could not find, carries over."""

    def __init__(
        self, files: frozenset[str], previous: "StoreMappings | None" = None, maps: Path = MAPS
    ) -> None:
        self._maps = maps
        self._files = files
        self._found: dict[str, tuple[int, int]] = {}
        """file -> (start address, length) of its mapping."""
        self._unchecked = files
        """The files not looked up yet."""
        if previous is not None:
            self._found = {f: bounds for f, bounds in previous._found.items() if f in files}
            self._unchecked = (files & previous._unchecked) | (files - previous._files)

    def release(self) -> int:
        """Unmap the pages read so far; the bytes of address range released (0 where
        unsupported)."""
        madvise = _madvise()
        if madvise is None:
            return 0
        if self._unchecked:
            # Replaced, never changed in place: a search on another thread may be releasing too.
            self._found = {**self._found, **_mappings(self._unchecked, self._maps)}
            self._unchecked = frozenset()
        released = 0
        for start, length in self._found.values():
            if madvise(start, length, mmap.MADV_DONTNEED) == 0:
                released += length
        return released


def resident_bytes(statm: Path = STATM) -> int | None:
    """This process's resident memory (`/proc/self/statm`: one small read), or None where
    unknown."""
    try:
        return int(statm.read_text().split()[1]) * mmap.PAGESIZE
    except (OSError, IndexError, ValueError):
        return None


def _mappings(files: frozenset[str], maps: Path) -> dict[str, tuple[int, int]]:
    """The read-only mapping of each of `files` listed exactly once in `maps`."""
    try:
        listing = maps.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return {}
    ranges: dict[str, tuple[int, int]] = {}
    seen: Counter[str] = Counter()
    for line in listing.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or fields[5] not in files:
            continue
        seen[fields[5]] += 1
        if "w" not in fields[1]:
            start, end = (int(bound, 16) for bound in fields[0].split("-"))
            ranges[fields[5]] = (start, end - start)
    return {name: bounds for name, bounds in ranges.items() if seen[name] == 1}


@cache
def _madvise() -> "ctypes._NamedFuncPointer | None":
    """libc's madvise, or None where there is none to call."""
    if not hasattr(mmap, "MADV_DONTNEED") or not MAPS.exists():
        return None
    try:
        function = ctypes.CDLL(None).madvise
    except (OSError, AttributeError):  # no C library to call
        return None
    function.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    function.restype = ctypes.c_int
    return function
