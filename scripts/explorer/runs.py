"""Run a list of tasks as one agent: one `knowhow serve` process, one browser session a task."""

from pathlib import Path

from explorer.agent import Explorer, Report
from explorer.calls import Calls, knowhow_stdio
from explorer.tasks import Task, task_url


async def run_tasks(
    tasks: list[Task],
    app_url: str,
    *,
    root: Path,
    index: Path,
    errlog: Path,
    serve_args: tuple[str, ...] = (),
    memory: bool,
    agent: str,
) -> list[Report]:
    """Each task in order as agent `agent` (with or without reading knowledge) on the app at
    `app_url`, recording into `root`; a new server process, so a new MCP session."""
    reports = []
    async with knowhow_stdio(root, index, errlog, *serve_args) as client:
        for task in tasks:
            explorer = Explorer(
                Calls(client, task.budget),
                task,
                task_url(app_url, task.start),
                memory=memory,
                agent=agent,
            )
            reports.append(await explorer.run())
    return reports
