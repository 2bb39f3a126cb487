"""How answers look in a terminal: the two consoles, tables of steps, sessions and plain cells,
an index build's report and its progress bar."""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from engine import SessionMemory, StepSummary, SyncReport

PIPED_WIDTH = 4096
"""Output read by a program or a pager is not wrapped at 80 columns: lines are as long as
their content, so step ids and commands stay whole and copy-pasteable."""
out = Console(width=None if sys.stdout.isatty() else PIPED_WIDTH)
err = Console(stderr=True, width=None if sys.stderr.isatty() else PIPED_WIDTH)


def steps_table(
    title: str, steps: list[StepSummary], total: int, extra: str = "", hint: str | None = None
) -> None:
    """A table of result rows. Ids never wrap (a narrow terminal folds the snippet instead);
    the score and confidence columns appear only when the rows have them (search, not last);
    the screen is `acted on → ended on` when the two differ, as the match evidence names the
    first."""
    heading = escape(f"{title} ({total} in all{extra})")
    if not steps:
        out.print(heading + (f": {escape(hint)}" if hint else ""))
        return
    table = Table(title=heading, show_lines=False)
    scored = any(step.score is not None for step in steps)
    table.add_column("#", no_wrap=True)
    if scored:
        table.add_column("score", no_wrap=True)
        table.add_column("conf", no_wrap=True)
    table.add_column("session / step", no_wrap=True)
    table.add_column("tool", no_wrap=True)
    table.add_column("screen", no_wrap=True)
    table.add_column("snippet", overflow="fold")
    for rank, step in enumerate(steps, 1):
        mark = "" if step.ok else " [red]✗[/red]"
        screen = f"{step.onScreen} → {step.screen}" if step.onScreen else step.screen
        cells = [str(rank)]
        if scored:
            sure = f"{step.confidence:.2f}" if step.confidence is not None else ""
            cells += [f"{step.score:.1f}" if step.score is not None else "", sure]
        cells += [step.stepId, escape(step.tool) + mark, escape(screen), escape(step.snippet)]
        table.add_row(*cells)
    out.print(table)
    if hint:
        out.print(escape(hint))


def sessions_table(
    title: str, sessions: list[SessionMemory], total: int, extra: str, hint: str | None = None
) -> None:
    """A table of session results: the session, its goal, the screens it went through and
    the steps that matched; then the hint, if any."""
    table = Table(title=escape(f"{title} ({total} sessions in all{extra})"), show_lines=False)
    for column in ("#", "score", "conf", "session", "goal", "screens", "matched steps"):
        table.add_column(column, overflow="fold", no_wrap=column in ("#", "score", "session"))
    for rank, row in enumerate(sessions, 1):
        table.add_row(
            str(rank),
            f"{row.score:.2f}",
            f"{row.confidence:.2f}" if row.confidence is not None else "",
            row.sessionId,
            escape(row.session.goal or ", ".join(row.session.flowTags)),
            escape(" → ".join(row.screens)),
            "\n".join(step.split("/", 1)[-1] for step in row.matchedSteps),
        )
    out.print(table)
    if hint:
        out.print(escape(hint))


def cells_table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    """A table of plain cells: long ones fold, the first column (a count or a type) never."""
    table = Table(title=escape(title))
    for number, column in enumerate(columns):
        table.add_column(column, overflow="fold", no_wrap=number == 0)
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    out.print(table)


def sync_report(report: SyncReport) -> None:
    """What an index build did; a rebuild of a damaged index, every skipped file and every file
    read only in part (a warning) on stderr."""
    if report.rebuilt_because:
        err.print(f"[yellow]the index was damaged[/yellow] ({report.rebuilt_because}): rebuilt")
    out.print(
        f"indexed {report.steps_indexed} steps in {report.sessions_indexed} sessions "
        f"({report.sessions_unchanged} unchanged, {report.sessions_deleted} removed) "
        f"in {report.seconds:.2f}s"
    )
    for skip in report.skipped:
        err.print(f"[yellow]skipped[/yellow] {escape(skip.path)}: {escape(skip.reason)}")
    for warning in report.warnings:
        err.print(f"[yellow]warning[/yellow] {escape(warning.path)}: {escape(warning.reason)}")


@contextmanager
def progress(label: str, quiet: bool) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr, gone when done; `quiet` (--json) shows none."""
    if quiet:
        yield lambda done, total: None
        return
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
