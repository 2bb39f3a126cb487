"""The live index of a serving process, one class per job: `LiveIndex` keeps the writer lease
(`lease`: one writer across processes) and runs the worker loop; `SessionChanges` (`changes`)
queues the sessions the watcher (`watcher`) reports; `LiveWriter` (`writing`) opens, rebuilds,
reconciles and commits; `GenerationHealth` (`health`) checks the generation being written; and
`status` says what `mm_knowledge_status` reports, with the counts of `stats`. Imports the layers
up to `engine.index`; never `engine.query`, which sits beside it (a writer makes no reads of the
kind searches make, and searches never write).
"""

from engine.live.lease import WriterLease, writer_pid
from engine.live.live_index import LiveIndex
from engine.live.status import IndexStatus, LagMeter, document_counts
from engine.live.watcher import session_of
from engine.live.writing import built_by_other_version

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
