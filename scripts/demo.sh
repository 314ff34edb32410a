#!/usr/bin/env bash
# The main job on the example data shipped in the repo: import a real Claude Code transcript into a
# history database, show it, and prepare its resume in Codex (the files land under target/demo,
# nothing of yours is touched). Builds `sna` first if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p sna-cli
sna() { target/debug/sna --db target/demo/history.db "$@"; }
mkdir -p target/demo
sna import examples/data
sna ls
echo
sna show 60aa014b-82fa-4f7d-8a5d-270b96a69979 | grep -v " status: " | head -30
echo
echo "Resume it in Codex:"
sna resume 60aa014b-82fa-4f7d-8a5d-270b96a69979 --in codex --home target/demo/home --cwd . --model-provider openai
echo
echo "Read it (and talk to agents) in the browser:"
echo "  target/debug/sna --db target/demo/history.db serve --port 7777   # then open http://127.0.0.1:7777/s/60aa014b-82fa-4f7d-8a5d-270b96a69979"
