"""The charts page: the index's activity (`KnowledgeEngine.activity`) laid out as inline SVG.

The engine counts (from fast fields and terms, not files); this module only turns counts into
bar positions and lengths, so the template places shapes and the page needs no script and no
chart library.
"""

from dataclasses import dataclass, field
from datetime import date, timedelta

from engine import Activity, RenamedId
from server.state import ServerState

WIDTH = 720
"""Width of a day chart (SVG user units; it scales with the page)."""
ROW_HEIGHT = 46
BAR_WIDTH = 200
"""Length of the longest horizontal bar."""


@dataclass
class Bar:
    x: float
    width: float
    height: float
    failed_height: float
    day: str
    steps: int
    failed: int


@dataclass
class FlowRow:
    """One flow's steps per day (the failed part in its own colour)."""

    flow: str
    steps: int
    failed: int
    bars: list[Bar]

    @property
    def rate(self) -> float:
        return self.failed / self.steps if self.steps else 0.0


@dataclass
class Share:
    """A horizontal bar: `value` (of `total`), `length` in `BAR_WIDTH` units."""

    label: str
    value: int
    total: int
    length: float
    screen: str


@dataclass
class ChangeDay:
    """A day knowledge changed: steps superseded (`length` in `BAR_WIDTH` units), ids renamed."""

    day: str
    superseded: int
    length: float
    renamed: list[RenamedId] = field(default_factory=list)


@dataclass
class Charts:
    first_day: str
    last_day: str
    steps: int
    failures_read: int
    superseded: int
    flows: list[FlowRow] = field(default_factory=list)
    screens: list[Share] = field(default_factory=list)
    targets: list[Share] = field(default_factory=list)
    changes: list[ChangeDay] = field(default_factory=list)


async def charts(state: ServerState) -> Charts | None:
    """The charts of the live generation; None when it holds no step."""

    def read() -> tuple[Activity | None, list[RenamedId]]:
        return state.engine.activity(), state.engine.renames()

    counted, renamed = await state.query(read)
    return None if counted is None else laid_out(counted, renamed)


def laid_out(counted: Activity, renamed: list[RenamedId]) -> Charts:
    first = date.fromisoformat(counted.firstDay)
    days = [(first + timedelta(days=i)).isoformat() for i in range(counted.days)]
    peak = max((max(f.steps) for f in counted.flows), default=0) or 1
    step = WIDTH / counted.days
    flows = [
        FlowRow(
            flow.flow,
            sum(flow.steps),
            sum(flow.failed),
            [
                Bar(
                    i * step,
                    step * 0.8,
                    ROW_HEIGHT * n / peak,
                    ROW_HEIGHT * f / peak,
                    day,
                    n,
                    f,
                )
                for i, (day, n, f) in enumerate(zip(days, flow.steps, flow.failed, strict=True))
                if n
            ],
        )
        for flow in counted.flows
    ]
    screens = [
        Share(s.screen, s.failed, s.steps, BAR_WIDTH * s.failed / max(s.steps, 1), s.screen)
        for s in counted.screens
    ]
    most = max((t.failed for t in counted.targets), default=1)
    targets = [
        Share(t.target, t.failed, counted.failuresRead, BAR_WIDTH * t.failed / most, t.screen)
        for t in counted.targets
    ]
    return Charts(
        counted.firstDay,
        days[-1],
        counted.steps,
        counted.failuresRead,
        counted.superseded,
        flows,
        screens,
        targets,
        changes(counted, renamed),
    )


def changes(counted: Activity, renamed: list[RenamedId]) -> list[ChangeDay]:
    """The days steps were superseded or testIds renamed, oldest first."""
    superseded = {d.day: d.count for d in counted.supersededDays}
    most = max(superseded.values(), default=1)
    by_day: dict[str, list[RenamedId]] = {}
    for rename in renamed:
        by_day.setdefault(rename.since, []).append(rename)
    return [
        ChangeDay(
            day,
            superseded.get(day, 0),
            BAR_WIDTH * superseded.get(day, 0) / most,
            by_day.get(day, []),
        )
        for day in sorted(set(superseded) | set(by_day))
    ]
