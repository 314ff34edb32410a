"""Native text through the Python API: `to_native_text` and `export_to` (a path or a binary file
object) give the bytes of `to_native`'s data written in the format, for every runtime."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import sna_history
from conftest import ROOT

TRANSCRIPT = next((ROOT / "tests" / "fixtures" / "claude-code" / "tools-thinking").glob("*.jsonl"))


def parsed(text: str) -> object:
    """A JSON document, else JSONL records."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines()]


@pytest.fixture
def session() -> sna_history.Session:
    return sna_history.Store().import_file(TRANSCRIPT)


@pytest.mark.parametrize(
    ("runtime", "format"),
    [("claude-code", None), ("claude-code", "messages"), ("codex", None), ("codex", "rollout"), ("opencode", None)],
)
def test_text_holds_the_data(session: sna_history.Session, runtime: str, format: str | None) -> None:
    text = session.to_native_text(runtime, format)
    assert isinstance(text, str) and text.endswith("\n")
    assert parsed(text) == session.to_native(runtime, format)
    assert text == session.to_native_text(runtime, format), "repeatable"


def test_the_original_transcript_comes_back_byte_for_byte(session: sna_history.Session) -> None:
    assert session.to_native_text("claude-code") == TRANSCRIPT.read_text()


def test_export_to_a_path_and_a_binary_file(session: sna_history.Session, tmp_path: Path) -> None:
    expected = session.to_native_text("claude-code")
    report = session.export_to(tmp_path / "out.jsonl", "claude-code")
    assert isinstance(report, sna_history.Report)
    assert (tmp_path / "out.jsonl").read_text() == expected
    buffer = io.BytesIO()
    session.export_to(buffer, "claude-code")
    assert buffer.getvalue().decode() == expected
    with open(tmp_path / "f.jsonl", "wb") as f:
        session.export_to(f, "codex")
    assert (tmp_path / "f.jsonl").read_text() == session.to_native_text("codex")


def test_bad_destinations_and_failing_files(session: sna_history.Session, tmp_path: Path) -> None:
    with open(tmp_path / "t.txt", "w") as f, pytest.raises(sna_history.InvalidInputError, match="binary file"):
        session.export_to(f, "claude-code")
    with pytest.raises(sna_history.InvalidInputError, match="dest"):
        session.export_to(42, "claude-code")

    class Broken(io.RawIOBase):
        calls = 0

        def writable(self) -> bool:
            return True

        def write(self, b: object) -> int:
            self.calls += 1
            raise OSError(28, f"No space left on device (call {self.calls})")

    broken = Broken()
    with pytest.raises(OSError, match=r"No space left on device \(call 1\)"):
        session.export_to(broken, "claude-code")
    assert broken.calls == 1, "not called again after it raised"
    with pytest.raises(sna_history.IoError):
        session.export_to(tmp_path / "missing-dir" / "x.jsonl", "claude-code")


def test_a_refused_export_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    store = sna_history.Store()
    session = store.create_session()
    session.append(sna_history.Block(actor="assistant", kind="thinking", content="unsigned"))
    target = tmp_path / "keep.jsonl"
    target.write_text("before\n")
    with pytest.raises(sna_history.LossyError):
        session.export_to(target, "claude-code", strict=True)
    assert target.read_text() == "before\n"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.jsonl"], "no temporary file left"
