"""The live web UI of `sna serve` in a real browser: headless Chromium (Debian's, driven by
playwright-core from browser_ui.mjs) goes through a session at 1440×900 and at 390×844 (a phone):
the session list and its filter, Claude Code and its model picked in the composer, a message sent,
the status light busy then idle, the answer streamed and then rendered as Markdown, the tool call
paired with its result and opened, the bookkeeping toggle, a switch to Codex with its marker and
answer, the layout (nothing sideways, the controls inside the window and on top, nothing under the
composer), a reload; full-page screenshots in target/screenshots. Then a session with compactions:
their markers, the Compact button, and a compaction the runtime makes by itself; and the page of a
session that does not exist. No runtime process and no Chromium process may be left
afterwards."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import sna_history
from helpers.common import FIXTURES, HERE, ROOT, said
from helpers.mocks import OVERFLOW, summary_reply, text_reply, tool_reply
from helpers.processes import assert_gone, marked
from helpers.runtimes import CODEX_MODEL, MODEL
from helpers.serve import Server, track

SCREENSHOTS = ROOT / "target" / "screenshots"
INSTALL = "apt-get install -y chromium (as root; else sudo apt-get install -y chromium)"

ANSWER = """## Files in the project

The project holds **two files**, listed by `ls`:

- data.csv: a small table
- notes.txt: a note

```sh
ls -1
```

