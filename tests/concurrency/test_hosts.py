"""Issue 22: many machines on one PostgreSQL. Eight processes (a Python and a Node writer for each of
four simulated hosts) append to 100 sessions at once; then an import killed half-way leaves
nothing behind. Needs the Python extension and the Node addon built, and the server
`SNA_TEST_POSTGRES_URL` names (tests/pgdb.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import sna_history
from conftest import run_workers

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pgdb  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = 100
PER_PROCESS = 500
HOSTS = 4


def test_eight_processes_as_four_hosts_append_to_a_hundred_sessions() -> None:
    with pgdb.database("hosts") as url:
        with sna_history.Store(url) as store:
            for k in range(SESSIONS):
                store.create_session(id=f"s{k}")
        py_worker = ROOT / "bindings-python" / "tests" / "append_worker.py"
        node_worker = ROOT / "bindings-node" / "__test__" / "append_worker.mjs"
        plan = []
        for host in range(HOSTS):
            # Each "host" names itself in its blocks' content; the workers spread over all sessions.
            plan.append((f"h{host}.py", [sys.executable, str(py_worker), url, f"s*{SESSIONS}", str(PER_PROCESS), f"h{host}.py"]))
            plan.append((f"h{host}.node", ["node", str(node_worker), url, f"s*{SESSIONS}", str(PER_PROCESS), f"h{host}.node"]))
        run_workers(plan)

        with sna_history.Store(url) as store:
            seen: dict[str, list[int]] = defaultdict(list)
            total = 0
            for k in range(SESSIONS):
                session = store.session(f"s{k}")
                blocks = session.blocks()
                assert [b.seq for b in blocks] == list(range(len(blocks))), f"s{k}: seq not dense"
                assert len(blocks) == len(session), f"s{k}: count differs from the blocks"
                for b in blocks:
                    tag, _, i = b.content.rpartition("-")
                    seen[tag].append(int(i))
                total += len(blocks)
        assert total == PER_PROCESS * len(plan), f"{total} blocks stored"
        for name, _ in plan:
            assert sorted(seen[name]) == list(range(PER_PROCESS)), f"{name}: blocks lost or doubled"


def big_transcript(path: Path, copies: int) -> None:
    """The tools-thinking fixture repeated (fresh uuids per copy) into a transcript of many MB."""
    fixture = next((ROOT / "tests" / "fixtures" / "claude-code" / "tools-thinking").glob("*-*-*-*-*.jsonl"))
    lines = fixture.read_text().splitlines()
    with path.open("w") as out:
        for copy in range(copies):
            for line in lines:
                record = json.loads(line)
                for key in ("uuid", "parentUuid"):
                    if isinstance(record.get(key), str):
                        record[key] = f"{copy:08x}{record[key][8:]}"
                out.write(json.dumps(record) + "\n")


def open_transactions(url: str) -> int:
    """How many other connections to the database at `url` are inside a transaction."""
    out = subprocess.run(
        ["psql", "-X", "-q", "-t", "-A", url, "-c",
         "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL"],
        check=True, capture_output=True, text=True,
    )
    return int(out.stdout.strip() or 0)


def test_an_import_killed_half_way_leaves_nothing(tmp_path: Path) -> None:
    transcript = tmp_path / "60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl"
    big_transcript(transcript, 400)
    with pgdb.database("killed") as url:
        with sna_history.Store(url) as store:
            store.create_session(id="kept").append(actor="user", kind="text", content="before")
        script = "import sys, sna_history; sna_history.Store(sys.argv[1]).import_file(sys.argv[2], 'claude-code'); print('done')"
        proc = subprocess.Popen([sys.executable, "-c", script, url, str(transcript)], stdout=subprocess.PIPE, text=True, start_new_session=True)
        try:
            # Killed once the import's transaction is open on the server (it is writing rows).
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None and not open_transactions(url):
                time.sleep(0.05)
            time.sleep(0.3)
            assert proc.poll() is None, "the import ended before it could be killed; make the transcript bigger"
            assert open_transactions(url), "the import's transaction was never seen open"
            os.killpg(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        # The server ends the dead client's transaction: nothing of the import stays.
        for _ in range(50):
            with sna_history.Store(url) as store:
                ids = [info.id for info in store.sessions()]
            if ids == ["kept"]:
                break
            time.sleep(0.1)
        assert ids == ["kept"], ids
        with sna_history.Store(url) as store:
            assert [b.content for b in store.session("kept").blocks()] == ["before"]
            # The same import, not killed, then works.
            imported = store.import_file(transcript, "claude-code")
            assert len(imported) > 1000
