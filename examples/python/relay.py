"""The examples' scenario (see examples/README.md) in Python: record a Claude Code run and a switch
to Codex as a host would, export for Codex, prepare the resume."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import sna_history

DATA = Path(__file__).resolve().parent.parent / "data"


def events(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def main() -> None:
    with sna_history.Store() as store:
        session = store.create_session(id="0193c5a0-0000-7000-8000-00000000e001", title="Relay example", cwd="/home/dev/project")
        for event in events("claude-stream.jsonl"):
            session.ingest("claude-code", event)
        session.append(actor="user", kind="text", content="List the files in this project.")
        for event in events("codex-exec.jsonl"):
            session.ingest("codex", event)

        info = session.info()
        print(f'session {info.id} "{info.title or ""}": {info.block_count} blocks')
        for switch in session.switches():
            to = switch.to
            who = [x for x in (to.provider, to.model_provider, to.model) if x]
            print(f"at block {switch.seq}: {' '.join(who)}")
        export = session.export("codex", model_provider="openai", target_model="gpt-5.5")
        print(f"codex items: {len(export.data)}")
        for entry in export.report.entries:
            print(f"  {entry.action}: {entry.message}")
        home = Path(tempfile.mkdtemp(prefix=f"sna-example-python-{os.getpid()}-"))
        try:
            plan = session.prepare_resume("codex", home=home, cwd="/home/dev/project", model_provider="openai", target_model="gpt-5.5")
            print(f"resume: {' '.join(plan.argv)}")
        finally:
            shutil.rmtree(home)


if __name__ == "__main__":
    main()
