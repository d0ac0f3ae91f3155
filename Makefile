# hedge: one command to set up and run the main job (make demo), one to set up and run
# every test (make test). Both are idempotent: finished steps are skipped.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := .hedge-build
OUT    ?= out/demo
export HEDGE_CACHE ?= $(HOME)/.cache/hedge

.PHONY: setup demo test test-fast lint bench shim clean

setup: $(STAMP)/system $(STAMP)/venv $(STAMP)/numba $(STAMP)/kernels shim

$(STAMP)/system: scripts/setup-system.sh
	scripts/setup-system.sh
	@mkdir -p $(STAMP) && touch $@

$(STAMP)/venv: setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	$(PY) -m pip install -q -e '.[dev,spark]'
	@mkdir -p $(STAMP) && touch $@

# ImKP's word count compiled ahead of time: numba's code cache (so the first `hedge imkp build`
# does not spend about 8 s of CPU compiling) and the numba.pycc extension module that lets the
# CLI count words without importing numba (hedge.imkp.wordtable loads it; redone when the
# kernels' or the loader's source changes).
$(STAMP)/numba: python/hedge/imkp/wordcount.py python/hedge/imkp/wordtable.py python/hedge/imkp/wordbuild.py $(STAMP)/venv
	$(PY) -c "from hedge.imkp.wordbuild import warm_cache; warm_cache()"
	@mkdir -p $(STAMP) && touch $@

# Every policy's numba kernels compiled into numba's code cache (beside the sources) by a tiny
# simulation of each: cold, that is about 40 s of CPU, which `hedge serve` would otherwise
# spend inside the first scans of the first job of each policy, past the shim's deadline
# (those scans then fall back to Hadoop's rule). Redone when any source changes.
$(STAMP)/kernels: $(shell find python/hedge -name '*.py') $(STAMP)/venv
	$(PY) -m hedge.server.warmup
	@mkdir -p $(STAMP) && touch $@

# The Java side: shim jar, cluster jar, and the Hadoop classpaths in $(HEDGE_CACHE)/hadoop/.
# Always run: build-shim.sh skips, in well under a second, whatever is up to date (each jar
# against its pom and sources: java-shim/pom.xml and src/, java-shim/cluster/pom.xml and
# src/; each classpath file against its pom), and so also notices a deleted cache or target/,
# which file timestamps here could not.
shim: $(STAMP)/system
	scripts/build-shim.sh

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
	rm -rf $(STAMP) java-shim/target java-shim/cluster/target out
