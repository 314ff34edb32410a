#!/usr/bin/env bash
# The HTML view in a real browser: builds a session that switches runtime and carries images, writes
# it with `sna view`, opens it in headless Chromium, takes a screenshot and checks the DOM the page's
# script (timeline.js, shared with `sna serve`) rendered: every block, the switch markers, decoded
# images, markup in the content shown as text, runtime bookkeeping hidden behind its toggle, and the
# tokens of a turn and of the session.
# Needs the venv, the debug `sna` that ./scripts/test.sh builds, and chromium: without it the check
# fails, naming the line that installs it (./scripts/test.sh installs it first where it can).
set -euo pipefail
cd "$(dirname "$0")/.."

chromium="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chromium" ]; then
    echo "FAILED: chromium is not installed, so the HTML view cannot be checked in a browser; install it with: apt-get install -y chromium (as root; otherwise sudo apt-get install -y chromium)" >&2
    exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
[ -n "${SNA_VIEW_KEEP:-}" ] && trap - EXIT

.venv/bin/python - "$work" <<'PY'
import base64, sys
from pathlib import Path
import sna_history

work = Path(sys.argv[1])
red = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEUlEQVR42mO4IyeHFTEMLQkAid1GAQVcagkAAAAASUVORK5CYII=")
store = sna_history.Store(work / "history.db")
s = store.create_session(id="view-check", title="View check")
s.extend([
    {"actor": "user", "kind": "text", "content": "What is this? ![red](embed://red)",
     "embeds": {"red": {"mime": "image/png", "name": "red.png", "data": red}}},
    {"actor": "assistant", "kind": "thinking", "content": "A small red square.", "provider": "claude-code", "model_provider": "anthropic", "model": "claude-opus-5-5"},
    {"actor": "assistant", "kind": "tool_use", "content": '{"command":"file red.png"}', "tool": {"call_id": "c1", "name": "Bash"}, "provider": "claude-code", "model_provider": "anthropic", "model": "claude-opus-5-5"},
    {"actor": "user", "kind": "tool_result", "content": "red.png: PNG image data, 8 x 8", "tool": {"call_id": "c1"},
     "embeds": {"red2": {"mime": "image/png", "name": "\"><b>again</b>![x](embed://red)", "data": red}}},
    {"actor": "assistant", "kind": "text", "content": "A red square <b>not bold</b>.", "provider": "claude-code", "model_provider": "anthropic", "model": "claude-opus-5-5",
     # The transcript record it came from, with the response's token usage.
     "native": {"runtime": "claude-code", "data": {"record": {"type": "assistant", "sessionId": "v", "requestId": "req_v", "message": {
         "id": "msg_v", "model": "claude-opus-5-5", "content": None,
         "usage": {"input_tokens": 1200, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 34, "output_tokens": 300}}}}}},
    {"actor": "user", "kind": "text", "content": "Go on in Codex."},
    {"actor": "assistant", "kind": "text", "content": "Codex here.", "provider": "codex", "model_provider": "openai", "model": "gpt-5.4"},
    {"actor": "system", "kind": "status", "content": "turn finished"},
    {"actor": "assistant", "kind": "text", "content": "OpenCode here.", "provider": "opencode", "model_provider": "anthropic", "model": "claude-sonnet-4-5"},
])
PY

target/debug/sna --db "$work/history.db" view view-check -o "$work/view.html"

# A copy with a probe that reports what the browser rendered into the DOM it dumps.
cp "$work/view.html" "$work/probe.html"
cat >> "$work/probe.html" <<'JS'
<script>
window.addEventListener('load', () => {
  const out = document.createElement('pre');
  out.id = 'probe';
  const main = document.querySelector('main#timeline');
  const imgs = [...main.querySelectorAll('img.embed')];
  const status = main.querySelector('[data-seq="7"]');
  const toggle = document.getElementById('toggle-bookkeeping');
  const before = status && getComputedStyle(status).display;
  toggle.click();
  const after = status && getComputedStyle(status).display;
  out.textContent = JSON.stringify({
    blocks: [...main.querySelectorAll('[data-seq]:not(.switch)')].map(e => Number(e.dataset.seq)),
    switches: [...main.querySelectorAll('.switch')].map(e => e.textContent),
    images: imgs.map(i => [i.complete, i.naturalWidth, i.naturalHeight]),
    alts: imgs.map(i => i.alt),
    bold: main.querySelectorAll('b, script').length,
    literal: main.querySelector('[data-seq="4"]').textContent.includes('A red square <b>not bold</b>.'),
    result: !!main.querySelector('[data-seq="2"][data-kind="tool_use"] [data-seq="3"][data-kind="tool_result"]'),
    bookkeeping: [before, after, document.querySelector('label[for="toggle-bookkeeping"]').textContent],
    usage: [...main.querySelectorAll('.turn-usage')].map(e => [e.textContent, e.title, e.previousElementSibling.dataset.seq, e.nextElementSibling.dataset.seq]),
    sessionUsage: (document.querySelector('.page-header .usage-total') || {}).textContent,
  });
  document.body.appendChild(out);
});
</script>
JS

flags=(--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking --disable-component-update --disable-sync --disable-extensions --user-data-dir="$work/profile")
"$chromium" "${flags[@]}" --window-size=1000,1600 --screenshot="$work/view.png" "file://$work/view.html" >/dev/null 2>&1
"$chromium" "${flags[@]}" --virtual-time-budget=3000 --dump-dom "file://$work/probe.html" > "$work/dom.html" 2>/dev/null

.venv/bin/python - "$work" <<'PY'
import html, json, re, sys
from pathlib import Path

work = Path(sys.argv[1])
png = (work / "view.png").read_bytes()
assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000, "no screenshot"
dom = (work / "dom.html").read_text()
probe = json.loads(html.unescape(re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S).group(1)))
assert sorted(probe["blocks"]) == list(range(9)), probe["blocks"]
assert probe["switches"] == [
    "Claude Code · claude-opus-5-5",
    "switched to Codex · gpt-5.4 here",
    "switched to OpenCode · claude-sonnet-4-5 here",
], probe["switches"]
assert probe["images"] == [[True, 8, 8], [True, 8, 8]], probe["images"]
# An embed's name is the image's alt text, unchanged, even when it looks like markup or a reference.
assert probe["alts"] == ["red", '"><b>again</b>![x](embed://red)'], probe["alts"]
# The block's own "<b>" is text, not markup.
assert probe["bold"] == 0 and probe["literal"], probe
assert probe["result"], "the tool result is inside its call's item"
assert probe["bookkeeping"] == ["none", "block", "show runtime bookkeeping (1)"], probe["bookkeeping"]
# Tokens and cost: after the turn (before the next message of the person), and the session's.
assert probe["usage"] == [["turn: 1,534 tokensno price", "input 1,200 · output 300 · cache read 34 · 1 response · no price for claude-opus-5-5", "4", "5"]], probe["usage"]
assert probe["sessionUsage"] == "1,534 tokens · no price", probe["sessionUsage"]
print(f"HTML view checked in {Path(sys.argv[1]).name}: 9 blocks, 3 switch markers, 2 images decoded, markup kept as text, bookkeeping toggled, tokens shown, screenshot {len(png)} bytes")
PY

# A session a runtime compacted (Claude Code's `/compact`, a real run): the marker stands before
# the boundary block, with the summary collapsed under it.
compacted="tests/fixtures/claude-code/compact/e4e2453c-d980-4b7d-a578-4a8969921267.jsonl"
target/debug/sna --db "$work/history.db" import "$compacted" 2> /dev/null
target/debug/sna --db "$work/history.db" view e4e2453c-d980-4b7d-a578-4a8969921267 -o "$work/compacted.html"
cp "$work/compacted.html" "$work/compacted-probe.html"
cat >> "$work/compacted-probe.html" <<'JS'
<script>
window.addEventListener('load', () => {
  const out = document.createElement('pre');
  out.id = 'probe';
  const marks = [...document.querySelectorAll('main#timeline .compaction')];
  out.textContent = JSON.stringify(marks.map(m => {
    const next = m.nextElementSibling;
    const details = m.querySelector('details');
    return {
      label: m.querySelector('.label').textContent,
      open: details.open,
      summary: m.querySelector('.compaction-summary').textContent.includes('SUMMARY-MARKER'),
      next: next && next.dataset.seq,
      shown: getComputedStyle(m).display,
    };
  }));
  document.body.appendChild(out);
});
</script>
JS
"$chromium" "${flags[@]}" --virtual-time-budget=3000 --dump-dom "file://$work/compacted-probe.html" > "$work/compacted-dom.html" 2>/dev/null
.venv/bin/python - "$work" <<'PY'
import html, json, re, sys
from pathlib import Path

dom = (Path(sys.argv[1]) / "compacted-dom.html").read_text()
marks = json.loads(html.unescape(re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S).group(1)))
assert len(marks) == 1, marks
mark = marks[0]
assert mark["label"] == "compacted by Claude Code (manual, 15 tokens before)", mark
assert mark["open"] is False and mark["summary"] and mark["shown"] != "none", mark
# The first thing after the marker is the boundary row (seq 42) or, with bookkeeping hidden, the
# block after it in the page's order.
assert mark["next"] is not None and int(mark["next"]) >= 42, mark
print("HTML view of a compacted session checked: one compaction marker before its boundary, the summary collapsed under it")
PY
