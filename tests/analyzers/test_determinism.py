"""Analyzers give the same tokens in every process: the index is built by one process (or a pool
of workers) and queried by another, so output that depended on set order or the string hash seed
would silently miss. Comparing a pure function with itself in one process cannot show that; two
interpreters with different `PYTHONHASHSEED`s can."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SAMPLES = [
    "coin-overview-send",
    "Send ETH to 0xAbC…123, confirm the transaction",
    "sending swaps Swapped SWAP confirm-footer",
    "İstanbul ΣΑΣ ǅemal 送信 🦊 send🅰button",
    "eth_sendTransaction wallet_switchEthereumChain",
    "the a of and to is",
]

PROGRAM = """
import json, sys
from analyzers import analyze, analyze_query, split_identifier, stem, tokenize, tokenize_identifier
out = []
for text in json.loads(sys.argv[1]):
    out.append([
        analyze(text),
        [[t.token, t.weight, t.concept, t.kind] for t in analyze_query(text)],
        split_identifier(text),
        tokenize_identifier(text),
        tokenize(text),
        [stem(word) for word in text.split()],
    ])
print(json.dumps(out))
"""


def analyzed_with_hash_seed(seed: str) -> object:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, json.dumps(SAMPLES)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_analyzers_give_the_same_tokens_under_any_hash_seed() -> None:
    first = analyzed_with_hash_seed("1")
    assert first == analyzed_with_hash_seed("2") == analyzed_with_hash_seed("12345")
    assert any(tokens for row in first for tokens in row)  # not vacuously equal
