"""First paint of the web page's pages, and searches through the page, on a generated corpus.

Usage:
    .venv/bin/python scripts/bench_ui.py [--steps 100000] [--seed 7] [--work bench-data]
        [--rounds 5] [--queries 20] [--write]

Generates the corpus (scripts/corpus/gen_corpus.py), indexes a private copy of it with `knowhow
index` (the copy and its index are kept in the work folder for the next run), serves it with
`knowhow serve --transport http` and opens each page in Chromium (Playwright): from an open
tab, as a person goes from page to page, and in a new browser context (a new renderer process:
the cold case). The time from navigation start to the first contentful
paint is the server's answer and the browser's rendering together. Each search is a different
query (the dev queries), so no answer comes from the engine's cache of recent searches. The
charts are counted once per commit of the index, so a step is recorded (and indexed) before
each charts page: every one is counted afresh, as while agents record. The
baseline, measured in the same run, is the search page without a query: the same server,
template and browser with no engine call. One round is run first and not counted (the embedding
model loads on the first hybrid search). `--write` replaces the `ui-<steps>` section of
docs/benchmarks.md.
"""

import argparse
import json
import subprocess
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote_plus

from bench_common import (
    DEV_QUERIES,
    REPO,
    err,
    knowhow_cmd,
    machine,
    machine_md,
    md_table,
    median,
    out,
    private_copy,
    run,
    write_section,
)
from bench_common import ensure_corpus as make_corpus
from playwright.sync_api import Browser, Page, ViewportSize, sync_playwright

from engine import KnowledgeStore, Outcome, StepRecord, ToolCall, now_iso
from server.browser.driver import CHROMIUM_ARGS, chromium_executable

PORT = 8799
VIEWPORT: ViewportSize = {"width": 1366, "height": 800}
TARGETS_MS = {
    100_000: {"page": 500.0, "search": 200.0},
    1_000_000: {"charts": 1000.0},
}
"""The targets by corpus size: every page's first paint and a search at 100k, the charts at 1M."""
PAINT = """() => {
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  const nav = performance.getEntriesByType("navigation")[0];
  return {paint: paint ? paint.startTime : null, response: nav.responseEnd};
}"""


def largest_session(root: Path) -> str:
    """The session with the most step files (the heaviest session page)."""
    sessions = [s for s in root.iterdir() if (s / "steps").is_dir()]
    return max(sessions, key=lambda s: sum(1 for _ in (s / "steps").iterdir())).name


def serve(root: Path, index: Path, log: Path) -> subprocess.Popen[bytes]:
    args = ["serve", "--transport", "http", "--port", str(PORT), "--root", str(root)]
    with log.open("w") as errlog:
        proc = subprocess.Popen([*knowhow_cmd(), *args, "--index", str(index)], stderr=errlog)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/ui/api/version", timeout=2)
            return proc
        except OSError:
            time.sleep(0.25)
    proc.terminate()
    raise SystemExit(f"the server did not answer; see {log}")


