"""The benchmarks a user can run work from the repository alone.

The speed and memory benchmarks generate their corpus with the project's own generator
(`scripts/corpus/gen_corpus.py`: MetaMask-like sessions with screens, testIds, renames and
failures, deterministic for a seed); the quality benchmark needs the evaluation kit
(`KNOWHOW_EVAL_DIR`, default `../shared/eval`) and, without it, says what it needs and skips
with exit 0.
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
GENERATOR = REPO / "scripts" / "corpus" / "gen_corpus.py"


def generate(out: Path, steps: int, seed: int) -> Path:
    subprocess.run(
        [
            sys.executable,
            str(GENERATOR),
            "--out",
            str(out),
            "--steps",
            str(steps),
            "--seed",
            str(seed),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out / "test-artifacts" / "llm-knowledge"


def digest(root: Path) -> str:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()


def test_the_generator_writes_a_metamask_like_corpus_deterministically(tmp_path: Path) -> None:
    root = generate(tmp_path / "a", 600, 3)
    steps = [json.loads(p.read_text()) for p in sorted(root.glob("*/steps/*.json"))]
    assert 500 <= len(steps) <= 700
    screens = {
        ((s.get("observation") or {}).get("state") or {}).get("currentScreen") for s in steps
    }
    assert {"home", "send"} <= screens
    test_ids = {
        (s["tool"].get("target") or {}).get("testId") for s in steps if s["tool"].get("target")
    }
    assert len(test_ids) > 20
    assert any(not s["outcome"]["ok"] for s in steps)  # failures
    assert {"coin-overview-send", "eth-overview-send"} <= test_ids  # a testId and its rename
    assert digest(generate(tmp_path / "b", 600, 3)) == digest(root)


def test_the_quality_benchmark_without_the_eval_kit_says_what_it_needs(tmp_path: Path) -> None:
    missing = tmp_path / "no-eval-kit"
    env = {**os.environ, "KNOWHOW_EVAL_DIR": str(missing)}
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench_quality.py"), "--work", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert "skipped" in said and str(missing) in said and "KNOWHOW_EVAL_DIR" in said
    assert "gen_corpus.py" in said or "queries_public.jsonl" in said  # what the kit must hold
