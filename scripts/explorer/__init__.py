"""A deterministic explorer agent (no LLM) that completes tasks through knowhow's MCP tools,
with or without reading what earlier agents learned — the measuring stick of
`scripts/bench_reuse.py` and the reuse acceptance test."""

from explorer.agent import Explorer, Report
from explorer.calls import BudgetExhausted, Calls, knowhow_command, knowhow_stdio
from explorer.runs import run_tasks
from explorer.tasks import Task, TaskFileError, check_starts, load_tasks, task_url

__all__ = [
    "BudgetExhausted",
    "Calls",
    "Explorer",
    "Report",
    "Task",
    "TaskFileError",
    "check_starts",
    "knowhow_command",
    "knowhow_stdio",
    "load_tasks",
    "run_tasks",
    "task_url",
]