def first_paint(browser: Browser, url: str) -> tuple[float, float]:
    """(first contentful paint, response end) in ms from navigation start, in a fresh context:
    a page opened anew, its stylesheet and script fetched too."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        return painted(context.new_page(), url)
    finally:
        context.close()


def painted(page: Page, url: str) -> tuple[float, float]:
    """Navigate `page` to `url`: (first contentful paint, response end) in ms from its start."""
    page.goto(url, wait_until="load")
    timing = page.evaluate(PAINT)
    while timing["paint"] is None:  # painted after `load` (polled: the CSP forbids eval)
        page.wait_for_timeout(20)
        timing = page.evaluate(PAINT)
    return float(timing["paint"]), float(timing["response"])


def row(
    name: str, timings: list[tuple[float, float]], floor: float, target: float | None
) -> list[str]:
    """A table row: first paint (median, p95, ratio to the baseline's median), when the server's
    answer had arrived (response end), the target and whether the median meets it."""
    paints = [paint for paint, _ in timings]
    answered = median([response for _, response in timings])
    verdict = "" if target is None else "PASS" if median(paints) <= target else "FAIL"
    return [
        name,
        f"{median(paints):.0f} ms",
        f"{p95(paints):.0f} ms",
        f"{median(paints) / floor:.2f}",
        f"{answered:.0f} ms",
        "—" if target is None else f"≤ {target:.0f} ms",
        verdict,
    ]


def recorded(root: Path, base: str) -> None:
    """Record a step and wait until the server's index holds it: the charts are counted once per
    commit, so the next charts page counts afresh, as it does while agents record."""
    before = version(base)
    session = next(s.name for s in sorted(root.iterdir()) if (s / "steps").is_dir())
    step = StepRecord(
        timestamp=now_iso(),
        sessionId=session,
        tool=ToolCall(name="mm_click"),
        outcome=Outcome(ok=True),
    )
    KnowledgeStore(root).record_step(step)
    deadline = time.monotonic() + 60
    while version(base) == before:
        if time.monotonic() > deadline:
            raise SystemExit("the server did not index a recorded step within 60 s")
        time.sleep(0.05)


def version(base: str) -> str:
    with urllib.request.urlopen(f"{base}/api/version", timeout=10) as answer:
        return str(json.loads(answer.read())["version"])


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", type=Path, default=REPO / "bench-data")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    work = args.work.resolve()
    corpus = make_corpus(work, args.steps, args.seed).parents[1]
    copy = work / f"ui-{args.steps}-s{args.seed}"
    root = copy / "test-artifacts" / "llm-knowledge"
    if not root.is_dir():
        private_copy(corpus, copy)
    index = work / f"ui-index-{args.steps}-s{args.seed}"
    built = run(
        [*knowhow_cmd(), "index", "--root", str(root), "--index", str(index)],
        work / "logs" / "ui-index.log",
    )
    if not built.ok:
        raise SystemExit(f"index failed; see {built.log}")
    queries = [json.loads(line)["query"] for line in DEV_QUERIES.read_text().splitlines()]
    base = f"http://127.0.0.1:{PORT}/ui"
    pages = {
        "search page, no query (baseline)": f"{base}/",
        "session (largest)": f"{base}/session/{largest_session(root)}",
        "screen `home`": f"{base}/screen?name=home",
        "charts": f"{base}/charts",
    }
    server = serve(root, index, work / "logs" / "ui-serve.log")
    cold: dict[str, list[tuple[float, float]]] = {name: [] for name in pages}
    warm: dict[str, list[tuple[float, float]]] = {name: [] for name in pages}
    searches: list[tuple[float, float]] = []
    try:
        with sync_playwright() as playwright:
            executable = chromium_executable(None)
            browser = playwright.chromium.launch(
                executable_path=str(executable) if executable else None, args=list(CHROMIUM_ARGS)
            )
            for url in pages.values():  # the round not counted: model, caches, first reads
                first_paint(browser, url)
            first_paint(browser, f"{base}/?q={quote_plus(queries[-1])}")
            for round_number in range(args.rounds):
                tab = browser.new_page(viewport=VIEWPORT)
                painted(tab, f"{base}/")  # the open page a person goes from page to page in
                for name, url in pages.items():
                    if name == "charts":
                        recorded(root, base)
                    cold[name].append(first_paint(browser, url))
                    if name == "charts":
                        recorded(root, base)
                    warm[name].append(painted(tab, url))
                tab.context.close()
                err(
                    f"round {round_number + 1}: "
                    + ", ".join(
                        f"{n.split(' ')[0]} {cold[n][-1][0]:.0f}/{warm[n][-1][0]:.0f}"
                        for n in pages
                    )
                )
            tab = browser.new_page(viewport=VIEWPORT)
            painted(tab, f"{base}/")
            for query in queries[: args.queries]:
                searches.append(painted(tab, f"{base}/?q={quote_plus(query)}"))
            browser.close()
    finally:
        server.terminate()
        server.wait(30)
    baseline = "search page, no query (baseline)"
    cold_floor = median([paint for paint, _ in cold[baseline]])
    warm_floor = median([paint for paint, _ in warm[baseline]])
    targets = TARGETS_MS.get(args.steps, {})

    def target(name: str) -> float | None:
        """Searches have theirs; a page has the charts' target or every page's."""
        return targets.get(name, targets.get("page") if name != "search" else None)

    rows = [row(name, warm[name], warm_floor, target(name)) for name in pages]
    searched = f"search, {len(searches)} different queries"
    rows.append(row(searched, searches, warm_floor, target("search")))
    rows += [
        row(f"{name}, in a new browser context", cold[name], cold_floor, target(name))
        for name in pages
    ]
    headers = ["page", "first paint, median", "p95", "vs baseline", "answered (median)", "target"]
    table = md_table([*headers, ""], rows)
    body = (
        f"## The web page at {args.steps:,} steps (`scripts/bench_ui.py`)\n\n"
        f"{machine_md(machine())}"
        f"- corpus: `gen_corpus.py --steps {args.steps} --seed {args.seed}`; {args.rounds} rounds "
        f"after one uncounted round; each page opened from an open tab (as a person goes from "
        f"page to page: stylesheet and script cached), and again in a new browser context (a "
        f"new renderer process: the cold case); searches: the first {len(searches)} dev "
        f"queries, one load each, from an open tab; before each charts page a step is "
        f"recorded and indexed, so the charts are counted afresh (they are kept per commit)\n"
        f"- first paint: navigation start to first contentful paint in Chromium, server and "
        f"browser together, the server on the same machine; answered: when the server's "
        f"answer had arrived (response end); vs baseline: against the search page without a "
        f"query in the same setting (no engine call)\n\n{table}"
    )
    out(body)
    if args.write:
        write_section(f"ui-{args.steps}", body)


if __name__ == "__main__":
    main()
