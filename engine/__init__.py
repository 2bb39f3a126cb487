"""The engine's front door: everything `server/` (MCP tools and the CLI) may use.

The engine keeps the knowledge (session and step files, the truth) and its Tantivy index
(a cache rebuilt from the files), and answers searches over it. Modules inside `engine/` import
each other directly; code outside imports only the names below, so a module can be split or
renamed without touching the server. `tests/test_layers.py` holds both rules, and pins this list
to exactly the names used from outside (sorted): an export nobody imports is not kept.
"""

from engine.decisions import supersede_step
from engine.errors import (
    IndexUnavailable,
    InvalidInput,
    KnowhowError,
    NoActiveSession,
    NotFound,
    WriteFailed,
)
from engine.files import session_dir
from engine.index_status import IndexStatus
from engine.indexer import SyncReport, ensure_index, rebuild
from engine.inputs import (
    ClusterInput,
    DuplicatesInput,
    LastInput,
    SearchInput,
    SessionId,
    SessionsInput,
    StepInput,
    Strict,
    SummarizeInput,
    SupersedeInput,
    TimelineInput,
    validate,
)
from engine.knowledge import KnowledgeEngine
from engine.labels import labelled
from engine.lease import WriterLease
from engine.limits import check_record
from engine.live import LiveIndex
from engine.models import (
    A11yHint,
    A11yNode,
    A11ySnapshot,
    GitInfo,
    Observation,
    Outcome,
    Record,
    ScreenState,
    SessionMetadata,
    StepError,
    StepRecord,
    StepTarget,
    TestIdItem,
    ToolCall,
    now_iso,
    parse_time,
)
from engine.prior import PriorKnowledge, ScreenContext
from engine.recall import Offers, result_offers, suggestion_offers, with_recalls
from engine.redaction import is_secret, scrub_step
from engine.results import (
    ClusterList,
    DuplicateList,
    Result,
    SearchPage,
    SessionList,
    SessionMemory,
    SessionRecipe,
    StepList,
    StepSummary,
)
from engine.screens import ScreenRules, default_rules
from engine.settings import Settings
from engine.store import KnowledgeStore

__all__ = [
    "A11yHint",
    "A11yNode",
    "A11ySnapshot",
    "ClusterInput",
    "ClusterList",
    "DuplicateList",
    "DuplicatesInput",
    "GitInfo",
    "IndexStatus",
    "IndexUnavailable",
    "InvalidInput",
    "KnowhowError",
    "KnowledgeEngine",
    "KnowledgeStore",
    "LastInput",
    "LiveIndex",
    "NoActiveSession",
    "NotFound",
    "Observation",
    "Offers",
    "Outcome",
    "PriorKnowledge",
    "Record",
    "Result",
    "ScreenContext",
    "ScreenRules",
    "ScreenState",
    "SearchInput",
    "SearchPage",
    "SessionId",
    "SessionList",
    "SessionMemory",
    "SessionMetadata",
    "SessionRecipe",
    "SessionsInput",
    "Settings",
    "StepError",
    "StepInput",
    "StepList",
    "StepRecord",
    "StepSummary",
    "StepTarget",
    "Strict",
    "SummarizeInput",
    "SupersedeInput",
    "SyncReport",
    "TestIdItem",
    "TimelineInput",
    "ToolCall",
    "WriteFailed",
    "WriterLease",
    "check_record",
    "default_rules",
    "ensure_index",
    "is_secret",
    "labelled",
    "now_iso",
    "parse_time",
    "rebuild",
    "result_offers",
    "scrub_step",
    "session_dir",
    "suggestion_offers",
    "supersede_step",
    "validate",
    "with_recalls",
]
