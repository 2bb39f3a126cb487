"""Tool names of both generations of recorders, and the step labels derived from them.

Recorders name their tools with a prefix (`mm_click`: the specs' recorder, knowhow's own tools
with `--tool-prefix`) or without one (`click`: today's MetaMask recorder). `tool_action` gives
the action either way, so filters, labels, summaries and suggestions treat them as one.

Labels (IMPROVEMENT-01 §4.2, as the TS recorders derive them, extended to today's tools):
discovery: describe_screen, list_testids, accessibility_snapshot, get_state, get_text
navigation: navigate, switch_to_tab, close_tab, wait_for_notification (also `confirmation`: a
notification is where a request is confirmed)
interaction: click, type, wait_for — plus `confirmation` when the target mentions confirm,
approve or submit
setup: build, seed_contract(s), mock_network, cdp, set_context (preparing the test, never an
action to suggest). Any failure adds `error-recovery`. Other tools (launch, screenshot, cleanup,
run_steps, the knowledge tools) get no label of their own; a batch gets its actions' labels.
"""

from functools import lru_cache

from engine.records.models import StepRecord, StepTarget

DISCOVERY_TOOLS = frozenset(
    {"describe_screen", "list_testids", "accessibility_snapshot", "get_state", "get_text"}
)
NAVIGATION_TOOLS = frozenset({"navigate", "wait_for_notification", "switch_to_tab", "close_tab"})
INTERACTION_TOOLS = frozenset({"click", "type", "wait_for"})
SETUP_TOOLS = frozenset(
    {"build", "seed_contract", "seed_contracts", "mock_network", "cdp", "set_context"}
)
READING_TOOLS = frozenset(
    {
        "knowledge_last",
        "knowledge_search",
        "knowledge_summarize",
        "knowledge_sessions",
        "get_context",
        "list_contracts",
        "get_contract_address",
    }
)
"""Tools that read what is known (the knowledge store, the test's own set-up), not the page."""
BATCH_TOOL = "run_steps"
"""A batch of actions in one record (`engine.records.batches`)."""
_CONFIRM_WORDS = ("confirm", "approve", "submit")


KNOWN_ACTIONS = sorted(
    DISCOVERY_TOOLS
    | NAVIGATION_TOOLS
    | INTERACTION_TOOLS
    | SETUP_TOOLS
    | READING_TOOLS
    | {"launch", "screenshot", "cleanup", "clipboard", BATCH_TOOL},
    key=len,
    reverse=True,
)


@lru_cache(maxsize=1024)
def tool_action(tool_name: str) -> str:
    """`mm_click` -> `click`: the tool without its (configurable, possibly empty) prefix.

    Known actions are matched as suffixes, so `describe_screen`, `app_wait_for` and
    `my_app_click` all resolve; an unknown tool loses everything up to its first `_`.
    """
    for action in KNOWN_ACTIONS:
        if tool_name == action or tool_name.endswith("_" + action):
            return action
    return tool_name.split("_", 1)[1] if "_" in tool_name else tool_name


def derive_labels(tool_name: str, target: StepTarget | None, ok: bool) -> list[str]:
    action = tool_action(tool_name)
    labels: list[str] = []
    if action in DISCOVERY_TOOLS:
        labels.append("discovery")
    elif action in NAVIGATION_TOOLS:
        labels.append("navigation")
        if action == "wait_for_notification":
            labels.append("confirmation")
    elif action in SETUP_TOOLS:
        labels.append("setup")
    elif action in INTERACTION_TOOLS:
        labels.append("interaction")
        if target is not None:
            text = target.model_dump_json(exclude_none=True).lower()
            if any(word in text for word in _CONFIRM_WORDS):
                labels.append("confirmation")
    if not ok:
        labels.append("error-recovery")
    return labels


def record_labels(record: StepRecord) -> list[str]:
    """A step's labels: the recorder's own, then those derived from tool and outcome that it
    did not give (today's recorder labels `switch_to_tab` or `mock_network` with nothing)."""
    derived = derive_labels(record.tool.name, record.tool.target, record.outcome.ok)
    if record.labels is None:
        return derived
    return list(dict.fromkeys([*record.labels, *derived]))


def labelled(record: StepRecord) -> StepRecord:
    """The record with its labels filled in when it has none, as it is stored (labels a
    recorder gave are kept as given; `record_labels` adds the derived ones when indexing)."""
    if record.labels is not None:
        return record
    return record.model_copy(update={"labels": record_labels(record)})
