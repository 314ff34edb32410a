"""The Python surface: types, errors with code and location, context managers, files on disk."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import sna_history
from sna_history import Block, Store
from conftest import SCHEMA

UTC = dt.timezone.utc


def test_append_with_fields_block_or_dict() -> None:
    session = Store().create_session(title="t")
    a = session.append(actor="user", kind="text", content="one")
    b = session.append({"actor": "assistant", "kind": "text", "content": "two"})
    c = session.append(Block("user", "text", "three", id="c-3"))
    assert [x.seq for x in (a, b, c)] == [0, 1, 2]
    assert c.id == "c-3" and a.id and a.id != b.id
    assert [x.content for x in session.blocks()] == ["one", "two", "three"]
    assert len(session) == 3
    with pytest.raises(sna_history.InvalidInputError, match="not both"):
        session.append(Block("user", "text", "x"), content="y")
    with pytest.raises(sna_history.InvalidInputError, match="needs a block"):
        session.append()


def test_block_is_immutable_comparable_and_round_trips() -> None:
    when = dt.datetime(2026, 11, 30, 10, 0, 1, 500000, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    block = Block(
        "assistant", "tool_use", '{"cmd": "ls"}', id="t-1", tool={"call_id": "call_1", "name": "Bash"},
        provider="codex", model_provider="openai", model="gpt-5.4", created_at=when,
    )
    assert block.created_at == when and block.created_at.tzinfo is not None
    assert block.created_at.utcoffset() == dt.timedelta(0)
    with pytest.raises(AttributeError):
        block.content = "changed"  # type: ignore[misc]
    assert Block.from_dict(block.to_dict()) == block
    assert Block.from_json(block.to_json()) == block
    assert block != Block("assistant", "tool_use", '{"cmd": "ls"}', id="t-2", tool={"call_id": "call_1", "name": "Bash"}, created_at=when)
    assert hash(Block.from_dict(block.to_dict())) == hash(block)
    assert "call_id='call_1'" in repr(block).replace('"', "'")
    assert block.to_dict()["created_at"] == "2026-11-30T08:00:01.500Z"
    json.dumps(block.to_dict())


def test_created_at_accepts_iso_and_millis_but_not_naive() -> None:
    assert Block("user", "text", created_at="2026-11-30T10:00:00Z").created_at == dt.datetime(2026, 11, 30, 10, tzinfo=UTC)
    assert Block("user", "text", created_at=0).created_at == dt.datetime(1970, 1, 1, tzinfo=UTC)
    with pytest.raises(sna_history.InvalidInputError, match="naive datetime") as info:
        Block("user", "text", created_at=dt.datetime(2026, 1, 1))
    assert info.value.field == "created_at"


def test_serialized_blocks_match_the_json_schema(tmp_path: Path) -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    session = Store(tmp_path / "h.db").create_session()
    stored = session.extend([
        {"actor": "user", "kind": "text", "content": "look ![s](embed://s.png)",
         "embeds": {"s.png": {"mime": "image/png", "name": "s.png", "data": b"\x89PNG"}}},
        {"actor": "assistant", "kind": "thinking", "content": "hmm", "model": "claude-opus-4-5",
         "reasoning": {"format": "anthropic-signature", "data": "sig", "scope": {"model_provider": "anthropic"}}},
        {"actor": "assistant", "kind": "tool_use", "content": "{}", "tool": {"call_id": "c", "name": "Read"}},
        {"actor": "user", "kind": "tool_result", "content": "ok", "tool": {"call_id": "c", "is_error": False},
         "native": {"runtime": "claude-code", "data": [1, {"a": None}]}},
        {"actor": "system", "kind": "status", "content": "compacted"},
        {"actor": "system", "kind": "error", "content": "bad line"},
    ])
    for block in stored + session.blocks():
        validator.validate(json.loads(block.to_json()))
    # The schema itself rejects what core rejects, so it cannot pass everything.
    bad = json.loads(stored[2].to_json())
    del bad["tool"]
    assert not validator.is_valid(bad)
    bad = json.loads(stored[0].to_json())
    bad["actor"] = "robot"
    assert not validator.is_valid(bad)


@pytest.mark.parametrize(
    ("fields", "error", "needles"),
    [
        ({"actor": "robot", "kind": "text"}, sna_history.InvalidInputError, ["unknown actor \"robot\""]),
        ({"actor": "user", "kind": "speech"}, sna_history.InvalidInputError, ["unknown kind \"speech\""]),
        ({"actor": "assistant", "kind": "tool_use", "content": "{}"}, sna_history.InvalidInputError, ["tool.call_id"]),
        ({"actor": "user", "kind": "text", "embeds": {"e": {"mime": "image/png"}}}, sna_history.InvalidInputError, ["carries no bytes"]),
        ({"actor": "user", "kind": "text", "embeds": {"e": {"mime": "image/png", "data": "not bytes"}}}, sna_history.InvalidInputError, ["embeds.e.data", "expected bytes"]),
        ({"actor": "user", "kind": "text", "tool": {"call_id": object()}}, sna_history.InvalidInputError, ["tool.call_id", "object"]),
    ],
)
def test_bad_blocks_name_what_and_where(fields: dict, error: type, needles: list[str]) -> None:
    session = Store().create_session()
    with pytest.raises(error) as info:
        session.append(**fields)
    assert isinstance(info.value, sna_history.SnaError)
    assert info.value.code == "INVALID_INPUT"
    for needle in needles:
        assert needle in str(info.value)
    assert session.blocks() == []


def test_batch_errors_carry_the_index_and_store_nothing() -> None:
    session = Store().create_session()
    with pytest.raises(sna_history.InvalidInputError) as info:
        session.extend([{"actor": "user", "kind": "text"}, {"actor": "user", "kind": "tool_result", "content": "x"}])
    assert info.value.index == 1 and info.value.field == "tool.call_id"
    assert "block 1 of the batch" in str(info.value)
    assert len(session) == 0


def test_unknown_ids() -> None:
    store = Store()
    with pytest.raises(sna_history.NotFoundError) as info:
        store.session("nope")
    assert info.value.code == "NOT_FOUND" and "nope" in str(info.value)
    session = store.create_session(id="s")
    with pytest.raises(sna_history.NotFoundError):
        session.block("missing")
    with pytest.raises(sna_history.NotFoundError):
        session.embed("missing")
    with pytest.raises(sna_history.NotFoundError):
        store.delete_session("nope")
    store.delete_session("s")
    with pytest.raises(sna_history.NotFoundError, match="deleted"):
        session.append(actor="user", kind="text")


def test_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(sna_history.SchemaTooNewError) as info:
        Store(path)
    assert info.value.code == "SCHEMA_TOO_NEW"
    assert "schema version 99" in str(info.value) and str(path) in str(info.value)
    assert path.read_bytes() == before


def test_paths_that_are_not_databases(tmp_path: Path) -> None:
    with pytest.raises(sna_history.InvalidInputError, match="is a directory"):
        Store(tmp_path)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite at all, just some text that is long enough" * 20)
    with pytest.raises(sna_history.InvalidInputError, match="not an SQLite database"):
        Store(junk)
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(sna_history.InvalidInputError, match="another application"):
        Store(other)
    with pytest.raises(sna_history.IoError, match="does not exist"):
        Store(tmp_path / "missing-dir" / "h.db")
    with pytest.raises(sna_history.InvalidInputError, match="expected a path"):
        Store(42)  # type: ignore[arg-type]


def test_store_reopens_and_context_managers_close(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    with Store(path) as store:
        assert store.path == path
        with store.create_session(id="s", title="T", cwd=tmp_path) as session:
            session.append(actor="user", kind="text", content="kept", embeds=None)
    assert store.closed
    with pytest.raises(sna_history.ClosedError):
        store.sessions()
    with Store(str(path)) as again:
        info = again.sessions()[0]
        assert (info.id, info.title, info.cwd, info.block_count) == ("s", "T", str(tmp_path), 1)
        assert info.updated_at >= info.created_at
        assert again.session("s").blocks()[0].content == "kept"


def test_embeds_are_bytes_and_stored_once() -> None:
    store = Store()
    data = bytes(range(256)) * 10
    for name in ("a", "b"):
        s = store.create_session(id=name)
        block = s.append(actor="user", kind="text", content="![i](embed://img)",
                         embeds={"img": {"mime": "image/png", "data": bytearray(data)}})
        assert block.embeds == {"img": {"mime": "image/png", "size": 2560, "sha256": hashlib.sha256(data).hexdigest()}}
        assert s.embed("img") == data and isinstance(s.embed("img"), bytes)
    assert store.blob_count() == 1
    store.delete_session("a")
    assert store.blob_count() == 1
    store.delete_session("b")
    assert store.blob_count() == 0


def test_switches_bind_continuation_objects() -> None:
    s = Store().create_session()
    s.append(actor="user", kind="text", content="q")
    s.append(actor="assistant", kind="text", content="a", provider="codex", model_provider="openai", model="gpt-5.4")
    (switch,) = s.switches()
    assert switch.seq == 1 and switch.from_ is None and switch.to.model == "gpt-5.4"
    assert switch.to_dict()["from"] is None
    binding = s.bind("codex", "thread-1", 1)
    assert (binding.runtime, binding.native_id, binding.through_seq) == ("codex", "thread-1", 1)
    assert s.binding("codex") == binding and s.binding("opencode") is None
    s.append(actor="user", kind="text", content="more")
    cont = s.continuation("codex")
    assert cont.mode == "continue" and cont.native_id == "thread-1" and [b.content for b in cont.pending] == ["more"]
    assert s.continuation("claude-code").mode == "replay" and "no claude-code thread" in (s.continuation("claude-code").reason or "")
    with pytest.raises(sna_history.InvalidInputError, match="unknown runtime \"gemini\""):
        s.bind("gemini", "x", 0)


def test_conversion_calls_are_declared_and_check_their_arguments(tmp_path: Path) -> None:
    store = Store()
    s = store.create_session()
    s.append(actor="user", kind="text", content="hi")
    with pytest.raises(sna_history.InvalidInputError, match="unknown format \"rollout\" for claude-code"):
        s.to_native("claude-code", format="rollout")
    with pytest.raises(sna_history.InvalidInputError, match="unknown option \"fromat\""):
        s.to_native("codex", fromat="items")
    with pytest.raises(sna_history.InvalidInputError, match="foreign_reasoning"):
        s.export("codex", foreign_reasoning="maybe")
    with pytest.raises(sna_history.InvalidInputError, match="unknown runtime"):
        s.to_native("gemini")
    with pytest.raises(sna_history.InvalidInputError, match="must be an object"):
        s.ingest("codex", [1, 2])
    with pytest.raises(sna_history.IoError):
        store.import_file(tmp_path / "missing.jsonl")
    with pytest.raises(sna_history.InvalidInputError, match="is a directory"):
        store.import_file(tmp_path, "codex")
    assert sna_history.formats("codex") == ["items", "rollout"]
    assert set(sna_history.ERROR_CODES) >= {"INVALID_INPUT", "NOT_FOUND", "CONFLICT", "SCHEMA_TOO_NEW", "STORAGE", "UNSUPPORTED", "LOSSY"}


def test_a_panic_becomes_internal_error() -> None:
    with pytest.raises(sna_history.InternalError) as info:
        sna_history._native._panic_for_tests()  # type: ignore[attr-defined]
    assert info.value.code == "INTERNAL" and "deliberate panic" in str(info.value)
    assert Store().create_session().append(actor="user", kind="text").seq == 0


def test_error_classes_carry_their_code() -> None:
    for cls, code in [
        (sna_history.InvalidInputError, "INVALID_INPUT"), (sna_history.NotFoundError, "NOT_FOUND"),
        (sna_history.ConflictError, "CONFLICT"), (sna_history.SchemaTooNewError, "SCHEMA_TOO_NEW"),
        (sna_history.StorageError, "STORAGE"), (sna_history.UnsupportedError, "UNSUPPORTED"),
        (sna_history.LossyError, "LOSSY"), (sna_history.InternalError, "INTERNAL"),
    ]:
        assert issubclass(cls, sna_history.SnaError) and cls.code == code


def test_threads_share_a_store_and_each_may_open_its_own(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    Store(path).create_session(id="s")
    errors: list[BaseException] = []

    def work(tag: str) -> None:
        try:
            with Store(path) as store:
                session = store.session("s")
                for i in range(200):
                    session.append(actor="user", kind="text", content=f"{tag}-{i}")
        except BaseException as e:  # noqa: BLE001 - collected and re-raised below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    blocks = Store(path).session("s").blocks()
    assert [b.seq for b in blocks] == list(range(800))
    assert len({b.content for b in blocks}) == 800


def test_large_results_are_built_with_the_collector_paused_and_leave_it_as_it_was() -> None:
    import gc

    session = Store().create_session()
    session.extend([{"actor": "user", "kind": "text", "content": f"message {i}"} for i in range(2000)])
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        # Thousands of dicts and lists: with the collector running, they would set off collections.
        native = session.to_native("claude-code", format="messages")
        # Counted before anything else allocates: the collector is on again, and the objects built
        # while it was paused make the next allocation not served from a free list (pytest's
        # assertion rewriting makes some) start a collection, after the call.
        during = len(collections)
        assert len(native["messages"]) == 1 and len(native["messages"][0]["content"]) == 2000
        assert during == 0, collections
        assert gc.isenabled()
        gc.disable()
        session.export("codex")
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.callbacks.remove(count)


def test_options_go_to_core_whole(tmp_path: Path) -> None:
    s = Store().create_session(cwd=str(tmp_path))
    # An unknown keyword is refused even when it is None, as Node refuses `null`.
    with pytest.raises(sna_history.InvalidInputError, match='unknown option "fromat"'):
        s.to_native("codex", fromat=None)
    # Paths reach core as text: one that is not UTF-8 is refused, never altered.
    bad = os.fsdecode(b"/tmp/\xff-home")
    with pytest.raises(sna_history.InvalidInputError, match="must be valid UTF-8") as info:
        s.prepare_resume("codex", home=bad)
    assert info.value.field == "home"
    with pytest.raises(sna_history.InvalidInputError, match="must be valid UTF-8"):
        Store().create_session(cwd=bad)
    assert Store().create_session(id="x", title=None, cwd=tmp_path).info().cwd == str(tmp_path)


def test_cyclic_and_very_deep_values_are_refused_not_crashed() -> None:
    # Issue 17, defect 3: these used to overflow the stack and kill the interpreter.
    store = Store()
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(sna_history.InvalidInputError, match="nested more than 256 levels deep"):
        store.import_native("claude-code", [cyclic])
    me: dict[str, Any] = {"actor": "user", "kind": "text"}
    me["native"] = {"runtime": "claude-code", "data": me}
    with pytest.raises(sna_history.InvalidInputError, match="is there a cycle"):
        Block.from_dict(me)
    session = store.create_session()
    with pytest.raises(sna_history.InvalidInputError, match="nested more than"):
        session.ingest("codex", {"type": "item.completed", "item": me})
    deep: Any = "x"
    for _ in range(4700):
        deep = [deep]
    with pytest.raises(sna_history.InvalidInputError, match="nested more than"):
        store.import_native("codex", [{"type": "message", "content": deep}])
    # Deep but readable data is kept whole and reads back.
    ok: Any = "x"
    for _ in range(50):
        ok = [ok]
    block = session.append(actor="user", kind="text", content="hi", native={"runtime": "claude-code", "data": {"v": ok}})
    assert session.block(block.id).native == {"runtime": "claude-code", "data": {"v": ok}}


def test_integers_beyond_64_bits_stay_integers() -> None:
    # Issue 17, defect 13: 10**30 came back as 1e+30.
    store = Store()
    record = {"type": "summary", "summary": "s", "leafUuid": "u", "count": 10**30, "neg": -(2**70)}
    session = store.import_native("claude-code", [record])
    [back] = session.to_native("claude-code")
    assert back["count"] == 10**30 and isinstance(back["count"], int)
    assert back["neg"] == -(2**70)
    block = session.append(actor="user", kind="text", content="x", native={"runtime": "x", "data": {"n": 2**64}})
    assert session.block(block.id).native == {"runtime": "x", "data": {"n": 2**64}}


def test_redact_keeps_secrets_out_of_exports() -> None:
    session = Store().create_session()
    key = "sk-ant-api03-abcDEF1234567890_abcdefghijklmnopqrstuvwxyz-AAAA"
    session.append(actor="user", kind="text", content=f"key {key}")
    export = session.export("codex", redact=True)
    assert key not in json.dumps(export.data)
    assert [e.action for e in export.report.entries] == ["redacted"]
    assert key in json.dumps(session.to_native("codex"))


def test_scan_and_redact_in_place() -> None:
    session = Store().create_session()
    token = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"
    session.append(actor="user", kind="text", content=f"GITHUB_TOKEN={token}")
    [found] = session.scan_secrets()
    assert found["kind"] == "github-token" and found["seq"] == 0 and token not in found["preview"]
    report = session.redact_in_place()
    assert [e.action for e in report.entries] == ["redacted"]
    assert session.blocks()[0].content == "GITHUB_TOKEN=[REDACTED:github-token]"
    assert session.scan_secrets() == []
