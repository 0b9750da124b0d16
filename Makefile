# The two commands of the README, and the rest. Each target installs what it needs itself:
# a .venv, maturin and the dev dependencies from the package registry.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: demo test develop lint fmt clean bench soak fuzz dist dist-check

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.dev-deps: requirements-dev.txt | $(PY)
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

$(VENV)/.maturin: | $(PY)
	$(PY) -m pip install -q "maturin>=1.8,<2"
	touch $@

# zig as the C compiler and linker of the manylinux2014 wheels (tools/dist.py).
$(VENV)/.zig: | $(PY)
	$(PY) -m pip install -q "ziglang>=0.13,<0.14"
	touch $@

# One manylinux2014 wheel per CPython 3.9-3.13 found, and the sdist, into dist/.
dist: $(VENV)/.maturin $(VENV)/.zig
	$(PY) tools/dist.py build

# The wheels installed in a fresh venv per CPython found (no compiler or cargo on PATH), the
# quick start and a smoke subset of the tests run against each.
dist-check: dist
	$(PY) tools/dist.py check

# Builds the extension into the venv (debug profile: the tests and the demo share it).
develop: $(VENV)/.maturin
	$(VENV)/bin/maturin develop -q

demo: develop
	$(PY) examples/quickstart.py

test: $(VENV)/.dev-deps develop
	cargo fmt --check
	cargo test -q
	cargo build -q --bin pushwire-emulator
	$(VENV)/bin/ruff check python tests examples benches soak tools
	$(VENV)/bin/ruff format --check python tests examples benches soak tools
	$(PY) -m mypy.stubtest pushwire._core
	$(VENV)/bin/mypy --strict examples python/pushwire
	$(PY) -m pytest -q

# The benchmark of issue 5 against httpx, requests, aiohttp, msgspec and wrk: release build,
# the emulator in its own process; writes benches/RESULTS.md.
bench: $(VENV)/.dev-deps
	$(PY) -m pip install -q -r benches/requirements.txt
	$(VENV)/bin/maturin develop --release -q
	$(PY) benches/run.py

# The full soak: 100,000 calls under 5% random faults (the short form runs in `make test`),
# then a million events through the standalone emulator, its memory flat after warm-up.
soak: $(VENV)/.dev-deps develop
	$(PY) soak/soak.py --calls 100000
	$(PY) soak/retention.py --events 1000000

# cargo-fuzz on both decoders, FUZZ_SECONDS each (the corpus in fuzz/corpus grows and is
# kept). cargo-fuzz needs nightly features; RUSTC_BOOTSTRAP lets the stable toolchain use them.
FUZZ_SECONDS ?= 60
fuzz:
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
	for t in emulator_decode client_decode; do \
		RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir fuzz $$t fuzz/corpus/$$t -- \
			-max_total_time=$(FUZZ_SECONDS) -max_len=8192 || exit 1; \
	done

lint: $(VENV)/.dev-deps
	cargo fmt --check
	cargo clippy --all-targets --features python -- -D warnings
	command -v cargo-deny >/dev/null || cargo install cargo-deny --locked
	cargo deny check bans licenses sources
	$(VENV)/bin/ruff check python tests examples benches soak
	$(VENV)/bin/ruff format --check python tests examples benches soak
	$(PY) -m pip install -q "check-jsonschema>=0.29"
	$(VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml

fmt: $(VENV)/.dev-deps
	cargo fmt
	$(VENV)/bin/ruff format python tests examples benches soak
	$(VENV)/bin/ruff check --fix python tests examples benches soak

clean:
	rm -rf $(VENV) target
