"""The live index of a serving process: the writer lease shared across processes, the
watcher that maps file events to sessions, the writer that keeps the index equal to the files
and fails over, and the status it reports. Imports the layers up to `engine.index`; never
`engine.query` (a writer needs no reads of the kind searches make, and searches never write).
"""

from engine.live.lease import WriterLease, writer_pid
from engine.live.live_index import LiveIndex, built_by_other_version
from engine.live.status import IndexStatus, LagMeter, document_counts
from engine.live.watcher import session_of

__all__ = [
    "IndexStatus",
    "LagMeter",
    "LiveIndex",
    "WriterLease",
    "built_by_other_version",
    "document_counts",
    "session_of",
    "writer_pid",
]
