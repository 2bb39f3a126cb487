"""How answers look in a terminal: the two consoles, tables of steps, sessions and plain cells,
an index build's report and its progress bar."""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from engine import SessionMemory, StepSummary, SyncReport

PIPED_WIDTH = 4096
"""Output read by a program or a pager is not wrapped at 80 columns: lines are as long as
their content, so step ids and commands stay whole and copy-pasteable."""
out = Console(width=None if sys.stdout.isatty() else PIPED_WIDTH)
err = Console(stderr=True, width=None if sys.stderr.isatty() else PIPED_WIDTH)


@contextmanager
def printing_to(stdout: TextIO, stderr: TextIO, width: int) -> Iterator[None]:
    """Print to `stdout` and `stderr` for a while, as to a terminal `width` columns wide where
    they say they are one (else as to a pipe), without colour: `sys.stdout`, `sys.stderr` and
    the two consoles (other modules hold them by name, so they are re-made in place and put
    back after). Not for two threads at once."""
    saved = sys.stdout, sys.stderr, dict(out.__dict__), dict(err.__dict__)
    sys.stdout, sys.stderr = stdout, stderr
    for console, stream in ((out, stdout), (err, stderr)):
        tty = stream.isatty()
        Console.__init__(
            console,
            file=stream,
            width=width if tty else PIPED_WIDTH,
            force_terminal=tty,
            color_system=None,
        )
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved[0], saved[1]
        out.__dict__.clear()
        out.__dict__.update(saved[2])
        err.__dict__.clear()
        err.__dict__.update(saved[3])


def steps_table(
    title: str, steps: list[StepSummary], total: int, extra: str = "", hint: str | None = None
) -> None:
    """A table of result rows. Ids never wrap (a narrow terminal folds the snippet, or puts it
    under its row: `cells_table`);
    the score and confidence columns appear only when the rows have them (search, not last);
    the screen is `acted on → ended on` when the two differ, as the match evidence names the
    first; a failed step's tool is marked ✗, a superseded one's `(superseded)`, one whose
    target deserves a second look (`caution`) `(caution)`."""
    heading = f"{title} ({total} in all{extra})"
    if not steps:
        out.print(escape(heading + (f": {hint}" if hint else "")))
        return
    scored = any(step.score is not None for step in steps)
    columns = ["#", *(["score", "conf"] * scored), "session / step", "tool", "screen", "snippet"]
    rows = []
    for rank, step in enumerate(steps, 1):
        tool = step.tool + ("" if step.ok else " ✗") + (" (superseded)" * bool(step.isSuperseded))
        tool += " (caution)" * bool(step.caution)
        screen = f"{step.onScreen} → {step.screen}" if step.onScreen else step.screen
        cells = [str(rank)]
        if scored:
            sure = f"{step.confidence:.2f}" if step.confidence is not None else ""
            cells += [f"{step.score:.1f}" if step.score is not None else "", sure]
        rows.append([*cells, step.stepId, tool, screen, step.snippet])
    cells_table(heading, columns, rows, whole=len(columns) - 1)
    if hint:
        out.print(escape(hint))


def sessions_table(
    title: str, sessions: list[SessionMemory], total: int, extra: str, hint: str | None = None
) -> None:
    """A table of session results: the session, its goal, the screens it went through and
    the steps that matched; then the hint, if any."""
    cells_table(
        f"{title} ({total} sessions in all{extra})",
        ["#", "score", "conf", "session", "goal", "screens", "matched steps"],
        [
            [
                str(rank),
                f"{row.score:.2f}",
                f"{row.confidence:.2f}" if row.confidence is not None else "",
                row.sessionId,
                row.session.goal or ", ".join(row.session.flowTags),
                " → ".join(row.screens),
                "\n".join(step.split("/", 1)[-1] for step in row.matchedSteps),
            ]
            for rank, row in enumerate(sessions, 1)
        ],
        whole=4,
    )
    if hint:
        out.print(escape(hint))


def cells_table(title: str, columns: list[str], rows: list[list[str]], whole: int = 1) -> None:
    """Rows of plain cells. On a terminal, a table: the first `whole` columns never wrap, the
    others fold, a ✗ is red. Read by a program or a pager, tab-separated lines instead: the
    title as a `# ` line, the column names, a line per row (a tab or line break in a cell
    becomes a space), so `cut`, `awk` or a spreadsheet read them and no line is padded."""
    if not sys.stdout.isatty():
        names = ["rank" if column == "#" else column for column in columns]
        lines = [f"# {title}", *("\t".join(map(_plain, row)) for row in [names, *rows])]
        sys.stdout.write("\n".join(lines) + "\n")
        return
    if _too_narrow(columns, rows):
        _blocks(title, rows)
        return
    table = Table(title=escape(title))
    for number, column in enumerate(columns):
        table.add_column(column, overflow="fold", no_wrap=number < whole)
    for row in rows:
        cells = [Text(cell) for cell in row]
        for cell in cells:
            cell.highlight_words(["✗"], "red")
        table.add_row(*cells)
    out.print(table)


MIN_LAST_COLUMN = 24
"""A table leaving its last column (the match evidence) less than this is printed as blocks."""


def _too_narrow(columns: list[str], rows: list[list[str]]) -> bool:
    """Whether the terminal is too narrow for the other columns and a readable last one."""
    widths = [
        max(len(line) for cell in [column, *(row[n] for row in rows)] for line in cell.split("\n"))
        for n, column in enumerate(columns[:-1])
    ]
    return sum(widths) + 3 * len(columns) + 1 + MIN_LAST_COLUMN > out.width


def _blocks(title: str, rows: list[list[str]]) -> None:
    """Each row as a line of its cells and, under it, its last cell indented and wrapped: on
    an 80-column terminal the evidence stays on screen."""
    out.print(escape(title), style="bold")
    for row in rows:
        line = Text("  ".join(cell.replace("\n", ", ") for cell in row[:-1]), no_wrap=True)
        line.highlight_words(["✗"], "red")
        out.print(line, overflow="fold")
        out.print(Padding(Text(row[-1]), (0, 0, 0, 4)))


def _plain(cell: str) -> str:
    return " ".join(cell.replace("\t", " ").splitlines())


def counted(number: int, noun: str) -> str:
    """`1 session`, `5 sessions`."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def sync_report(report: SyncReport) -> None:
    """What an index build did; a rebuild of a damaged index, every skipped file and every file
    read only in part (a warning) on stderr."""
    if report.rebuilt_because:
        err.print(f"[yellow]rebuilt the index[/yellow]: {escape(report.rebuilt_because)}")
    steps, sessions = (
        counted(report.steps_indexed, "step"),
        counted(report.sessions_indexed, "session"),
    )
    out.print(
        f"indexed {steps} in {sessions} "
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
