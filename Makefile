# knowhow — two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed
# The editable install puts the repository on sys.path; a change of the packaging reinstalls.
PACKAGING := pyproject.toml setup.py $(wildcard engine/__init__.py analyzers/__init__.py server/__init__.py)
NEEDS_PYTHON := import sys; sys.exit(sys.version_info < (3, 11))

.PHONY: FORCE venv install inspector conformance run test lint typecheck unit unit-fast bench bench-quality bench-speed bench-reuse test-dapp axe clean

## venv: a virtualenv of a Python >= 3.11; one an earlier attempt left with another Python (or
## whose Python no longer runs) is made again, so a failed first try never needs `make clean`
venv: $(VENV)/pyvenv.cfg
	@:

ifneq ($(shell $(BIN)/python -c '$(NEEDS_PYTHON)' 2>/dev/null && echo ok),ok)
$(VENV)/pyvenv.cfg: FORCE
endif

$(VENV)/pyvenv.cfg:
	@$(PYTHON) -c '$(NEEDS_PYTHON)' 2>/dev/null || { \
		echo "knowhow needs Python >= 3.11, and $(PYTHON) is $$($(PYTHON) --version 2>&1 || echo 'not found')." \
			"Choose another: make PYTHON=python3.12 (any Python >= 3.11)." >&2; \
		exit 1; }
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

FORCE:

## install: knowhow with the developer tools (pytest, ruff, mypy, hypothesis), what `make test` needs
install: $(STAMP)

$(STAMP): $(VENV)/pyvenv.cfg $(PACKAGING)
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUN_STAMP)

# what `make run` and the benchmarks need: knowhow alone
$(RUN_STAMP): $(VENV)/pyvenv.cfg $(PACKAGING)
	$(BIN)/pip install --quiet -e .
	touch $(RUN_STAMP)

## test-dapp: MetaMask's @metamask/test-dapp (pinned) into vendor/ for the browser tests and bench
TEST_DAPP_VERSION := 9.9.0
TEST_DAPP := vendor/test-dapp/node_modules/@metamask/test-dapp/dist/index.html
test-dapp: $(TEST_DAPP)

$(TEST_DAPP):
	@command -v npm >/dev/null 2>&1 || { echo "npm not found: the test-dapp tests will be skipped"; exit 0; }
	npm install --prefix vendor/test-dapp --no-save --ignore-scripts --no-audit --no-fund \
		@metamask/test-dapp@$(TEST_DAPP_VERSION) >/dev/null 2>&1 \
		|| echo "npm install @metamask/test-dapp failed (registry unreachable?): the test-dapp tests will be skipped"

## axe: axe-core (pinned) into vendor/ for the web page's accessibility test (skipped without it)
AXE_VERSION := 4.11.0
AXE := vendor/axe/node_modules/axe-core/axe.min.js
axe: $(AXE)

$(AXE):
	@command -v npm >/dev/null 2>&1 || { echo "npm not found: the accessibility test will be skipped"; exit 0; }
	npm install --prefix vendor/axe --no-save --ignore-scripts --no-audit --no-fund \
		axe-core@$(AXE_VERSION) >/dev/null 2>&1 \
		|| echo "npm install axe-core failed (registry unreachable?): the accessibility test will be skipped"

## inspector: the official MCP Inspector, pinned by tests/server/inspector/package-lock.json, for
## tests/server/test_inspector.py (the test installs it itself when npm is there, else skips)
INSPECTOR := tests/server/inspector/node_modules/.bin/mcp-inspector
inspector: $(INSPECTOR)

$(INSPECTOR): tests/server/inspector/package-lock.json
	cd tests/server/inspector && npm ci --no-audit --no-fund --loglevel=error
	touch $@

## conformance: the official MCP conformance suite (and the Node.js 22 it needs, both from npm,
## pinned by tests/server/conformance/package-lock.json) against `knowhow serve --transport http`
## on a copy of the bundled sample; fails on a scenario not in expected-failures.yaml
CONFORMANCE := tests/server/conformance/node_modules/.bin/conformance
conformance: install
	@if command -v npm >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory $(CONFORMANCE) && $(BIN)/python scripts/conformance.py; \
	else echo "npm not found: the MCP conformance suite is skipped (CI installs npm)"; fi

$(CONFORMANCE): tests/server/conformance/package-lock.json
	cd tests/server/conformance && npm ci --no-audit --no-fund --loglevel=error
	touch $@

## run: index the knowledge root (or the bundled sample) and show example searches
run: $(RUN_STAMP)
	$(BIN)/knowhow demo --serve

lint: install
	$(BIN)/ruff check engine analyzers server tests scripts
	$(BIN)/ruff format --check engine analyzers server tests scripts

typecheck: install
	$(BIN)/mypy

unit: install test-dapp axe
	$(BIN)/pytest -q

## unit-fast: the edit-test loop (< 1 min): everything but tests marked slow or browser
unit-fast: install
	$(BIN)/pytest -q -m "not slow and not browser"

# the conformance suite before pytest, so that pytest's tally closes the run
test: lint typecheck conformance unit

## bench: quality (nDCG vs baselines), speed (10k/100k/1M) and reuse benchmarks -> docs/benchmarks.md
bench: bench-quality bench-speed bench-reuse

bench-quality: $(RUN_STAMP)
	$(BIN)/python scripts/bench_quality.py --queries scripts/eval/queries_dev.jsonl \
		--queries scripts/eval/queries_agent_outside_blind.jsonl \
		--queries scripts/eval/queries_agent_outside_blind2.jsonl \
		--queries scripts/eval/queries_paraphrase_dev.jsonl \
		--queries scripts/eval/queries_paraphrase_holdout.jsonl \
		--queries scripts/eval/queries_agent_dev.jsonl \
		--queries scripts/eval/queries_errors_dev.jsonl \
		--queries scripts/eval/blind/queries_blind.jsonl \
		--queries scripts/eval/queries_nothing.jsonl \
		--queries scripts/eval/queries_bad_input.jsonl

bench-speed: $(RUN_STAMP)
	$(BIN)/python scripts/bench_speed.py

## bench-reuse: the explorer agent as A (no knowledge), B (A's knowledge) and C (renamed app)
## on the test dapp and the demo wallet: completion, calls saved, suggestion precision
REUSE := bench-data/reuse
bench-reuse: $(RUN_STAMP) test-dapp
	rm -rf $(REUSE)
	@if [ -f $(TEST_DAPP) ]; then \
		$(BIN)/python scripts/bench_reuse.py --serve test-dapp --write \
			--root $(REUSE)/test-dapp/root --index $(REUSE)/test-dapp/index; \
	else echo "@metamask/test-dapp not installed (npm): its reuse bench is skipped"; fi
	$(BIN)/python scripts/bench_reuse.py --serve demo-wallet --write \
		--root $(REUSE)/demo-wallet/root --index $(REUSE)/demo-wallet/index
	$(BIN)/python scripts/bench_reuse.py --write --overall $(REUSE)/*/reuse-*.json

clean:
	rm -rf $(VENV) tests/server/inspector/node_modules tests/server/conformance/node_modules index-data/gen-* index-data/CURRENT
