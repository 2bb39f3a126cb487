# knowhow — two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test lint typecheck unit bench bench-quality bench-speed clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

## run: index the knowledge root (or the bundled sample) and show example searches
run: install
	$(BIN)/knowhow demo --serve

lint: install
	$(BIN)/ruff check engine analyzers server tests scripts
	$(BIN)/ruff format --check engine analyzers server tests scripts

typecheck: install
	$(BIN)/mypy

unit: install
	$(BIN)/pytest -q

test: lint typecheck unit

## bench: quality (nDCG vs baselines) and speed (10k/100k/1M) benchmarks -> docs/BENCHMARKS.md
bench: bench-quality bench-speed

bench-quality: install
	$(BIN)/python scripts/bench_quality.py --queries scripts/eval/queries_dev.jsonl

bench-speed: install
	$(BIN)/python scripts/bench_speed.py

clean:
	rm -rf $(VENV) index-data/gen-* index-data/CURRENT
