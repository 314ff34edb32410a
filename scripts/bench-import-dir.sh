#!/usr/bin/env bash
# `sna import` of a Claude Code projects tree against the anchor of the field, for BENCHMARKS.md:
# 679 transcripts, 116 MB, in 40 project folders (the six Claude Code fixtures, each file its turns
# repeated with fresh uuids, message, request and tool ids to a varied size), the shape and size of a
# real ~/.claude/projects.
#
# - the first import into a fresh database file (wall time, peak RSS),
# - the same import again, nothing changed (median of 11 runs): decided by each file's length,
#   modification time, inode and device, no file read,
# - `ccusage daily --offline --json` (the pinned npm package, its platform binary) on the same
#   tree, median of 5: it reads every file on every run.
#
# Needs python3, node/npm (ccusage is installed into a temporary folder) and GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
# The newest ccusage whose platform binary is in the registry (20.0.26's linux-x64 package is not).
CCUSAGE_VERSION=20.0.24
cargo build -q --release -p sna-cli
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$work/claude/projects" <<'PY'
import random, re, sys
from pathlib import Path

out = Path(sys.argv[1])
fixtures = sorted(Path("tests/fixtures/claude-code").glob("*/*-*-*-*-*.jsonl"))
texts = [f.read_text() for f in fixtures]
uuid = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
native_id = re.compile(r"\b(msg_|toolu_|req_)[A-Za-z0-9]+")
rng = random.Random(21)
files, total_mb = 679, 116
# Sizes spread like a real tree (many small sessions, a few long ones): a number of copies of its
# fixture per file, scaled so that the tree holds the total.
weights = [rng.lognormvariate(0, 1.2) for _ in range(files)]
lengths = [len(texts[i % len(texts)].encode()) for i in range(files)]
def copies(scale):
    return [max(1, round(w * scale / n)) for w, n in zip(weights, lengths)]
low, high = 0.0, total_mb * 1e6
for _ in range(60):
    mid = (low + high) / 2
    if sum(c * n for c, n in zip(copies(mid), lengths)) < total_mb * 1e6:
        low = mid
    else:
        high = mid
for i, count in enumerate(copies(high)):
    text = texts[i % len(texts)]
    session = f"00000000-0000-4000-8000-{i + 1:012x}"
    old_session = fixtures[i % len(fixtures)].stem
    parts = []
    for copy in range(count):
        part = text.replace(old_session, session)
        part = uuid.sub(lambda m: m.group(0) if m.group(0) == session else f"{copy:08x}{m.group(0)[8:]}", part)
        part = native_id.sub(lambda m: f"{m.group(0)}c{copy}", part)
        parts.append(part)
    target = out / f"-home-dev-project-{i % 40}" / f"{session}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(parts))
PY
# Files modified within two seconds of being read are read again next time (their time may not
# have moved with a last write): let the tree settle as a real one has.
sleep 2
tree="$work/claude/projects"
count=$(find "$tree" -name '*.jsonl' | wc -l)
bytes=$(find "$tree" -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {print s}')
echo "tree: $count files, $((bytes / 1000000)) MB"
sna() { target/release/sna --db "$work/history.db" import "$tree" >/dev/null 2>&1; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { local start end; start=$(date +%s%N); "$@"; end=$(date +%s%N); echo $(((end - start) / 1000000)); }

/usr/bin/time -o "$work/time" -f "%e s wall, %M kB peak RSS" target/release/sna --db "$work/history.db" import "$tree" >/dev/null 2>&1
echo "sna import, first:      $(cat "$work/time") ($(($(stat -c %s "$work/history.db") / 1000000)) MB database)"
again=$(for _ in $(seq 11); do ms sna; done | median)
/usr/bin/time -o "$work/time" -f "%M" target/release/sna --db "$work/history.db" import "$tree" >/dev/null 2>&1
echo "sna import, unchanged:  ${again} ms median of 11 ($(cat "$work/time") kB peak RSS)"

npm install --silent --no-save --no-audit --no-fund --prefix "$work/ccusage" "ccusage@$CCUSAGE_VERSION" >/dev/null
ccusage() { CLAUDE_CONFIG_DIR="$work/claude" "$work/ccusage/node_modules/.bin/ccusage" daily --offline --json >/dev/null 2>&1; }
ccusage  # warm the page cache and check that it runs
cc=$(for _ in $(seq 5); do ms ccusage; done | median)
echo "ccusage $CCUSAGE_VERSION daily --offline --json: ${cc} ms median of 5"
