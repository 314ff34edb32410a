"""Claude Code projects trees and Codex sessions trees with varied token usage, for the ccusage
cross-check (tests/conformance/test_ccusage.py) and the `sna usage` benchmark
(scripts/bench_usage.py).

Records are shaped as the real CLIs write them (compact JSON; see tests/fixtures): Claude Code
writes one line per content item of a response, each repeating the response's usage (the last
line has the final output count); Codex writes `token_count` events with running totals and the
last response's counts. Each tree also returns its ground truth: every distinct model response
once, with its day in UTC, so that a test can check counts without trusting either tool.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

CLAUDE_MODELS = ["claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001"]
CODEX_MODELS = ["gpt-5", "gpt-5-codex", "gpt-5.1-codex-max"]


@dataclass
class Response:
    runtime: str
    model: str
    at: datetime
    input: int
    output: int
    cache_read: int
    cache_write: int
    reasoning: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write


@dataclass
class Tree:
    root: Path
    responses: list[Response] = field(default_factory=list)


def compact(record: dict) -> str:
    return json.dumps(record, separators=(",", ":"))


def stamp(at: datetime) -> str:
    return at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def times(rng: random.Random, start: datetime, count: int) -> list[datetime]:
    """`count` times from `start` on, some of them a few seconds either side of midnight UTC."""
    out = []
    at = start
    for i in range(count):
        if i % 7 == 3:
            # Just before a midnight, and the next one just after.
            midnight = (at + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
            at = midnight - timedelta(seconds=rng.randint(1, 20), milliseconds=rng.randint(0, 999))
        elif i % 7 == 4:
            at = at.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1, seconds=rng.randint(1, 20))
        else:
            at = at + timedelta(minutes=rng.randint(1, 400), milliseconds=rng.randint(0, 999))
        out.append(at)
    return out


def claude_tree(root: Path, *, seed: int = 1, projects: int = 3, sessions: int = 3, responses: int = 12, request_field: str = "requestId") -> Tree:
    """`~/.claude/projects` under `root`: `projects` project directories of `sessions` sessions of
    `responses` responses each, plus a resumed session that copies the first half of another and
    goes on. `request_field` is `requestId` (what ccusage reads) or `requestRef` (Claude Code 2.1)."""
    rng = random.Random(seed)
    tree = Tree(root)
    base = root / ".claude" / "projects"
    start = datetime(2026, 11, 27, 20, 0, tzinfo=timezone.utc)
    copied: list[str] = []
    for p in range(projects):
        cwd = f"/home/dev/project-{p}"
        directory = base / cwd.replace("/", "-")
        directory.mkdir(parents=True, exist_ok=True)
        for s in range(sessions):
            session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            lines: list[str] = []
            parent = None
            for r, at in enumerate(times(rng, start + timedelta(hours=rng.randint(0, 30)), responses)):
                model = CLAUDE_MODELS[(p + s + r) % len(CLAUDE_MODELS)] if (p, s, r) != (0, 0, 5) else "claude-foo-9"
                user = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session,
                        "version": "2.0.55", "gitBranch": "", "type": "user", "message": {"role": "user", "content": f"question {r}"},
                        "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "timestamp": stamp(at - timedelta(seconds=3))}
                lines.append(compact(user))
                parent = user["uuid"]
                inp, out = rng.randint(1, 4000), rng.randint(1, 3000)
                cache_read = rng.choice([0, rng.randint(1000, 90000)])
                cache_write = rng.choice([0, 0, rng.randint(100, 20000)])
                message_id = f"msg_{rng.getrandbits(64):016x}"
                request = f"req_{rng.getrandbits(64):016x}"
                items = [{"type": "thinking", "thinking": "hmm", "signature": "sig"}, {"type": "text", "text": f"answer {r}"}][: rng.randint(1, 2)]
                if r % 4 == 1:
                    items.append({"type": "tool_use", "id": f"toolu_{p}{s}{r}", "name": "Bash", "input": {"command": "ls"}})
                for i, item in enumerate(items):
                    last = i == len(items) - 1
                    usage = {"input_tokens": inp, "cache_read_input_tokens": cache_read, "output_tokens": out if last else max(1, out // 3),
                             "service_tier": "standard"}
                    if r % 5 == 2:
                        # The split cache writes only (newer transcripts keep both).
                        usage["cache_creation"] = {"ephemeral_5m_input_tokens": cache_write, "ephemeral_1h_input_tokens": 0}
                    else:
                        usage["cache_creation_input_tokens"] = cache_write
                    record = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session,
                              "version": "2.0.55", "gitBranch": "",
                              "message": {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": [item],
                                          "stop_reason": None, "stop_sequence": None, "usage": usage},
                              request_field: request, "type": "assistant", "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                              "timestamp": stamp(at if request_field == "requestId" else at + timedelta(milliseconds=3 * i))}
                    lines.append(compact(record))
                    parent = record["uuid"]
                tree.responses.append(Response("claude-code", model, at, inp, out, cache_read, cache_write))
            (directory / f"{session}.jsonl").write_text("\n".join(lines) + "\n")
            if not copied:
                copied = lines[: len(lines) // 2]
                resumed_dir = directory
    # A resumed session: the first half of the first one copied (a session id of its own), then more.
    session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    lines = []
    for line in copied:
        record = json.loads(line)
        record["sessionId"] = session
        lines.append(compact(record))
    at = tree.responses[responses - 1].at + timedelta(minutes=5)
    inp, out = 1234, 567
    record = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/dev/project-0", "sessionId": session,
              "version": "2.0.55", "message": {"id": "msg_resumed", "type": "message", "role": "assistant", "model": CLAUDE_MODELS[0],
                                               "content": [{"type": "text", "text": "more"}],
                                               "usage": {"input_tokens": inp, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": out}},
              request_field: "req_resumed", "type": "assistant", "uuid": str(uuid.uuid4()), "timestamp": stamp(at)}
    lines.append(compact(record))
    (resumed_dir / f"{session}.jsonl").write_text("\n".join(lines) + "\n")
    tree.responses.append(Response("claude-code", CLAUDE_MODELS[0], at, inp, out, 0, 0))
    return tree


def codex_tree(root: Path, *, seed: int = 2, sessions: int = 4, turns: int = 10) -> Tree:
    """`~/.codex/sessions` under `root`: rollouts whose `token_count` events carry running totals
    and the last response's counts, with repeated events (the total unchanged), an event with the
    total only, varied cached input and reasoning, and a model switch mid-session."""
    rng = random.Random(seed)
    tree = Tree(root)
    start = datetime(2026, 11, 28, 21, 0, tzinfo=timezone.utc)
    for s in range(sessions):
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        when = start + timedelta(hours=7 * s)
        directory = root / ".codex" / "sessions" / f"{when:%Y}" / f"{when:%m}" / f"{when:%d}"
        directory.mkdir(parents=True, exist_ok=True)
        cwd = f"/home/dev/project-{s % 2}"
        lines = [compact({"timestamp": stamp(when), "type": "session_meta", "payload": {
            "id": session, "timestamp": stamp(when), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.169.0",
            "source": "cli", "model_provider": "openai"}})]
        total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0, "total_tokens": 0}
        model = CODEX_MODELS[s % len(CODEX_MODELS)]
        for t, at in enumerate(times(rng, when, turns)):
            if t == turns // 2:
                model = CODEX_MODELS[(s + 1) % len(CODEX_MODELS)]
            turn_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            lines.append(compact({"timestamp": stamp(at - timedelta(seconds=2)), "type": "turn_context", "payload": {
                "turn_id": turn_id, "cwd": cwd, "approval_policy": "never", "sandbox_policy": {"mode": "read-only"}, "model": model, "summary": "auto"}}))
            lines.append(compact({"timestamp": stamp(at - timedelta(seconds=2)), "type": "response_item", "payload": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": f"task {t}"}]}}))
            lines.append(compact({"timestamp": stamp(at - timedelta(seconds=1)), "type": "response_item", "payload": {
                "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"done {t}"}]}}))
            inp = rng.randint(2000, 60000)
            cached = rng.choice([0, rng.randint(0, inp)])
            reasoning = rng.choice([0, rng.randint(1, 800)])
            out = reasoning + rng.randint(1, 2000)
            last = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out, "reasoning_output_tokens": reasoning, "total_tokens": inp + out}
            for key in total:
                total[key] += last[key]
            info = {"total_token_usage": dict(total), "model_context_window": 272000}
            if t % 6 != 5:
                info["last_token_usage"] = last
            lines.append(compact({"timestamp": stamp(at), "type": "event_msg", "payload": {"type": "token_count", "info": info, "rate_limits": None}}))
            if t % 3 == 1:
                # The same total again, a moment later: no new response.
                lines.append(compact({"timestamp": stamp(at + timedelta(milliseconds=40)), "type": "event_msg", "payload": {
                    "type": "token_count", "info": {"total_token_usage": dict(total), "last_token_usage": last, "model_context_window": 272000}, "rate_limits": None}}))
            tree.responses.append(Response("codex", model, at, inp - cached, out, cached, 0, reasoning))
        (directory / f"rollout-{when:%Y-%m-%dT%H-%M-%S}-{session}.jsonl").write_text("\n".join(lines) + "\n")
    return tree