That is all."""
CODEX_ANSWER = "Codex here: **data.csv** and notes.txt, as Claude Code found."

ROUNDS: list[dict[str, Any]] = [
    {"name": "wide", "width": 1440, "height": 900, "mobile": False, "session": "ui-wide", "title": "Browser test, wide"},
    {"name": "phone", "width": 390, "height": 844, "mobile": True, "session": "ui-phone", "title": "Browser test, phone"},
]


def chromium() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
    if not path:
        pytest.fail(f"chromium is not installed: {INSTALL}")
    return path


def run_browser(job: dict[str, Any], server: Server, sessions: list[str], tmp: Path, timeout: float = 600) -> dict[str, Any]:
    """Runs browser_ui.mjs on `job` (its output in files under `tmp`, the report also kept there as
    browser-report.json); while it runs, the runtime processes of `sessions` are tracked (the serve
    fixture checks they are gone at the end). No process of the browser may outlive it."""
    marker = f"SNA_BROWSER_RUN={uuid.uuid4().hex}"
    env = {**os.environ, marker.split("=")[0]: marker.split("=")[1]}
    stdout, stderr = tmp / "browser-report.json", tmp / "browser-stderr.txt"
    with stdout.open("w") as out_file, stderr.open("w") as err_file:
        proc = subprocess.Popen(
            ["node", str(HERE / "browser_ui.mjs"), json.dumps(job)],
            cwd=HERE, env=env, stdout=out_file, stderr=err_file, start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"browser_ui.mjs ran longer than {timeout} s")
            for session in sessions:
                try:
                    track(server, session)
                except AssertionError:
                    pass
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            # SIGTERM first: Playwright closes its browser on it.
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        left = []
        end = time.monotonic() + 10
        while (left := marked(marker)) and time.monotonic() < end:
            time.sleep(0.1)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert not left, f"browser processes outlived browser_ui.mjs: {left}"
    assert proc.returncode == 0, f"browser_ui.mjs failed ({proc.returncode}):\n{stderr.read_text()[-6000:]}"
    report: dict[str, Any] = json.loads(stdout.read_text())
    return report


def assert_layout(seen: dict[str, Any], width: int) -> None:
    assert seen["innerWidth"] == width, seen
    assert seen["scrollWidth"] <= width, f"the page is wider than the window: {seen['scrollWidth']} > {width} ({seen['wide']})"
    assert seen["wide"] == [], seen["wide"]
    for name, control in seen["controls"].items():
        assert control and control["inside"] and control["onTop"], f"#{name} is not usable: {control}"
    assert seen["overlaps"] == [], f"composer controls overlap: {seen['overlaps']}"
    assert seen["lastBlockClear"], f"the last block ends under the composer: {seen}"
    assert seen["header"]["bottom"] <= seen["controls"]["message"]["top"]


def test_the_web_ui_in_chromium(rig: Any, serve: Any, tmp_path: Path) -> None:
    started = time.monotonic()
    browser = chromium()
    if not (HERE / "node_modules" / "playwright-core").is_dir():
        pytest.fail(f"playwright-core is missing: run `npm install --no-save` in {HERE} (./scripts/test.sh does)")
    paced = {"items": text_reply("claude-code", ANSWER), "pace": 0.3}
    claude = rig("claude-code", [
        tool_reply("claude-code", "toolu_ui_ls_00000000000001", "ls"), paced,
        tool_reply("claude-code", "toolu_ui_ls_00000000000002", "ls"), paced,
    ], name="claude")
    codex = rig("codex", [text_reply("codex", CODEX_ANSWER), text_reply("codex", CODEX_ANSWER)], name="codex")
    claude.env = {**claude.env, **codex.env}
    server = serve(claude)
    for r in ROUNDS:
        server.ok("POST", "/agent/sessions", {"id": r["session"], "label": r["title"], "cwd": str(claude.cwd)})

    # Only this test's own files go: the compaction test below writes into the same folder, perhaps
    # at the same time (in another pytest-xdist worker).
    for r in ROUNDS:
        for name in (f"ui-{r['width']}.png", f"ui-{r['width']}-open.png", f"ui-list-{r['width']}.png", f"fail-{r['name']}.png"):
            (SCREENSHOTS / name).unlink(missing_ok=True)
    job = {
        "url": server.url,
        "chromium": browser,
        "screenshots": str(SCREENSHOTS),
        "timeoutMs": 90_000,
        "totalMs": 540_000,
        "rounds": [
            {
                **r,
                "claude": {"model": MODEL["claude-code"], "message": "List the files of the project.", "expect": "That is all."},
                "codex": {"message": "Which files did you see?", "expect": "Codex here:"},
            }
            for r in ROUNDS
        ],
    }
    report = run_browser(job, server, [r["session"] for r in ROUNDS], tmp_path, timeout=600)
    took = time.monotonic() - started

    assert report["chromium"], report
    assert len(report["rounds"]) == len(ROUNDS)
    for r, seen in zip(ROUNDS, report["rounds"]):
        width, session = r["width"], r["session"]
        where = f"[{r['name']}]"
        assert seen["pageErrors"] == [], (where, seen["pageErrors"])
        assert seen["errorAnswers"] == [] and seen["consoleErrors"] == [], (where, seen["errorAnswers"], seen["consoleErrors"])
        assert seen["failedRequests"] == [], (where, seen["failedRequests"])

        # The list: both sessions, the filter leaves this one, which opens.
        listed = seen["list"]
        assert listed["before"] == len(ROUNDS) and len(listed["shown"]) == 1 and r["title"] in listed["shown"][0], (where, listed)
        assert listed["scrollWidth"] <= width, (where, listed)
        ready = seen["ready"]
        assert ready["title"] == r["title"] and ready["empty"] and ready["status"] == "disconnected", (where, ready)
        assert ["claude-code", "Claude Code"] in ready["runtimes"] and ["codex", "Codex"] in ready["runtimes"], (where, ready)

        # Claude Code: busy then idle, the answer rendered as Markdown after streaming in.
        turn = seen["claude"]
        assert turn["picked"]["runtime"] == "claude-code" and turn["picked"]["model"] == MODEL["claude-code"], (where, turn["picked"])
        states = [s["state"] for s in turn["status"]]
        assert "busy" in states and states[-1] == "idle" and states.index("busy") < len(states) - 1, (where, states)
        assert turn["user"] == ["List the files of the project."], (where, turn["user"])
        answer = turn["answer"]
        assert answer is not None, (where, turn)
        assert {"tag": "h2", "text": "Files in the project"} in answer["headings"], (where, answer)
        assert answer["strong"] == ["two files"], (where, answer)
        assert answer["code"] == [{"lang": "sh", "text": "ls -1"}], (where, answer)
        assert answer["items"] == ["data.csv: a small table", "notes.txt: a note"], (where, answer)
        assert "ls" in answer["inlineCode"] and "That is all." in answer["text"], (where, answer)
        assert answer["by"] == f"Claude Code · {MODEL['claude-code']}", (where, answer)
        assert "streaming" not in answer["classes"], (where, answer)
        # The deltas: a provisional element whose text grew, before the stored block came.
        streamed = [s for s in turn["streaming"] if s["kind"] == "text" and s["text"]]
        final_at = min(f["t"] for f in turn["finals"] if "That is all." in f["text"])
        # (Compared without white space: a code block's last line break goes when its fence closes.)
        grown = ["".join(x["text"].split()) for x in streamed]
        assert len(grown) >= 3, (where, "no growing .streaming element was seen", turn["streaming"])
        assert all(a.startswith("Filesintheproject") and b.startswith(a) for a, b in zip(grown, grown[1:])) and grown[0] != grown[-1], (where, streamed)
        assert "".join(answer["text"].split()).startswith(grown[-1]) and streamed[-1]["t"] <= final_at, (where, streamed, final_at)

        # The tool call: one item holding its result; opened, the command and the listing show.
        tool = seen["tool"]
        (closed,) = tool["closed"]
        assert closed["kind"] == "tool_use" and closed["actor"] == "assistant" and not closed["lone"] and not closed["open"], (where, closed)
        assert closed["name"] == "Bash" and closed["summary"] == "ls" and closed["badge"] == "done", (where, closed)
        result = closed["result"]
        assert result and result["kind"] == "tool_result" and result["seq"] > closed["seq"] and not result["error"], (where, closed)
        (opened,) = tool["open"]
        assert opened["open"] and opened["inputVisible"] and '"command": "ls"' in opened["input"], (where, opened)
        assert opened["result"]["visible"] and "data.csv" in opened["result"]["text"] and "notes.txt" in opened["result"]["text"], (where, opened)
        assert tool["widths"] <= width, (where, tool["widths"])

        # Bookkeeping: in the DOM but hidden, shown by the toggle, hidden again.
        bk = seen["bookkeeping"]
        total = bk["before"]["total"]
        assert total > 0 and bk["before"]["visible"] == 0 and not bk["before"]["checked"], (where, bk)
        assert bk["shown"]["visible"] == total and bk["shown"]["checked"] and f"({total})" in bk["shown"]["label"], (where, bk)
        assert bk["hidden"]["visible"] == 0 and bk["widthShown"] <= width, (where, bk)

        # Codex: picked, a switch marker between the two runtimes' answers, Codex's answer.
        cx = seen["codex"]
        assert cx["picked"] == {"runtime": "codex", "model": ""}, (where, cx["picked"])
        states = [s["state"] for s in cx["status"]]
        assert "busy" in states and states[-1] == "idle", (where, states)
        assert [s["text"] for s in cx["switches"]] == [f"Claude Code · {MODEL['claude-code']}", f"switched to Codex · {CODEX_MODEL} here"], (where, cx["switches"])
        switch = cx["switches"][1]
        assert answer["seq"] < switch["seq"] <= cx["answer"]["seq"], (where, switch, cx["answer"])
        assert cx["answer"]["by"] == f"Codex · {CODEX_MODEL}" and cx["answer"]["strong"] == ["data.csv"], (where, cx["answer"])
        assert cx["user"] == ["List the files of the project.", "Which files did you see?"], (where, cx["user"])
        assert "Claude Code" in cx["facts"] and "Codex" in cx["facts"], (where, cx["facts"])

        # The layout at rest and with everything open.
        assert_layout(seen["layout"]["rest"], width)
        assert_layout(seen["layout"]["open"], width)
        assert "idle" in seen["layout"]["status"], (where, seen["layout"]["status"])

        # A reload: the same blocks from the history routes, the agent still there.
        blocks = server.ok("GET", f"/sessions/{session}/blocks")["blocks"]
        reload = seen["reload"]
        assert reload["blocks"] == [b["seq"] for b in blocks], (where, reload["blocks"])
        assert reload["switches"] == [s["text"] for s in cx["switches"]] and reload["runtime"] == "codex", (where, reload)
        assert "idle" in reload["status"] and reload["scrollWidth"] <= width, (where, reload)
        # What the page showed is what was stored.
        call = next(b for b in blocks if b["kind"] == "tool_use")
        assert call["seq"] == closed["seq"] and json.loads(call["content"])["command"] == "ls"
        assert next(b for b in blocks if b["kind"] == "tool_result")["seq"] == result["seq"]

        # Tokens and cost: a line after each turn, the session's in the header, as the usage route says.
        usage = server.ok("GET", f"/sessions/{session}/usage")
        second = next(b["seq"] for b in blocks if b["actor"] == "user" and b["content"] == "Which files did you see?")
        turns = [sum(r["total"] for r in usage["responses"] if (r["seq"] < second) == first) for first in (True, False)]
        assert all(t > 0 for t in turns), (where, usage)
        shown = cx["usage"]
        assert [t["text"].split(" tokens")[0] for t in shown["turns"]] == [f"turn: {t:,}" for t in turns], (where, shown, turns)
        assert shown["turns"][0]["prev"] is not None and shown["turns"][0]["prev"] < second, (where, shown)
        assert "no price" in shown["turns"][0]["text"] and "no price for claude-opus-5-5" in shown["turns"][0]["title"], (where, shown)
        assert shown["total"].startswith(f"{usage['totals']['total']:,} tokens"), (where, shown, usage["totals"])
        assert reload["usage"]["turns"] == shown["turns"] and reload["usage"]["total"] == shown["total"], (where, reload["usage"], shown)

        for name in (f"ui-{width}.png", f"ui-{width}-open.png", f"ui-list-{width}.png"):
            png = SCREENSHOTS / name
            assert str(png) in report["screenshots"] and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000, png

    # Each turn reached its runtime's mock once (two rounds, Claude Code's turn being two requests).
    assert len(claude.requests()) == 4 and len(codex.requests()) == 2, (len(claude.requests()), len(codex.requests()))
    # Codex went on from the conversation so far: Claude Code's answer was in its first request.
    assert "Files in the project" in json.dumps(codex.requests()[0])

    # Every runtime process the sessions had (from their start and switch events): a Claude Code
    # and a Codex each, tracked; Codex is still running, and stops when told.
    for r in ROUNDS:
        events = server.events(r["session"], since=0)
        events.wait_for("complete", 2)
        events.close()
        spawned = [e["data"]["pid"] for e in events.events if e["type"] in ("started", "switched", "resumed")]
        assert [e["data"]["runtime"] for e in events.events if e["type"] in ("started", "switched", "resumed")] == ["claude-code", "codex"]
        server.pids.update(spawned)
        status = track(server, r["session"])
        assert status["alive"] and status["provider"] == "codex" and status["pid"] == spawned[-1]
        assert server.ok("POST", f"/agent/kill?session={r['session']}") == {"status": "killed"}
        assert_gone(status["pid"])
        assert_gone(spawned[0])
    print(f"\nbrowser test: {took:.0f} s, Chromium {report['chromium']}; screenshots:\n  " + "\n  ".join(report["screenshots"]))


COMPACTED = FIXTURES / "claude-code" / "compact" / "e4e2453c-d980-4b7d-a578-4a8969921267.jsonl"


def test_compaction_markers_and_the_compact_button_in_chromium(rig: Any, serve: Any, tmp_path: Path) -> None:
    """A Claude Code transcript with a manual compaction (the fixture) imported before the server
    starts, an agent started on it: its page marks the compaction before the boundary block,
    collapsed, with the label and the summary under it (the summary block itself not drawn as a
    message); Compact runs Claude Code's own compaction and a second marker appears (after the first,
    at the new boundary); a turn the model refuses as too long, which Claude Code compacts by itself,
    brings a third; a reload shows them all."""
    browser = chromium()
    imported = sna_history.Store(tmp_path / "history.db").import_file(COMPACTED)
    session = imported.id
    (old,) = imported.compactions()
    claude = rig("claude-code", [
        text_reply("claude-code", "Going on from the import."), summary_reply("claude-code"),
        OVERFLOW["anthropic"], summary_reply("claude-code"), text_reply("claude-code", "Answered after compacting by itself."),
    ], name="claude")
    server = serve(claude)
    started = server.ok("POST", f"/agent/start?session={session}", {"provider": "claude-code", "model": MODEL["claude-code"], "cwd": str(claude.cwd)})
    # Started by a replay (the answer says so): Claude Code gets its own records whole, its compact
    # boundary among them, and itself goes on from there: its first request carries the summary, not
    # the first turn.
    assert started["status"] == "started" and started["via"] == "replay", started
    assert started["replay"] == {"from_seq": 0, "compaction_seq": None, "folded": None}, started
    track(server, session)
    assert server.ok("POST", f"/agent/send?session={session}&wait=1", {"message": "Go on."})["text"] == "Going on from the import."
    first = said(claude.requests()[0])
    assert "SUMMARY-MARKER: the user asked to read notes.txt" in first and "Read notes.txt and tell me what it says." not in first

    for stale in [*SCREENSHOTS.glob("ui-compaction-*.png"), *SCREENSHOTS.glob("fail-compaction.png")]:
        stale.unlink()
    job = {"url": server.url, "chromium": browser, "screenshots": str(SCREENSHOTS), "timeoutMs": 60_000, "totalMs": 240_000, "rounds": [],
           "compaction": {"session": session, "width": 1440, "height": 900, "expectMarkers": 1,
                          "overflow": {"message": "One more, over the window.", "expect": "Answered after compacting by itself."}}}
    report = run_browser(job, server, [session], tmp_path, timeout=300)
    seen = report["compaction"]
    assert seen["pageErrors"] == [] and seen["consoleErrors"] == [] and seen["errorAnswers"] == [] and seen["failedRequests"] == [], seen

    # The imported compaction: one marker, collapsed, before its boundary block (bookkeeping, hidden).
    (marker,) = seen["loaded"]["markers"]
    label = "compacted by Claude Code (manual, 15 tokens before)"
    assert marker["boundary"] == old.boundary_seq == 42 and marker["label"] == label and marker["ariaLabel"] == label and marker["role"] == "separator", marker
    assert marker["detail"] == f"the summary at seq {old.summary_seq} stands in for what came before; 1 earlier block kept", marker
    assert not marker["open"] and not marker["summaryShown"] and marker["visible"], marker
    assert "SUMMARY-MARKER: the user asked to read notes.txt (it says hello from notes)" in marker["summary"], marker
    assert marker["boundaryAfter"] and marker["orderRight"] and marker["next"] == old.boundary_seq and marker["prev"] == old.boundary_seq - 1, marker
    assert seen["loaded"]["scrollWidth"] <= 1440 and marker["right"] <= 1440
    # Claude Code's summary is a user block of its own: drawn in the marker only, not as a message of
    # the person's.
    assert seen["loaded"]["summaries"]["hidden"] == [{"seq": old.summary_seq, "shown": False}], seen["loaded"]["summaries"]
    assert not [t for t in seen["loaded"]["summaries"]["userShown"] if t.startswith("This session is being continued")], seen["loaded"]["summaries"]
    assert "Read notes.txt and tell me what it says." in seen["loaded"]["summaries"]["userShown"]
    assert seen["opened"]["open"]["open"] and seen["opened"]["open"]["summaryShown"], seen["opened"]
    assert not seen["opened"]["closed"]["open"] and not seen["opened"]["closed"]["summaryShown"], seen["opened"]

    # Compact: disabled while it ran, the compaction recorded, a second marker at its boundary.
    compacted = seen["compacted"]
    assert compacted["during"]["disabled"] and not compacted["after"]["disabled"] and "idle" in compacted["after"]["status"], compacted
    listed = server.ok("GET", f"/sessions/{session}/compactions")["compactions"]
    assert len(listed) == 3 and listed[0]["boundary_seq"] == old.boundary_seq, listed
    new = listed[1]
    assert new["runtime"] == "claude-code" and new["trigger"] == "manual" and new["boundary_seq"] > old.boundary_seq, new
    assert [m["boundary"] for m in compacted["markers"]] == [old.boundary_seq, new["boundary_seq"]]
    second = compacted["markers"][1]
    assert second["label"].startswith("compacted by Claude Code (manual") and "SUMMARY-MARKER-claude-code" in second["summary"], second
    assert not second["open"] and second["boundaryAfter"] and second["orderRight"], second
    assert "The conversation was compacted: compacted by Claude Code (manual" in compacted["notice"], compacted["notice"]
    assert compacted["scrollWidth"] <= 1440
    # Claude Code's summary request was the second model request, over the replayed history.
    assert "Going on from the import." in said(claude.requests()[1]) and "SUMMARY-MARKER: the user asked" in said(claude.requests()[1])
    summaries = compacted["summaries"]
    assert summaries["hidden"] == [{"seq": old.summary_seq, "shown": False}, {"seq": new["summary_seq"], "shown": False}], summaries
    assert not [t for t in summaries["userShown"] if t.startswith("This session is being continued")], summaries
    # A turn the model refused as too long: Claude Code compacted by itself and answered; the page
    # marked that compaction with the turn, without a reload.
    assert listed[2]["runtime"] == "claude-code" and listed[2]["trigger"] == "auto" and listed[2]["boundary_seq"] > new["boundary_seq"], listed
    auto = seen["overflow"]["markers"]
    assert [m["boundary"] for m in auto] == [c["boundary_seq"] for c in listed], auto
    assert auto[2]["label"].startswith("compacted by Claude Code (auto") and auto[2]["orderRight"] and not auto[2]["open"], auto[2]
    assert [h["seq"] for h in seen["overflow"]["summaries"]["hidden"]] == [c["summary_seq"] for c in listed], seen["overflow"]["summaries"]
    assert "One more, over the window." in seen["overflow"]["summaries"]["userShown"]
    # The requests: the turn, the summary, the refused one, Claude Code's own summary, the same turn again.
    requests = [said(r) for r in claude.requests()]
    assert len(requests) == 5 and "One more, over the window." in requests[2] and "One more, over the window." in requests[4], len(requests)
    assert [m["boundary"] for m in seen["reload"]["markers"]] == [c["boundary_seq"] for c in listed]
    assert all(not m["open"] for m in seen["reload"]["markers"])
    assert seen["reload"]["summaries"]["hidden"] == [{"seq": c["summary_seq"], "shown": False} for c in listed], seen["reload"]["summaries"]

    (png,) = seen["screenshots"]
    assert png == str(SCREENSHOTS / "ui-compaction-1440.png") and Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and Path(png).stat().st_size > 10_000
    status = track(server, session)
    assert status["alive"] and status["spawns"] == 1
    assert server.ok("POST", f"/agent/kill?session={session}") == {"status": "killed"}


def test_the_page_of_an_unknown_session_says_there_is_none_in_chromium(serve: Any, tmp_path: Path) -> None:
    """Issue 47: `/s/<an id that does not exist>` showed an empty session page marked "disconnected".
    It says there is no such session, and its link goes back to the list."""
    browser = chromium()
    server = serve()
    job = {"url": server.url, "chromium": browser, "screenshots": str(SCREENSHOTS), "timeoutMs": 30_000, "totalMs": 90_000, "rounds": [], "missing": "no-such-session"}
    seen = run_browser(job, server, [], tmp_path, timeout=120)["missing"]
    assert seen["status"] == 404 and seen["title"] == "No such session · sna" and seen["heading"] == "No such session", seen
    assert "no-such-session" in seen["text"] and not seen["statusLight"] and "disconnected" not in seen["text"], seen
    assert seen["after"] == "/", seen
