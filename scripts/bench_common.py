"""Shared helpers for the benchmark scripts (bench_quality.py, bench_speed.py).

Why a separate module: both benchmarks need the same plumbing — locating the read-only eval folder,
generating a corpus once (with the project's generator), running the knowhow CLI and the baselines
as subprocesses, measuring peak RSS, reading TREC files, and replacing a marked section of
docs/benchmarks.md. Standard library only, so the numbers never depend on what happens to be
installed. T20 forbids print(): all output goes through out() / err().
"""

import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from explorer import knowhow_command

REPO = Path(__file__).resolve().parents[1]
knowhow_cmd = knowhow_command
"""The `knowhow` command of this environment, started as the explorer and the tests start it."""
DOC = REPO / "docs" / "benchmarks.md"
GNU_TIME = Path("/usr/bin/time")


def out(msg: str = "") -> None:
    """Report output (tables) to stdout."""
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def err(msg: str) -> None:
    """Progress and warnings to stderr, so stdout stays a clean report."""
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def eval_dir() -> Path:
    """The shared, read-only eval folder: ../shared/eval next to the repo, or $KNOWHOW_EVAL_DIR."""
    env = os.environ.get("KNOWHOW_EVAL_DIR")
    return Path(env) if env else REPO.parent / "shared" / "eval"


CORPUS_GENERATOR = REPO / "scripts" / "corpus" / "gen_corpus.py"
"""Every benchmark's corpus comes from the project's own generator, so the speed and memory
benchmarks run from the repository alone; it is the evaluation kit's, kept as written, so a
seed gives the corpus the kit gives (scripts/corpus/README.md)."""
EVAL_KIT = ("queries_public.jsonl", "queries_paraphrase_public.jsonl", "make_qrels.py", "score.py")
"""What the quality benchmark reads from the kit: its queries, graded relevance, scorer (and
`baselines/`)."""
DEV_QUERIES = REPO / "scripts" / "eval" / "queries_dev.jsonl"


def eval_kit_missing() -> str | None:
    """Why the evaluation kit cannot be used, or None when it can."""
    kit = eval_dir()
    absent = [name for name in (*EVAL_KIT, "baselines") if not (kit / name).exists()]
    if not absent:
        return None
    return (
        f"the evaluation kit is not at {kit} (KNOWHOW_EVAL_DIR, default ../shared/eval): "
        f"no {', '.join(absent)}"
    )


def public_queries() -> Path:
    """The kit's public queries; without the kit, the project's own dev set."""
    return DEV_QUERIES if eval_kit_missing() else eval_dir() / "queries_public.jsonl"


@dataclass
class Proc:
    """A finished subprocess: exit code, stdout, wall seconds and peak RSS (KB, or None)."""

    cmd: list[str]
    rc: int
    stdout: str
    wall_s: float
    log: Path
    max_rss_kb: int | None = None
    extra: dict[str, object] = field(default_factory=dict)
    cpu_s: float = 0.0
    """User + system CPU seconds of the process and every child it waited for."""
    machine_cpu_s: float | None = None
    """CPU seconds the whole machine was busy meanwhile (`/proc/stat`; None elsewhere): what a
    build costs, its analysis workers included — they are a fork server's children, which the
    process does not wait for, so `cpu_s` leaves them out. On a quiet machine only."""

    @property
    def ok(self) -> bool:
        return self.rc == 0


