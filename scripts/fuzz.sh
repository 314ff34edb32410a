#!/usr/bin/env bash
# The mutation fuzz suites run long, by hand: ./scripts/fuzz.sh [CASES] [SEED]
# (the test command runs them bounded: 240 core cases and one CLI pass, seed 17).
# A failure names its case, mutation and seed; run the same seed again to reproduce it.
set -euo pipefail
cd "$(dirname "$0")/.."
CASES=${1:-5000}
SEED=${2:-$(( (RANDOM << 15) | RANDOM ))}
echo "fuzz: $CASES core cases, seed $SEED"
SNA_FUZZ_CASES=$CASES SNA_FUZZ_SEED=$SEED cargo test --release -p sna-history --test it -- --nocapture fuzz::
SNA_FUZZ_SEED=$SEED cargo test --release -p sna-cli --test it -- --nocapture fuzz::
echo "fuzz: seed $SEED passed"
