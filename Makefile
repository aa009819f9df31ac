# ragwarrant — developer entry points. `make demo` and `make test` are the two set-up commands.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed

.PHONY: demo test test-quick install check lint schemas bench example selftest clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[dev,k8s]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	@rm -rf out/demo && mkdir -p out/demo
	@$(VENV)/bin/ragwarrant run --input examples/ragtruth-generators --output out/demo; \
	  code=$$?; \
	  $(PY) -m ragwarrant summary out/demo; \
	  echo "exit code: $$code"; exit $$code

test: $(STAMP)
	$(PY) -m pytest

test-quick: $(STAMP)
	$(PY) -m pytest -m 'not slow' -x

check: $(STAMP)
	$(VENV)/bin/ruff check job tests bench scripts
	$(VENV)/bin/ruff format --check job tests bench scripts
	$(VENV)/bin/mypy job
	$(PY) scripts/check_complexity.py --max-cc 15 --max-sloc 80 --max-lines 600

schemas: $(STAMP)
	$(PY) -m ragwarrant schemas --write contracts

bench: $(STAMP)
	$(PY) bench/bench_job.py
	$(PY) bench/bench_telemetry.py
	$(PY) bench/bench_lexical.py
	$(PY) bench/groundedness.py --ragtruth-dir $(RAGTRUTH)
	$(PY) bench/bench_selftest.py
	$(PY) bench/bench_startup.py

selftest: $(STAMP)
	$(PY) -m ragwarrant selftest

RAGTRUTH ?= ../shared/data/ragtruth

example: $(STAMP)
	$(PY) scripts/derive_ragtruth_example.py --ragtruth-dir $(RAGTRUTH) --output examples/ragtruth-generators \
	  --judge-labels-output examples/ragtruth-judge-labels
	@rm -rf out/ragtruth-judge-labels
	@$(VENV)/bin/ragwarrant run --input examples/ragtruth-judge-labels --output out/ragtruth-judge-labels; \
	  code=$$?; \
	  $(PY) -m ragwarrant summary out/ragtruth-judge-labels; \
	  echo "exit code: $$code (10 = REJECT, as README says)"; test $$code -eq 10

clean:
	rm -rf $(VENV) out .pytest_cache

include deploy/deploy.mk
