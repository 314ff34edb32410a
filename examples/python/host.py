"""The host scenario (see examples/README.md) in Python: run Claude Code for a session turn by turn,
survive a killed process, switch to Codex. Needs the runtimes' CLIs and where their models are
(tests/conformance/test_host.py runs it against the pinned CLIs and mock models):

    python host.py <claude> <codex> <home> <project> <database>
"""

from __future__ import annotations

import sys

import sna_history


def main(claude: str, codex: str, home: str, project: str, database: str) -> None:
    with sna_history.Store(database) as store, sna_history.Host(store, bins={"claude-code": claude, "codex": codex}, home=home) as host:
        agent = host.start("host-example", "claude-code", model="claude-opus-5-5", cwd=project)
        for i, text in enumerate(["Remember the word teal.", "Which word was it?"], 1):
            turn = agent.send(text, timeout=300)
            print(f"turn {i}: {turn.text} (resumed: {turn.resumed_via or 'no'})")
        agent.kill()
        turn = agent.send("And after a restart?", timeout=300)
        print(f"after kill: {turn.text} (resumed: {turn.resumed_via}), processes started: {agent.status().spawns}")
        agent.switch("codex")
        turn = agent.send("Now in Codex: which word?", timeout=300)
        print(f"in codex: {turn.text} (resumed: {turn.resumed_via})")
        said = [f"{b.actor} {b.kind}" for b in agent.session.blocks() if b.actor != "system" and b.kind in ("text", "tool_use", "tool_result")]
        print(f"conversation: {len(said)} blocks; runs: {', '.join(s.to.provider or '?' for s in agent.session.switches())}")


if __name__ == "__main__":
    main(*sys.argv[1:6])
