"""The Python snippets of the READMEs and of every page under docs/ run as written, so they cannot rot."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import ROOT

READMES = [ROOT / "README.md", ROOT / "bindings-python" / "README.md"]
FIXTURES = ROOT / "tests" / "fixtures"


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


DOC_PAGES = [p for p in sorted((ROOT / "docs").rglob("*.md")) if python_blocks(p)]

# What a page's snippets print, beyond running without an error.
EXPECTED = {
    "README.md": ["0 user text", "2 user tool_result 1 failed"],
    "bindings-python/README.md": ["0 user text", "2 user tool_result 1 failed"],
    "docs/runtimes/claude-code.md": ["6 messages", "['claude', '--resume', '60aa014b-82fa-4f7d-8a5d-270b96a69979']"],
    "docs/runtimes/codex.md": ["['codex', 'exec', 'resume', '01a23770-a56e-7aa2-983a-2aa2cbed9afd']"],
    "docs/runtimes/opencode.md": ["['opencode', 'import'] ['opencode', 'run', '--session']"],
    "docs/runtimes/gemini-cli.md": ["['gemini', '--session-file']"],
    "docs/runtimes/pi.md": ["pi ['--provider', 'anthropic', '--model', 'claude-sonnet-4-5']"],
    "docs/runtimes/qwen-code.md": ["['qwen', '--resume', '"],
    "docs/runtimes/copilot-cli.md": ["['copilot', '--resume', '"],
    "docs/concepts.md": ["[(1, 'claude-code'), (2, 'codex')]", "continue ['And add a test.']"],
    "docs/long-sessions.md": ["degraded"],
    "docs/getting-started.md": ["rollout lines", "dropped"],
}


def one(folder: Path, pattern: str) -> Path:
    return next(folder.glob(pattern))


def stage(tmp_path: Path) -> None:
    """The files the snippets name, as a user would have them: one of each runtime's, from the fixtures."""
    copies = {
        "transcript.jsonl": one(FIXTURES / "claude-code" / "tools-thinking", "*-*.jsonl"),
        "rollout.jsonl": one(FIXTURES / "codex" / "basic", "rollout-*.jsonl"),
        "export.json": FIXTURES / "opencode" / "tools-reasoning" / "export.json",
        "gemini-session.jsonl": one(FIXTURES / "gemini-cli" / "tools-thinking", "session-*.jsonl"),
        "pi-session.jsonl": one(FIXTURES / "pi" / "tools-thinking", "2026-*.jsonl"),
        "qwen-chat.jsonl": one(FIXTURES / "qwen-code" / "tools-thinking", "*-*-*-*-*.jsonl"),
        "copilot-events.jsonl": one(FIXTURES / "copilot-cli" / "tools-thinking", "*.events.jsonl"),
    }
    for name, source in copies.items():
        shutil.copyfile(source, tmp_path / name)
    for db in (FIXTURES / "opencode" / "tools-reasoning").glob("opencode.db*"):
        shutil.copyfile(db, tmp_path / db.name)


@pytest.mark.parametrize("doc", READMES + DOC_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_doc_python_snippets_run(doc: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = python_blocks(doc)
    assert blocks, f"{doc} has no python snippet"
    stage(tmp_path)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for code in blocks:
            exec(compile(code, str(doc), "exec"), {})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    for expected in EXPECTED.get(str(doc.relative_to(ROOT)), []):
        assert expected in out, f"{doc}: {expected!r} not in the output:\n{out}"


def test_every_page_with_python_is_expected() -> None:
    """A page that gains snippets gets its expectations here too."""
    pages = {str(p.relative_to(ROOT)) for p in DOC_PAGES}
    assert pages <= set(EXPECTED), sorted(pages - set(EXPECTED))
    assert "docs/runtimes/claude-code.md" in pages
