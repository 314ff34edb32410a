"""The shared vectors of tests/vectors/, run against the Python API (same files as the Rust and Node runners)."""

from __future__ import annotations

import base64
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

import sna_history
from conftest import ROOT, block_input, load, mismatch, vector_files

sys.path.insert(0, str(ROOT / "tests"))
import pgdb  # noqa: E402


def run_step(store: sna_history.Store, step: dict[str, Any]) -> Any:
    op = step["op"]
    if op == "create_session":
        return {"id": store.create_session(id=step.get("id"), title=step.get("title"), cwd=step.get("cwd")).id}
    if op == "session":
        return {"id": store.session(step["session"]).id}
    if op == "sessions":
        return [info.to_dict() for info in store.sessions()]
    if op == "delete_session":
        return store.delete_session(step["session"])
    if op == "import_native":
        imported = store.import_native(step["runtime"], step["source"], **step.get("options", {}))
        return {"id": imported.id, "length": len(imported)}
    session = store.session(step["session"])
    if op == "append":
        return session.append(block_input(step["block"])).to_dict()
    if op == "extend":
        return [b.to_dict() for b in session.extend([block_input(b) for b in step["blocks"]])]
    if op == "blocks":
        if "from" in step or "to" in step:
            blocks = session.blocks_range(step.get("from", 0), step.get("to", 2**63 - 1))
        else:
            blocks = session.blocks()
        return [b.to_dict() for b in blocks]
    if op == "block":
        return session.block(step["id"]).to_dict()
    if op == "embed":
        return {"base64": base64.b64encode(session.embed(step["embed_id"])).decode()}
    if op == "switches":
        return [s.to_dict() for s in session.switches()]
    if op == "bind":
        return session.bind(step["runtime"], step["native_id"], step["through_seq"]).to_dict()
    if op == "continuation":
        return session.continuation(step["runtime"]).to_dict()
    if op == "to_native":
        return session.to_native(step["runtime"], **step.get("options", {}))
    if op == "prepare_resume":
        with tempfile.TemporaryDirectory() as home:
            return session.prepare_resume(step["runtime"], home=home, **step.get("options", {})).to_dict()
    raise AssertionError(f"unknown op {op!r}")


@pytest.mark.parametrize("path", vector_files(), ids=lambda p: p.stem)
def test_vector(path: Path) -> None:
    run_vector(path, sna_history.Store())


@pytest.mark.parametrize("path", vector_files(), ids=lambda p: p.stem)
def test_vector_on_postgres(path: Path) -> None:
    """The same vector on PostgreSQL, in a database of its own."""
    with pgdb.database("pyvec") as url:
        store = sna_history.Store(url)
        # The store names its server without the password, and has no file.
        assert store.url is not None and store.url.startswith("postgres://") and "@" not in store.url
        assert store.path is None
        try:
            run_vector(path, store)
        finally:
            store.close()


def run_vector(path: Path, store: sna_history.Store) -> None:
    case = load(path)
    for i, step in enumerate(case["steps"]):
        at = f"{path.name} step {i} ({step['op']})"
        if "expect_error" in step:
            expected = step["expect_error"]
            with pytest.raises(sna_history.SnaError) as info:
                run_step(store, step)
            assert info.value.code == expected["code"], f"{at}: {info.value}"
            for needle in expected.get("contains", []):
                assert needle in str(info.value), f"{at}: {info.value!s} does not contain {needle!r}"
            if "at" in expected:
                location = {key: getattr(info.value, key, None) for key in ("line", "offset", "index", "field")}
                assert location == {key: expected["at"].get(key) for key in location}, f"{at}: {info.value!s}"
        else:
            result = run_step(store, step)
            if "expect" in step:
                problem = mismatch(step["expect"], result, "result")
                assert problem is None, f"{at}: {problem}"


def test_every_vector_is_run() -> None:
    assert len(vector_files()) >= 4


def test_matcher_rejects_what_it_should() -> None:
    assert mismatch({"a": 1}, {"a": 2}, "r")
    assert mismatch([1], [1, 2], "r")
    assert mismatch({"a": {"$absent": True}}, {"a": 1}, "r")
    assert mismatch({"a": {"$contains": "xy"}}, {"a": "x"}, "r")
    assert mismatch({"a": 1}, {"a": True}, "r")
    assert mismatch({"a": 1}, {"a": 1, "b": 2}, "r") is None
