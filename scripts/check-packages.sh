#!/usr/bin/env bash
# The three ways users install sna-history, each into a fresh place, each then used once:
#   maturin build → the wheel            (installed in a fresh venv, used away from the source)
#   pip install ./bindings-python        (builds from source, in another fresh venv)
#   npm pack in bindings-node → tarball  (npm install <tarball> in a fresh directory)
# Needs the venv (maturin) and the built addon that ./scripts/test.sh makes. What is checked is the
# packaging: the wheel and the source install are built in the dev profile from the crates the venv's
# build compiled (SNA_PACKAGE_PROFILE=release builds them optimized, as a published package is).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
smoke_py='
import sna_history, tempfile, pathlib
with sna_history.Store() as store:
    s = store.create_session(id="smoke")
    s.append(actor="user", kind="text", content="hi")
    assert s.to_native("codex")[0]["content"][0]["text"] == "hi"
    assert sna_history.runtimes() == ["claude-code", "codex", "opencode", "gemini-cli", "pi", "qwen-code", "copilot-cli"]
print("ok", sna_history.__file__)
'

PROFILE=${SNA_PACKAGE_PROFILE:-dev}
echo "maturin build --profile $PROFILE: the wheel in a fresh venv"
.venv/bin/maturin build --quiet --profile "$PROFILE" -i .venv/bin/python -m bindings-python/Cargo.toml -o "$work/wheels"
python3 -m venv "$work/from-wheel"
"$work/from-wheel/bin/python" -m pip install --quiet "$work"/wheels/*.whl
(cd "$work" && "$work/from-wheel/bin/python" -c "$smoke_py")

echo "pip install ./bindings-python (from source, fresh venv)"
python3 -m venv "$work/from-source"
MATURIN_PEP517_ARGS="--profile $PROFILE" "$work/from-source/bin/python" -m pip install --quiet "$ROOT/bindings-python"
(cd "$work" && "$work/from-source/bin/python" -c "$smoke_py")

echo "npm pack: the tarball installed into a fresh directory"
(cd bindings-node && npm pack --silent --pack-destination "$work" > /dev/null)
mkdir "$work/app"
(cd "$work/app" && npm init -y > /dev/null && npm install --silent --no-audit --no-fund "$work"/sna-history-*.tgz)
(cd "$work/app" && node -e '
const { Store, RUNTIMES } = require("sna-history")
const store = new Store()
const s = store.createSession({ id: "smoke" })
s.append({ actor: "user", kind: "text", content: "hi" })
if (s.toNative("codex")[0].content[0].text !== "hi") throw new Error("wrong items")
if (RUNTIMES.length !== 7) throw new Error("wrong runtimes")
console.log("ok", require.resolve("sna-history"))
')
