"""Gemini CLI's files under a HOME: the project registry (`projects.json` and the `.project_root`
markers), and session files placed for `gemini --resume` or read back with the CLI's loader rules."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from .common import jsonl


def gemini_short_name(cwd: Path) -> str:
    """Gemini CLI's slug of a project root's basename (before any `-1`, `-2` for a clash)."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", Path(cwd).name.lower())).strip("-") or "project"


def gemini_project_hash(cwd: Path) -> str:
    """A session header's `projectHash`: sha256 of the absolute project root."""
    return hashlib.sha256(str(Path(cwd).resolve()).encode()).hexdigest()


def gemini_project_dir(home: Path, cwd: Path) -> Path:
    """`~/.gemini/tmp/<short>` of a project, registering the project as the CLI does when it is not yet
    (`projects.json` maps the root to its short name; `.project_root` markers in `tmp/<short>/` and
    `history/<short>/` prove the ownership)."""
    root = str(Path(cwd).resolve())
    gemini = home / ".gemini"
    gemini.mkdir(parents=True, exist_ok=True)
    registry = gemini / "projects.json"
    projects: dict[str, str] = {}
    if registry.exists():
        projects = json.loads(registry.read_text()).get("projects", {})
    short = projects.get(root)
    if short is None:
        base = gemini_short_name(Path(root))
        taken = {v for k, v in projects.items() if k != root}
        short, n = base, 0
        while short in taken or _owned_by_other(gemini, short, root):
            n += 1
            short = f"{base}-{n}"
        projects[root] = short
        registry.write_text(json.dumps({"projects": projects}, indent=2))
    for kind in ("tmp", "history"):
        folder = gemini / kind / short
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".project_root").write_text(root)
    return gemini / "tmp" / short


def _owned_by_other(gemini: Path, short: str, root: str) -> bool:
    marker = gemini / "tmp" / short / ".project_root"
    return marker.exists() and marker.read_text().strip() != root


def gemini_sessions(home: Path) -> list[Path]:
    """Every main session file the CLI wrote under HOME (`~/.gemini/tmp/<short>/chats/session-*`)."""
    return sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.json*"))


def place_gemini_session(home: Path, cwd: Path, session_id: str, lines: Sequence[dict[str, Any] | str]) -> Path:
    """Writes a session for `gemini --resume <session_id>` run in `cwd` (route B of
    shared/formats/gemini-cli.md; settings from `gemini_home`, whose retention off keeps the file):

    - the project registered (`projects.json`, `.project_root` markers) and its `tmp/<short>/chats/`;
    - the file `session-<YYYY-MM-DDTHH-MM>-<first 8 of session_id>.jsonl`, its minute the header's
      `startTime` but never the current one: a resume first creates `session-<now minute>-<id8>.jsonl`,
      which in the same minute would be this file and wipe its messages;
    - a header `{sessionId, projectHash (sha256 of the cwd), startTime, lastUpdated, kind:"main"}`
      first, unless `lines` starts with one (a record with `sessionId` and `projectHash`);
    - then `lines` as given (records, or already serialised lines).
    """
    now = datetime.now(timezone.utc)
    records = [json.loads(line) if isinstance(line, str) else line for line in lines]
    if not (records and "sessionId" in records[0] and "projectHash" in records[0]):
        stamps = [r["timestamp"] for r in records if isinstance(r.get("timestamp"), str)]
        start = stamps[0] if stamps else _iso(now - timedelta(minutes=5))
        header = {
            "sessionId": session_id,
            "projectHash": gemini_project_hash(cwd),
            "startTime": start,
            "lastUpdated": stamps[-1] if stamps else start,
            "kind": "main",
        }
        records.insert(0, header)
    try:
        started = datetime.fromisoformat(str(records[0].get("startTime")).replace("Z", "+00:00"))
    except ValueError:
        started = now
    if started.tzinfo is None:
        started = started.replace(tzinfo=timezone.utc)
    latest = now - timedelta(minutes=1)
    minute = min(started, latest).strftime("%Y-%m-%dT%H-%M")
    chats = gemini_project_dir(home, cwd) / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    path = chats / f"session-{minute}-{session_id[:8]}.jsonl"
    path.write_text(jsonl(records), encoding="utf-8")
    return path


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def load_gemini_session(path: Path) -> dict[str, Any]:
    """A Gemini CLI session file read with the CLI's loader rules (gemini-cli.md §3.1): headers and
    `$set` merge into the metadata (`$set.messages` replaces the list), a message id seen again replaces
    the earlier version in place, `$rewindTo` drops that message and all after it. Returns the
    metadata with `messages`."""
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if isinstance(record.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else 0
            messages = {k: messages[k] for k in ids[:cut]}
        elif isinstance(record.get("id"), str):
            messages[record["id"]] = record
        elif isinstance(record.get("$set"), dict):
            update = dict(record["$set"])
            if isinstance(update.get("messages"), list):
                messages = {m["id"]: m for m in update.pop("messages")}
            meta.update(update)
        elif isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
            header = dict(record)
            for m in header.pop("messages", None) or []:
                messages[m["id"]] = m
            meta.update(header)
    if not meta and path.suffix == ".json":
        return dict(json.loads(path.read_text()))
    return {**meta, "messages": list(messages.values())}
