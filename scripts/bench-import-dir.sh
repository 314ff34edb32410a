#!/usr/bin/env bash
# `sna import` of a directory of 500 Claude Code transcripts and Codex rollouts made from the
# fixtures (fresh session ids), into a fresh database: wall time and peak memory (for
# BENCHMARKS.md), then the same import again (nothing changed: every file is skipped by hash).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release -p sna-cli
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$work/histories" <<'PY'
import sys
from pathlib import Path

out = Path(sys.argv[1])
sources = sorted(Path("tests/fixtures/claude-code").glob("*/*-*-*-*-*.jsonl")) + sorted(Path("tests/fixtures/codex").glob("*/rollout-*.jsonl"))
for i in range(500):
    source = sources[i % len(sources)]
    text = source.read_text()
    if source.name.startswith("rollout-"):
        old = source.stem[-36:]
        new = f"01a23770-0000-7000-8000-{i + 1:012x}"
        name = source.name.replace(old, new)
    else:
        old = source.stem
        new = f"00000000-0000-4000-8000-{i + 1:012x}"
        name = f"{new}.jsonl"
    target = out / f"project-{i % 25}" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text.replace(old, new))
PY
size=$(du -sh "$work/histories" | cut -f1)
run() { /usr/bin/time -f "%e s wall, %M kB peak RSS" target/release/sna --db "$work/history.db" import "$work/histories"; }
echo "500 files, $size:"
echo -n "first import:  "; run 2>&1 | tr '\n' ' '; echo
echo -n "second import: "; run 2>&1 | tr '\n' ' '; echo
