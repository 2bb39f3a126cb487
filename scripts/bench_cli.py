"""The `knowhow` command's whole-process wall time, cold (in-process) against served (answered
by `knowhow daemon`), as an agent calling it from the shell pays it.

For each corpus (the bundled sample, and a generated one with --steps): index it, then time
`knowhow --version`, `knowhow --help`, keyword and hybrid searches in-process
(KNOWHOW_IN_PROCESS=1), then start a daemon, and time the same searches answered by it. Each
search asks a different query (no answer cache helps either side); the times are the median
(p50) and p90 of the runs, measured in one run on one machine, with the cold/served ratio.

    .venv/bin/python scripts/bench_cli.py --work W [--steps 100000] [--runs 21] [--write-doc]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_common import err, knowhow_cmd, out, private_copy, write_section

from server.demo import SAMPLE_ROOT

QUERIES = [
    "send button", "unlock password", "swap tokens", "confirm transaction", "network switch",
    "add account", "import token", "settings security", "reveal recovery phrase", "bridge",
    "gas fee edit", "activity list", "receive address copy", "buy crypto", "connect site",
    "reject request", "sign message", "nft gallery", "lock wallet", "onboarding create wallet",
    "token approval", "speed up transaction", "hide token", "contact add", "export private key",
]  # fmt: skip


def timed(command: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one `knowhow` process, start to exit, its output discarded."""
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-500:]}")
    return seconds


def series(commands: list[list[str]], env: dict[str, str]) -> list[float]:
    return [timed(command, env) for command in commands]


def searches(where: list[str], mode: str, runs: int) -> list[list[str]]:
    base = [*knowhow_cmd(), "search"]
    return [
        [*base, QUERIES[i % len(QUERIES)], "--mode", mode, "--json", *where] for i in range(runs)
    ]


def measure(name: str, root: Path, index: Path, runs: int) -> list[tuple[str, list[float]]]:
    """Every timing of one corpus, indexed first."""
    where = ["--root", str(root), "--index", str(index)]
    env = dict(os.environ)
    for variable in ("KNOWHOW_ROOT", "KNOWHOW_INDEX", "KNOWHOW_SYNONYMS", "KNOWHOW_SESSION"):
        env.pop(variable, None)
    err(f"{name}: indexing")
    subprocess.run(
        [*knowhow_cmd(), "index", *where, "--json"], env=env, check=True, capture_output=True
    )
    cold_env = env | {"KNOWHOW_IN_PROCESS": "1"}
    cold_runs = max(5, runs // 3)  # a cold search costs a second or more
    rows = [
        (
            "`python -c pass` (the interpreter alone)",
            series([[sys.executable, "-c", "pass"]] * runs, env),
        )
    ]
    err(f"{name}: --version, --help")
    rows.append(("`knowhow --version`", series([[*knowhow_cmd(), "--version"]] * runs, env)))
    rows.append(("`knowhow --help`", series([[*knowhow_cmd(), "--help"]] * runs, env)))
    err(f"{name}: cold searches")
    rows.append(("search, keyword, cold", series(searches(where, "keyword", cold_runs), cold_env)))
    rows.append(("search, hybrid, cold", series(searches(where, "hybrid", cold_runs), cold_env)))
    err(f"{name}: starting the daemon")
    subprocess.run(
        [*knowhow_cmd(), "daemon", "start", *where], env=env, check=True, capture_output=True
    )
    try:
        for mode in ("keyword", "hybrid"):  # the server's first searches load the model
            series(searches(where, mode, 5), env)
        err(f"{name}: served searches")
        rows.append(("search, keyword, served", series(searches(where, "keyword", runs), env)))
        rows.append(("search, hybrid, served", series(searches(where, "hybrid", runs), env)))
    finally:
        subprocess.run(
            [*knowhow_cmd(), "daemon", "stop", *where], env=env, check=True, capture_output=True
        )
    return rows


def table(name: str, rows: list[tuple[str, list[float]]]) -> str:
    p50 = {label: statistics.median(times) for label, times in rows}
    lines = [f"**{name}**", "", "| command | runs | p50 ms | p90 ms | cold / served |"]
    lines += ["|---|---:|---:|---:|---:|"]
    for label, times in rows:
        p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]
        ratio = ""
        if label.endswith("served"):
            ratio = f"{p50[label.replace('served', 'cold')] / p50[label]:.1f}x"
        lines.append(
            f"| {label} | {len(times)} | {p50[label] * 1000:.0f} | {p90 * 1000:.0f} | {ratio} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for copies and indexes")
    parser.add_argument("--steps", type=int, help="also a generated corpus of this many steps")
    parser.add_argument("--corpus", type=Path, help="its generated folder (corpus-N-sS), if made")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--write-doc", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    work: Path = args.work
    sample = work / "cli-sample"
    shutil.rmtree(sample, ignore_errors=True)
    shutil.copytree(SAMPLE_ROOT, sample / "root")
    sections = [
        table("bundled sample", measure("sample", sample / "root", sample / "index", args.runs))
    ]
    if args.steps:
        from bench_common import ensure_corpus

        corpus = args.corpus or ensure_corpus(work, args.steps, 7).parents[1]
        root = private_copy(corpus, work / f"cli-{args.steps}")
        rows = measure(f"{args.steps} steps", root, work / f"cli-{args.steps}-index", args.runs)
        sections.append(table(f"{args.steps:,} generated steps", rows))
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    sections.append(f"Load average at the end (1, 5, 15 min): {' '.join(load) or 'unknown'}.")
    report = "\n\n".join(sections)
    out(report)
    if args.write_doc:
        write_section("cli-speed", report)


if __name__ == "__main__":
    main()
