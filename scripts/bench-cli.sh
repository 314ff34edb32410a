#!/usr/bin/env bash
# Issue 21, targets 1 and 4 measured as a user meets them: the release `sna` importing each
# runtime's ~50 MB input (made from the fixtures as the criterion benchmarks make it) into a fresh
# database file, and exporting it back to a file, against a serde_json program doing the least the
# same job needs, in the same run:
#
# - import floor: process start + read and parse the file (`bench_cli parse`); beside it, what
#   storing the file's bytes in SQLite costs by itself (`bench_cli store`: WAL, one transaction,
#   the checkpoint at close), which any import that keeps the bytes pays on top of parsing;
# - export floor: process start + serialize the parsed file in the export's format and write it
#   (`bench_cli write`, the values already in memory, as criterion's serialize baseline);
# - database size against the input's bytes.
#
# Median of RUNS runs (default 5) each. `SNA_BENCH_MB` sets the input size (default 50).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
mb="${SNA_BENCH_MB:-50}"
cargo build -q --release -p sna-cli
cargo build -q --release -p sna-history --example bench_cli
sna="$PWD/target/release/sna"
floor="$PWD/target/release/examples/bench_cli"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

now_ms() { date +%s%N | awk '{ printf "%.1f", $1 / 1e6 }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Wall milliseconds of a command (its output discarded).
wall() {
    local t0 t1
    t0=$(now_ms)
    "$@" >/dev/null 2>&1
    t1=$(now_ms)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }'
}

"$floor" inputs "$work/in" "$mb" >"$work/inputs"
start=$(for _ in $(seq "$runs"); do wall "$floor" noop; done | median)
printf 'machine: %s, %s cores; date %s; process start %.1f ms\n' "$(uname -m)" "$(nproc)" "$(date -u +%F)" "$start"
printf '| input | size | sna import (file db) | floor: start + parse | ratio | SQLite storing the bytes alone | ratio to start + parse + store | database | db / input | sna export (file) | floor: start + serialize + write | ratio |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
while read -r runtime input; do
    size=$(stat -c %s "$input")
    import=$(for i in $(seq "$runs"); do rm -f "$work"/db*; wall "$sna" --db "$work/db$i" import --runtime "$runtime" "$input"; done | median)
    parse=$(for _ in $(seq "$runs"); do "$floor" parse "$input"; done | median)
    store=$(for i in $(seq "$runs"); do rm -f "$work"/raw*; "$floor" store "$input" "$work/raw$i"; done | median)
    rm -f "$work"/db*
    "$sna" --db "$work/db" import --runtime "$runtime" "$input" >/dev/null 2>&1
    db=$(stat -c %s "$work/db")
    id=$("$sna" --db "$work/db" ls --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
    format=()
    [ "$runtime" = codex ] && format=(--format rollout)
    export=$(for _ in $(seq "$runs"); do rm -f "$work/out"; wall "$sna" --db "$work/db" export "$id" --to "$runtime" "${format[@]}" -o "$work/out"; done | median)
    cmp -s "$work/out" "$input" && same="the input, byte for byte" || same="$(stat -c %s "$work/out") bytes"
    write=$(for _ in $(seq "$runs"); do rm -f "$work/floor-out"; "$floor" write "$input" "$work/floor-out"; done | median)
    awk -v rt="$runtime" -v size="$size" -v imp="$import" -v parse="$parse" -v start="$start" -v db="$db" -v store="$store" \
        -v ex="$export" -v write="$write" 'BEGIN {
        fi = start + parse; fe = start + write
        printf "| %s | %.1f MB | %.0f ms | %.0f ms | %.2fx | %.0f ms | %.2fx | %.1f MB | %.2fx | %.0f ms | %.0f ms | %.2fx |\n",
            rt, size / 1048576, imp, fi, imp / fi, store, imp / (fi + store), db / 1048576, db / size, ex, fe, ex / fe }'
    echo "  ($runtime export: $same)" >&2
done <"$work/inputs"
