#!/usr/bin/env bash
# `sna usage` against ccusage on the same trees, for BENCHMARKS.md (issue 23): a Claude Code
# projects tree and a Codex sessions tree made by tests/usage/trees.py (varied usage, cache tokens,
# each response on one to three records, a resumed session, responses either side of midnight),
# the size of a busy user's.
#
# - `sna usage TREES --json`: the store already holds the trees; the run looks at every file for
#   changes (length, time, inode, device: none is read) and reports by day (median of 11);
# - the same without the trees (the report alone, median of 11), and `--by model`;
# - the first `sna usage TREES`, which imports them (once);
# - ccusage (the binary of the pinned npm package, no Node start-up): `ccusage claude daily` and
#   `ccusage codex daily`, the two reports `sna usage` gives in one, each median of 5; ccusage reads
#   every file on every run.
# The two print the same tokens per day (checked here, as test_ccusage.py does in the tests).
#
# Needs python3, node/npm (ccusage is installed into a temporary folder) and GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
CCUSAGE_VERSION=20.0.24
PROJECTS=${PROJECTS:-40} SESSIONS=${SESSIONS:-15} RESPONSES=${RESPONSES:-150} CODEX_SESSIONS=${CODEX_SESSIONS:-150} TURNS=${TURNS:-120}
cargo build -q --release -p sna-cli
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$work/home" "$PROJECTS" "$SESSIONS" "$RESPONSES" "$CODEX_SESSIONS" "$TURNS" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, "tests/usage")
import trees
home, projects, sessions, responses, codex_sessions, turns = Path(sys.argv[1]), *map(int, sys.argv[2:])
claude = trees.claude_tree(home, projects=projects, sessions=sessions, responses=responses)
codex = trees.codex_tree(home, sessions=codex_sessions, turns=turns)
print(f"responses: {len(claude.responses)} Claude Code, {len(codex.responses)} Codex")
PY
# Files modified within two seconds of being read are read again next time: let the trees settle.
sleep 2
claude="$work/home/.claude/projects"
codex="$work/home/.codex/sessions"
for tree in "$claude" "$codex"; do
    count=$(find "$tree" -name '*.jsonl' | wc -l)
    bytes=$(find "$tree" -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {print s}')
    echo "$(basename "$(dirname "$tree")"): $count files, $((bytes / 1000000)) MB"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { local start end; start=$(date +%s%N); "$@" >/dev/null 2>&1; end=$(date +%s%N); echo $(((end - start) / 1000000)); }
sna() { HOME="$work/home" target/release/sna --db "$work/history.db" usage "$@"; }

/usr/bin/time -o "$work/time" -f "%e s wall, %M kB peak RSS" target/release/sna --db "$work/history.db" usage "$claude" "$codex" --json >/dev/null 2>&1
echo "sna usage TREES, the first (imports them): $(cat "$work/time")"
checked=$(for _ in $(seq 11); do ms sna "$claude" "$codex" --json --tz UTC; done | median)
alone=$(for _ in $(seq 11); do ms sna --json --tz UTC; done | median)
models=$(for _ in $(seq 11); do ms sna --json --by model --tz UTC; done | median)
/usr/bin/time -o "$work/time" -f "%M" target/release/sna --db "$work/history.db" usage "$claude" "$codex" --json >/dev/null 2>&1
echo "sna usage TREES --json (files checked, by day): ${checked} ms median of 11 ($(cat "$work/time") kB peak RSS)"
echo "sna usage --json (the report alone, by day):   ${alone} ms median of 11"
echo "sna usage --json --by model:                    ${models} ms median of 11"

npm install --silent --no-save --no-audit --no-fund --prefix "$work/ccusage" "ccusage@$CCUSAGE_VERSION" >/dev/null
bin="$work/ccusage/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage"
chmod +x "$bin"
cc() { HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" CODEX_HOME="$work/home/.codex" "$bin" "$@" --json --offline -z UTC; }
cc claude daily > "$work/cc-claude.json"
cc codex daily > "$work/cc-codex.json"
claude_ms=$(for _ in $(seq 5); do ms cc claude daily; done | median)
codex_ms=$(for _ in $(seq 5); do ms cc codex daily; done | median)
/usr/bin/time -o "$work/time" -f "%M" "$bin" claude daily --json --offline >/dev/null 2>&1 || true
echo "ccusage $CCUSAGE_VERSION claude daily --json --offline: ${claude_ms} ms median of 5"
echo "ccusage $CCUSAGE_VERSION codex daily --json --offline:  ${codex_ms} ms median of 5"
echo "ccusage, both reports:                          $((claude_ms + codex_ms)) ms; sna usage TREES: ${checked} ms ($(awk -v a="$checked" -v b="$((claude_ms + codex_ms))" 'BEGIN {printf "%.2f", a / b}')x)"

# The same figures: tokens per day, Claude Code and Codex apart.
sna "$claude" "$codex" --json --tz UTC --runtime claude-code > "$work/sna-claude.json"
sna --json --tz UTC --runtime codex > "$work/sna-codex.json"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
def mine(name):
    return {r["key"]: (r["input"], r["output"], r["cache_read"]) for r in json.load(open(f"{w}/sna-{name}.json"))["rows"]}
def theirs(name):
    return {d["date"]: (d["inputTokens"], d["outputTokens"], d["cacheReadTokens"]) for d in json.load(open(f"{w}/cc-{name}.json"))["daily"]}
for name in ("claude", "codex"):
    assert mine(name) == theirs(name), (name, mine(name), theirs(name))
print("tokens per day: the same in both (Claude Code and Codex)")
PY
