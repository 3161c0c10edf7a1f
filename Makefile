# The two commands the README starts with: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
APT_PACKAGES := prometheus victoria-metrics chromium

.PHONY: demo test acceptance dist install dev system-deps lint typecheck unit bench dashboards schema clean checkov

# Quiet installs: the user sees the report, not pip's progress or setuptools' notices (warnings are silenced for
# the install commands only, down to the build backend they start); pip still prints its errors (-qq: errors only,
# so a machine's own pip configuration warnings do not read like a broken install either).
PIP := PYTHONWARNINGS=ignore $(PY) -m pip --quiet --quiet --disable-pip-version-check --no-input

$(BIN)/whathappened: pyproject.toml
	@echo "installing whathappened into $(VENV) ..."
	@$(PYTHON) -m venv $(VENV)
	@$(PIP) install --upgrade pip "setuptools>=77" wheel
	@$(PIP) install -e .
	@touch $@

install: $(BIN)/whathappened

demo: install
	@$(BIN)/whathappened demo

$(VENV)/.dev: pyproject.toml $(BIN)/whathappened
	$(PIP) install -e '.[dev]'
	touch $@

dev: $(VENV)/.dev

# Real servers the tests start on loopback: Debian's prometheus (with promtool) and victoria-metrics, and
# Chromium for the HTML report. kubectl comes with the machine image, else Debian's kubernetes-client.
system-deps:
	@missing=""; \
	command -v prometheus >/dev/null || missing="$$missing prometheus"; \
	command -v promtool >/dev/null || missing="$$missing prometheus"; \
	command -v victoria-metrics >/dev/null || missing="$$missing victoria-metrics"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v kubectl >/dev/null || missing="$$missing kubernetes-client"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# checkov (PyPI) checks deploy/'s manifests (tests/test_deploy.py runs it); in a venv of its own, because its
# dependency pins are not ours.
CHECKOV_VERSION := 3.3.30
CHECKOV := .venv-checkov/bin/checkov
$(CHECKOV):
	$(PYTHON) -m venv .venv-checkov
	PYTHONWARNINGS=ignore .venv-checkov/bin/python -m pip --quiet --quiet --disable-pip-version-check --no-input install "checkov==$(CHECKOV_VERSION)"

checkov: $(CHECKOV)

lint: dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@# import-linter walks the package folder, so give it the installed layout (collectors/ etc. inside).
	rm -rf build/importcheck && mkdir -p build/importcheck && cp -r whathappened build/importcheck/
	for part in collectors exporters dashboards; do cp -r $$part build/importcheck/whathappened/$$part; done
	cd build/importcheck && PYTHONPATH=. ../../$(BIN)/lint-imports --config ../../pyproject.toml

typecheck: dev
	$(BIN)/mypy whathappened collectors exporters dashboards synth

# Two workers on the 2-core build machine (more where there are more cores, up to 4): most of a test's time is a
# server or a CLI subprocess working, so a second worker fills the wait. A test file stays on one worker
# (--dist loadfile): its module fixtures (a month of fleet history, a backfilled Prometheus) are built once.
XDIST := -n auto --maxprocesses 4
unit: dev system-deps checkov
	$(BIN)/pytest -q $(XDIST) --dist loadfile tests

test: dev system-deps lint typecheck unit

# The shared acceptance scenarios, live and from snapshots; they live beside the repository, not in it.
SHARED_SCENARIOS := $(abspath ..)/shared/scenarios
acceptance: dev system-deps
	@test -d "$(SHARED_SCENARIOS)" || { echo "make acceptance: the shared scenarios are missing: $(SHARED_SCENARIOS) is not a folder" >&2; exit 1; }
	$(BIN)/pytest -q $(XDIST) acceptance

# A wheel in dist/, to install where there is no clone: pip install dist/whathappened_gpu-*.whl
dist: install
	rm -rf dist && $(PIP) wheel --no-deps --wheel-dir dist .

bench: dev system-deps
	$(PY) -m bench.run
	# issue 17: a JobSet of 4,096 pods restarted twice, 2 h, events kept an hour (archived), and its series
	$(PY) -m bench.run --pods 4096 --hours 2 --attempts 3 --event-ttl 1 --log-stride 512 \
		--series 512,1024,2048 --naive-sample 64

dashboards: install
	$(BIN)/whathappened dashboards generate --out dashboards/

# the shipped JSON Schema's cause and category enums, from the cause table (correlate/causes.py)
schema: install
	$(PY) -c 'from whathappened.render.jsonout import write_schema; write_schema()'

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache
