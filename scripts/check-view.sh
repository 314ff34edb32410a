#!/usr/bin/env bash
# The HTML view in a real browser: builds a session that switches runtime and carries images, writes
# it with `sna view`, opens it in headless Chromium, takes a screenshot and checks the rendered DOM
# for every block, the switch markers and decoded images. Needs the venv and the debug `sna` that
# ./scripts/test.sh builds; skipped (and said so) when chromium is not installed
# (Debian/Ubuntu: `apt install chromium`).
set -euo pipefail
cd "$(dirname "$0")/.."

chromium="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chromium" ]; then
    echo "SKIPPED: chromium is not installed (apt install chromium); the HTML view was not checked in a browser"
    exit 0
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
     "embeds": {"red2": {"mime": "image/png", "name": "again.png", "data": red}}},
    {"actor": "assistant", "kind": "text", "content": "A red square <b>not bold</b>.", "provider": "claude-code", "model_provider": "anthropic", "model": "claude-opus-5-5"},
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
  const imgs = [...document.querySelectorAll('img.embed')];
  out.textContent = JSON.stringify({
    blocks: [...document.querySelectorAll('[data-seq]:not(.switch)')].map(e => Number(e.dataset.seq)),
    switches: [...document.querySelectorAll('.switch')].map(e => e.textContent),
    images: imgs.map(i => [i.complete, i.naturalWidth, i.naturalHeight]),
    bold: document.querySelectorAll('main b').length,
  });
  document.body.appendChild(out);
});
</script>
JS

flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" --no-first-run --disable-extensions)
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
    "claude-code · anthropic claude-opus-5-5",
    "switched to codex · openai gpt-5.4",
    "switched to opencode · anthropic claude-sonnet-4-5",
], probe["switches"]
assert probe["images"] == [[True, 8, 8], [True, 8, 8]], probe["images"]
# Only the tool-call summary is bold: the block's own "<b>" is text.
assert probe["bold"] == 1, probe["bold"]
print(f"HTML view checked in {Path(sys.argv[1]).name}: 9 blocks, 3 switch markers, 2 images decoded, screenshot {len(png)} bytes")
PY
