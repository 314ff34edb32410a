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
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for code in blocks:
            exec(compile(code, str(readme), "exec"), {})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "0 user text" in out and "2 user tool_result 1 failed" in out
