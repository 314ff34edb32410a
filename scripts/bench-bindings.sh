#!/usr/bin/env bash
# The bindings' overhead, measured in one run against Rust: import of a >= 50 MB Claude Code
# transcript into an in-memory store, `to_native` of it (native values in each language) and
# `to_native_text` (the file's text as a string) and `export_to` (that text written to a file),
# best of 5 each, through Rust, Python and Node. Needs the venv and the release addon that
# ./scripts/test.sh builds (and builds the Python extension in release mode into the venv).
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
file="$work/big.jsonl"
python3 - "$file" <<'PY'
import sys
from pathlib import Path
lines = Path("tests/fixtures/claude-code/tools-thinking/60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl").read_text().splitlines()
size, out = 0, []
with open(sys.argv[1], "w") as f:
    while size < 50 << 20:
        for line in lines:
            f.write(line + "\n")
            size += len(line) + 1
PY
echo "transcript: $(du -m "$file" | cut -f1) MB"
(cd bindings-python && VIRTUAL_ENV="$PWD/../.venv" PATH="$PWD/../.venv/bin:$PATH" maturin develop --quiet --release)
rust=$(cargo run -q --release -p sna-history --example roundtrip_timing -- "$file" claude-code 5)
python=$(.venv/bin/python - "$file" <<'PY'
import sys, time
import sna_history
best_i = best_e = best_t = best_f = float("inf")
for _ in range(5):
    store = sna_history.Store()
    t = time.perf_counter(); s = store.import_file(sys.argv[1], "claude-code"); best_i = min(best_i, (time.perf_counter() - t) * 1e3)
    t = time.perf_counter(); data = s.to_native("claude-code"); best_e = min(best_e, (time.perf_counter() - t) * 1e3)
    del data
    t = time.perf_counter(); text = s.to_native_text("claude-code"); best_t = min(best_t, (time.perf_counter() - t) * 1e3)
    del text
    t = time.perf_counter(); s.export_to(sys.argv[1] + ".export", "claude-code"); best_f = min(best_f, (time.perf_counter() - t) * 1e3)
print(f"import {best_i:.0f} export {best_e:.0f} text {best_t:.0f} file {best_f:.0f}")
PY
)
node=$(node - "$file" <<'JS'
const { Store } = require('./bindings-node/index.js')
const file = process.argv[2]
let bi = Infinity, be = Infinity, bt = Infinity, bf = Infinity, bp = Infinity
for (let i = 0; i < 5; i++) {
  const store = new Store()
  let t = process.hrtime.bigint(); const s = store.importFile(file, 'claude-code'); bi = Math.min(bi, Number(process.hrtime.bigint() - t) / 1e6)
  t = process.hrtime.bigint(); const data = s.toNative('claude-code'); be = Math.min(be, Number(process.hrtime.bigint() - t) / 1e6)
  t = process.hrtime.bigint(); const text = s.toNativeText('claude-code'); bt = Math.min(bt, Number(process.hrtime.bigint() - t) / 1e6)
  t = process.hrtime.bigint(); s.exportTo(file + '.export', 'claude-code'); bf = Math.min(bf, Number(process.hrtime.bigint() - t) / 1e6)
  // The least any API returning objects can add to Rust: JSON.parse of the same data's JSON.
  const json = '[' + text.trimEnd().split('\n').join(',') + ']'
  t = process.hrtime.bigint(); JSON.parse(json); bp = Math.min(bp, Number(process.hrtime.bigint() - t) / 1e6)
  store.close()
}
console.log(`import ${bi.toFixed(0)} export ${be.toFixed(0)} text ${bt.toFixed(0)} file ${bf.toFixed(0)} parse ${bp.toFixed(0)}`)
JS
)
ratio() { python3 -c "
r=[float(x) for x in '$1'.split()[1::2]]; b=[float(x) for x in '$2'.split()[1::2]]
print(f'import {b[0]/r[0]:.2f}x, export {b[1]/r[1]:.2f}x, both {(b[0]+b[1])/(r[0]+r[1]):.2f}x, text {b[2]/r[2]:.2f}x, file {b[3]/r[3]:.2f}x')"; }
echo "rust:   $rust (ms)"
echo "python: $python (ms)  — $(ratio "$rust" "$python")"
echo "node:   $node (ms)  — $(ratio "$rust" "$node")"
python3 -c "
r=[float(x) for x in '$rust'.split()[1::2]]; n=[float(x) for x in '$node'.split()[1::2]]
print(f'node toNative against Rust + JSON.parse of the same JSON ({r[1]:.0f} + {n[4]:.0f} ms): {n[1]/(r[1]+n[4]):.2f}x')"
