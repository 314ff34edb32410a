"""The Python snippets of the READMEs run as written, so they cannot rot."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import ROOT

READMES = [ROOT / "README.md", ROOT / "bindings-python" / "README.md"]


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_readme_python_snippets_run(readme: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = python_blocks(readme)
    assert blocks, f"{readme} has no python snippet"
    # The Claude Code snippet reads a transcript the way a user would have one.
    fixture = next((ROOT / "tests" / "fixtures" / "claude-code" / "tools-thinking").glob("*-*.jsonl"))
    (tmp_path / "transcript.jsonl").write_bytes(fixture.read_bytes())
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for code in blocks:
            exec(compile(code, str(readme), "exec"), {})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "0 user text" in out and "2 user tool_result 1 failed" in out
    if readme == ROOT / "README.md":
        assert "6 messages" in out and "['claude', '--resume', '60aa014b-82fa-4f7d-8a5d-270b96a69979']" in out
