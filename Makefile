# hedge: one command to set up and run the main job (make demo), one to set up and run
# every test (make test). Both are idempotent: finished steps are skipped.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := .hedge-build
VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' python/hedge/__init__.py)
SHIM   := java-shim/target/hedge-shim-$(VERSION).jar
JAVA_SOURCES := $(shell find java-shim/src -name '*.java') java-shim/pom.xml
OUT    ?= out/demo
export HEDGE_CACHE ?= $(HOME)/.cache/hedge

.PHONY: setup demo test test-fast lint bench shim clean

setup: $(STAMP)/system $(STAMP)/venv $(SHIM)

$(STAMP)/system: scripts/setup-system.sh
	scripts/setup-system.sh
	@mkdir -p $(STAMP) && touch $@

# pyspark (the `spark` extra) is installed from the sdist the jar fetch keeps in the cache.
$(STAMP)/venv: setup.cfg pyproject.toml scripts/fetch_hadoop_jars.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	$(PY) scripts/fetch_hadoop_jars.py
	$(PY) -m pip install -q --find-links "$(HEDGE_CACHE)/downloads" -e '.[dev,spark]'
	@mkdir -p $(STAMP) && touch $@

shim: $(SHIM)
$(SHIM): $(JAVA_SOURCES) scripts/build-shim.sh scripts/hadoop-jars.sha256 $(STAMP)/venv $(STAMP)/system
	PYTHON=$(PY) scripts/build-shim.sh

demo: setup
	$(VENV)/bin/hedge --help
	$(PY) scripts/demo.py --out $(OUT)

lint: $(STAMP)/venv
	$(VENV)/bin/ruff check python tests scripts

test: setup lint
	$(VENV)/bin/pytest

test-fast: setup
	$(VENV)/bin/pytest -m "not slow and not integration"

bench: setup
	$(PY) tests/bench/run.py

clean:
	rm -rf $(STAMP) java-shim/target out