def machine_busy_s() -> float | None:
    """CPU seconds the machine has been busy (user, nice, system) since boot, or None where
    there is no `/proc/stat`."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            user, nice, system = (int(v) for v in f.readline().split()[1:4])
    except (OSError, ValueError):
        return None
    return (user + nice + system) / os.sysconf("SC_CLK_TCK")


def run(cmd: list[str], log: Path, measure_rss: bool = False) -> Proc:
    """Run cmd, capture stdout, send stderr to `log`, time it; optionally measure its peak RSS.

    Peak RSS uses GNU `/usr/bin/time -v -o FILE` when present (it measures exactly that process),
    else os.wait4() on the child, which returns the rusage of that child alone — unlike
    getrusage(RUSAGE_CHILDREN), which is the maximum over every child this harness ever waited for.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    err(f"  $ {shlex.join(cmd)}")
    tfile: Path | None = None
    full = cmd
    if measure_rss and GNU_TIME.exists():
        fd, name = tempfile.mkstemp(prefix="bench-time-", suffix=".txt")
        os.close(fd)
        tfile = Path(name)
        full = [str(GNU_TIME), "-v", "-o", str(tfile), *cmd]
    with open(log, "w", encoding="utf-8") as ef, tempfile.TemporaryFile("w+") as of:
        busy0 = machine_busy_s()
        t0 = time.perf_counter()
        try:
            p = subprocess.Popen(full, stdout=of, stderr=ef, text=True)
        except OSError as e:
            ef.write(f"cannot start: {e}\n")
            return Proc(cmd, 127, "", 0.0, log)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        busy1 = machine_busy_s()
        p.returncode = os.waitstatus_to_exitcode(status)
        of.seek(0)
        stdout = of.read()
    rss: int | None = usage.ru_maxrss if measure_rss else None  # KB on Linux
    if tfile is not None:
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", tfile.read_text())
        rss = int(m.group(1)) if m else None
        tfile.unlink(missing_ok=True)
    res = Proc(cmd, p.returncode, stdout, wall, log, rss, cpu_s=usage.ru_utime + usage.ru_stime)
    if busy0 is not None and busy1 is not None:
        res.machine_cpu_s = busy1 - busy0
    if not res.ok:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        err(f"  ! exit {res.rc} after {wall:.1f}s; last lines of {log}:")
        for line in tail:
            err(f"  | {line}")
    return res


def last_json(stdout: str) -> dict[str, object] | None:
    """The JSON object on the last non-empty stdout line (the CLI contract), or None."""
    lines = [x for x in stdout.splitlines() if x.strip()]
    if not lines:
        return None
    try:
        val = json.loads(lines[-1])
    except ValueError:
        return None
    return val if isinstance(val, dict) else None


def ensure_corpus(work: Path, steps: int, seed: int, workers: int | None = None) -> Path:
    """Generate WORK/corpus-<steps>-s<seed> once; returns its knowledge root.

    A marker file written after gen_corpus.py succeeds tells a complete corpus from one interrupted
    half-way (which is regenerated with --force).
    """
    cdir = work / f"corpus-{steps}-s{seed}"
    root = cdir / "test-artifacts" / "llm-knowledge"
    marker = cdir / ".bench-complete"
    if marker.exists() and root.is_dir() and (cdir / "truth.jsonl").exists():
        err(f"corpus {cdir} exists, reusing")
        return root
    cmd = [sys.executable, str(CORPUS_GENERATOR), "--out", str(cdir)]
    cmd += ["--steps", str(steps), "--seed", str(seed), "--force"]
    if workers:
        cmd += ["--workers", str(workers)]
    err(f"generating corpus {cdir} ({steps} steps, seed {seed})")
    p = run(cmd, work / "logs" / f"gen-{steps}-s{seed}.log")
    if not p.ok:
        raise SystemExit(f"gen_corpus.py failed (exit {p.rc}), see {p.log}")
    marker.write_text(p.stdout)
    return root


def private_copy(corpus: Path, dest: Path) -> Path:
    """A fresh hard-linked copy of a generated corpus folder (`corpus-…`), for a run that
    indexes it; returns the copy's knowledge root.

    Indexing writes into the knowledge root (supersede decisions: `<session>/superseded.json`).
    A run that indexed the shared corpus itself would leave the next run a different root — a
    rebuild instead of a first build — so runs would not be repeatable. The store only writes
    by atomic rename or link, so a hard-linked copy never changes the original's files.
    """
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-al", str(corpus), str(dest)], check=True)
    return dest / "test-artifacts" / "llm-knowledge"


def as_generated_copy(corpus: Path, dest: Path) -> Path:
    """`private_copy` without the supersede decisions an earlier build wrote into the corpus
    (`<session>/superseded.json`): a build of it is the first build of the corpus as it was
    generated, supersede detection included, whether or not the corpus was indexed before."""
    root = private_copy(corpus, dest)
    for decided in root.glob("*/superseded.json"):
        decided.unlink()
    return root


def load_queries(path: Path) -> list[dict[str, object]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """TREC qrels `qid 0 docid grade` -> qid -> docid -> grade (as score.py reads them)."""
    q: dict[str, dict[str, int]] = defaultdict(dict)
    with open(path, encoding="utf-8") as f:
        for line in f:
            p = line.split()
            if len(p) >= 4:
                q[p[0]][p[2]] = int(p[3])
    return dict(q)


def read_run(path: Path) -> dict[str, list[str]]:
    """TREC run -> qid -> docids ordered by the rank column (ties by docid, as score.py does)."""
    run_: dict[str, list[tuple[int, str]]] = defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for line in f:
            p = line.split()
            if len(p) >= 6:
                run_[p[0]].append((int(p[3]), p[2]))
    return {q: [d for _, d in sorted(v)] for q, v in run_.items()}


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    if not n:
        return float("nan")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def du_bytes(path: Path) -> int:
    """Disk usage like `du -s`: allocated blocks, each inode once."""
    total, seen = 0, set()
    for dirpath, _dirs, files in os.walk(path):
        for name in [".", *files]:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


_PROBE = (
    "import time\nt = time.perf_counter()\ns = 0\n"
    "for i in range(3_000_000):\n    s += i * i % 7\nprint(time.perf_counter() - t)"
)


def core_contention(rounds: int = 3) -> float:
    """How much slower a fixed CPU-bound loop runs as two processes at once than alone (1.0:
    the cores do not slow each other). On the shared 2-vCPU machines here the two cores
    sometimes slow each other by 1.3-1.5x for minutes at a time (host load; measured in
    docs/benchmarks.md): whatever keeps both busy (a build, a hybrid search's two
    threads) is then about that much slower, and its CPU seconds grow with it. Measured with
    a benchmark, so that its numbers can be read against the window they were taken in."""

    def slowest(processes: int) -> float:
        probes = [
            subprocess.Popen([sys.executable, "-c", _PROBE], stdout=subprocess.PIPE, text=True)
            for _ in range(processes)
        ]
        return max(float(probe.communicate()[0]) for probe in probes)

    alone = median([slowest(1) for _ in range(rounds)])
    both = median([slowest(2) for _ in range(rounds)])
    return both / alone


def machine() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "command": shlex.join(sys.orig_argv),
        "contention": f"{core_contention():.2f}",
    }


def machine_md(m: dict[str, str]) -> str:
    return (
        f"- date: {m['date']}\n- machine: {m['nproc']} CPUs ({m['cpu']}), "
        f"Python {m['python']}, {m['platform']}\n- command: `{m['command']}`\n"
        f"- two cores at once vs one (`bench_common.core_contention`, 1.00: independent): "
        f"{m['contention']}x\n"
    )


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None or x != x else f"{x:.{digits}f}"


def write_section(name: str, body: str, doc: Path = DOC) -> None:
    """Replace the text between <!-- NAME:start --> and <!-- NAME:end --> (append if absent)."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    block = f"{start}\n{body.rstrip()}\n{end}"
    i, j = text.find(start), text.find(end)
    if i >= 0 and j > i:
        text = text[:i] + block + text[j + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(text, encoding="utf-8")
    err(f"updated section {name} in {doc}")


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    err(f"wrote {path}")
