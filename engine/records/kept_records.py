"""Records of very large step files, kept per process so that such a file is decoded once.

A step file another program wrote may hold tens of MB (`engine.records.limits`: read up to
`MAX_READ_FILE_BYTES`, then cut). Decoding it is most of what any read of its session costs,
and after the index read it, its session is read again by every summary (and page of one) that
covers it, and by the live index whenever it reads the session again. So the cut record of a
file larger than `KEPT_FILE_BYTES` is kept, by the file's identity and `fstat`, and a read that
finds the file unchanged opens it but reads nothing (`scripts/adversary.py`, the 50 MB step
file attack, measures it). A file written again has another modification or change time, so it
is read again; records are never changed in place (a changed record is a copy), so one record
can be shared by every reader.
"""

import os
import threading

from engine.records.limits import MAX_RECORD_BYTES
from engine.records.models import StepRecord

KEPT_FILE_BYTES = MAX_RECORD_BYTES
"""Files larger than this (more than any record knowhow itself records, as compact JSON) have
their record kept; smaller ones decode in a few milliseconds at most and are read each time."""
KEPT_RECORDS = 32
"""Large files whose records a process keeps (each record is cut, so each is small), the
least recently read dropped first."""

FileKey = tuple[int, int, int, int, int]


def _key(info: os.stat_result) -> FileKey:
    """What identifies one version of a file: the file (device, inode), its size and its
    modification and change times (a rewrite changes the change time even when it restores the
    modification time)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class KeptRecords:
    """The records of the last `KEPT_RECORDS` large step files read, by file version; shared
    by the threads of a server (its live index and the tools it serves), hence the lock."""

    def __init__(self) -> None:
        self._records: dict[FileKey, StepRecord] = {}
        self._lock = threading.Lock()

    def get(self, info: os.stat_result) -> StepRecord | None:
        """The record of the file `info` is the `fstat` of, when it was kept unchanged."""
        if info.st_size <= KEPT_FILE_BYTES:
            return None
        key = _key(info)
        with self._lock:
            record = self._records.pop(key, None)
            if record is not None:
                self._records[key] = record  # now the most recently read
            return record

    def keep(self, info: os.stat_result, record: StepRecord) -> None:
        """Keep `record`, read from the file `info` is the `fstat` of, when the file is large."""
        if info.st_size <= KEPT_FILE_BYTES:
            return
        with self._lock:
            self._records[_key(info)] = record
            if len(self._records) > KEPT_RECORDS:
                del self._records[next(iter(self._records))]  # the least recently read


kept_records = KeptRecords()
"""The process's kept records (`KnowledgeStore` reads step files through it)."""
