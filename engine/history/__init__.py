"""Reads of what was recorded that take no query text: the newest steps and sessions
(`listing`), the activity per day, flow and screen (`activity`), a step's timeline and context,
a session's recipe (`summarize`), priorKnowledge for a screen (and which remembered targets
deserve a `caution`), and the recall links a later step records. Imports the layers up to
`engine.query`; never `engine.meaning` (they sit side by side).
"""

from engine.history.activity import Activity, count_activity
from engine.history.caution import caution_for
from engine.history.listing import (
    last_steps,
    newest_session_id,
    one_session,
    session_list,
    session_page,
)
from engine.history.prior import PriorKnowledge, prior_knowledge
from engine.history.recall_links import (
    Offers,
    offered_keys,
    result_offers,
    suggestion_offers,
    with_recalls,
)
from engine.history.recipe import SILENT_TOOLS, summarize, summarize_session
from engine.history.screen_now import ScreenContext
from engine.history.session_context import StepContext, TimelineResult, step_context, timeline

__all__ = [
    "SILENT_TOOLS",
    "Activity",
    "Offers",
    "PriorKnowledge",
    "ScreenContext",
    "StepContext",
    "TimelineResult",
    "caution_for",
    "count_activity",
    "last_steps",
    "newest_session_id",
    "offered_keys",
    "one_session",
    "prior_knowledge",
    "result_offers",
    "session_list",
    "session_page",
    "step_context",
    "suggestion_offers",
    "summarize",
    "summarize_session",
    "timeline",
    "with_recalls",
]
