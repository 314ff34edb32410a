#!/usr/bin/env bash
# The host chaos campaign (tests/chaos): ./scripts/chaos.sh [STEPS] [SEED] [RUNTIMES]
# STEPS defaults to 200, SEED to 47, RUNTIMES (comma-separated) to claude-code,codex.
# Needs the Python binding (scripts/test.sh installs it into .venv, which is used when present;
# otherwise the active python3) and the pinned CLIs (npm install in tests/conformance). A failure
# prints the seed and the step.
set -euo pipefail
cd "$(dirname "$0")/.."
export CHAOS_STEPS="${1:-200}" CHAOS_SEED="${2:-47}" CHAOS_RUNTIMES="${3:-claude-code,codex}"
PYTHON=python3
if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; fi
exec "$PYTHON" -m pytest tests/chaos/test_chaos.py -s -q -p no:cacheprovider
