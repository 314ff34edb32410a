"""Rust, Python and Node processes append to one session at once: nothing lost, nothing doubled,
seq dense. Needs the Rust example `append_worker`, the Python extension and the Node addon built
(scripts/test.sh builds all three first)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import sna_history
from conftest import run_workers

ROOT = Path(__file__).resolve().parents[2]
PER_PROCESS = 2000


def workers(db: str) -> list[tuple[str, list[str]]]:
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    rust = target / "debug" / "examples" / "append_worker"
    assert rust.exists(), f"{rust} is missing: build it with `cargo build -p sna-history --examples`"
    node_worker = ROOT / "bindings-node" / "__test__" / "append_worker.mjs"
    assert node_worker.exists(), f"{node_worker} is missing"
    py_worker = ROOT / "bindings-python" / "tests" / "append_worker.py"
    common = [str(db), "s", str(PER_PROCESS)]
    return [
        ("rust", [str(rust), *common, "rust"]),
        ("python", [sys.executable, str(py_worker), *common, "python"]),
        ("node", ["node", str(node_worker), *common, "node"]),
        ("python-2", [sys.executable, str(py_worker), *common, "python-2"]),
        ("rust-2", [str(rust), *common, "rust-2"]),
    ]


def test_rust_python_and_node_processes_append_to_one_session(database: str) -> None:
    db = database
    with sna_history.Store(db) as store:
        store.create_session(id="s")
    plan = workers(db)
    run_workers(plan)

    with sna_history.Store(db) as store:
        blocks = store.session("s").blocks()
        info = store.sessions()[0]
    total = PER_PROCESS * len(plan)
    assert [b.seq for b in blocks] == list(range(total))
    assert info.block_count == total
    contents = [b.content for b in blocks]
    assert len(set(contents)) == total, "a block was doubled"
    for name, _ in plan:
        mine = [int(c.rsplit("-", 1)[1]) for c in contents if c.rsplit("-", 1)[0] == name]
        # Each process appends in order, one transaction per block.
        assert mine == list(range(PER_PROCESS)), f"{name}: {len(mine)} blocks, out of order or lost"
    assert len({b.id for b in blocks}) == total
