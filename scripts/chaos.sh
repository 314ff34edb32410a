#!/usr/bin/env bash
# The host chaos campaign (tests/chaos): ./scripts/chaos.sh [STEPS] [SEED] [RUNTIMES]
# STEPS defaults to 200, SEED to 47, RUNTIMES (comma-separated) to claude-code,codex.
# Needs the Python binding installed in the active environment (maturin develop in bindings-python)
# and the pinned CLIs (npm ci in tests/conformance). A failure prints the seed and the step.
set -euo pipefail
cd "$(dirname "$0")/.."
export CHAOS_STEPS="${1:-200}" CHAOS_SEED="${2:-47}" CHAOS_RUNTIMES="${3:-claude-code,codex}"
exec python3 -m pytest tests/chaos/test_chaos.py -s -q -p no:cacheprovider
