"""`sna usage` against ccusage (npm `ccusage`, pinned in package.json; tests/usage/CCUSAGE.md has
what it counts): the same Claude Code projects tree and Codex sessions tree, with varied usage,
cache tokens, request ids, repeated records and responses either side of midnight, give the same
per-day and per-model token totals in several time zones, and the same cost where both price the
model. Both are also checked against the trees' own ground truth (every distinct response once).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from helpers.common import FIXTURES, HERE, ROOT, cargo_executable

sys.path.insert(0, str(ROOT / "tests" / "usage"))
import trees  # noqa: E402

CCUSAGE = HERE / "node_modules" / "@ccusage" / "ccusage-linux-x64" / "bin" / "ccusage"
ZONES = ["UTC", "America/New_York", "Asia/Tokyo"]
COUNTS = ("input", "output", "cache_read", "cache_write", "total")


def ccusage(home: Path, *args: str) -> dict:
    if not CCUSAGE.exists():
        raise RuntimeError(f"{CCUSAGE} is missing: run `npm install` in {HERE} (./scripts/test.sh does)")
    # npm unpacks the platform binary without its execute bit (ccusage's launcher sets it).
    CCUSAGE.chmod(CCUSAGE.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "CODEX_HOME": str(home / ".codex")}
    done = subprocess.run([str(CCUSAGE), *args, "--json", "--offline"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def sna_usage(db: Path, home: Path, *args: str) -> dict:
    sna = cargo_executable("sna-cli", "bin", "sna")
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    done = subprocess.run([str(sna), "--db", str(db), "usage", *args, "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def truth(responses: list[trees.Response], zone: str) -> dict[str, dict[str, dict[str, int]]]:
    """Day → model → counts, from the responses the tree was made of."""
    out: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(lambda: dict.fromkeys(COUNTS, 0)))
    for r in responses:
        day = r.at.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d")
        for key in COUNTS:
            out[day][r.model][key] += getattr(r, key)
    return {day: dict(models) for day, models in out.items()}


def ours(report: dict) -> dict[str, dict[str, dict[str, int]]]:
    return {row["key"]: {m["model"]: {k: m[k] for k in COUNTS} for m in row["models"]} for row in report["rows"]}


def day_totals(by_day: dict[str, dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    return {day: {k: sum(m[k] for m in models.values()) for k in COUNTS} for day, models in by_day.items()}


@dataclass
class Home:
    path: Path
    claude: trees.Tree
    codex: trees.Tree


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Home:
    home = tmp_path_factory.mktemp("ccusage-home")
    return Home(home, trees.claude_tree(home), trees.codex_tree(home))


@pytest.mark.parametrize("zone", ZONES)
def test_claude_code_days_and_models_equal_ccusage(made: Home, tmp_path: Path, zone: str) -> None:
    home = made.path
    theirs = ccusage(home, "claude", "daily", "-z", zone)
    report = sna_usage(tmp_path / "s.db", home, str(home / ".claude" / "projects"), "--runtime", "claude-code", "--tz", zone)
    expected = truth(made.claude.responses, zone)
    assert ours(report) == expected
    # Midnight splits the days: the tree spans more days in some zones than in others.
    assert len(expected) >= 4

    theirs_days = {
        d["date"]: {
            b["modelName"]: {"input": b["inputTokens"], "output": b["outputTokens"], "cache_read": b["cacheReadTokens"],
                             "cache_write": b["cacheCreationTokens"],
                             "total": b["inputTokens"] + b["outputTokens"] + b["cacheReadTokens"] + b["cacheCreationTokens"]}
            for b in d["modelBreakdowns"]
        }
        for d in theirs["daily"]
    }
    assert ours(report) == theirs_days
    for d in theirs["daily"]:
        row = next(r for r in report["rows"] if r["key"] == d["date"])
        assert (row["input"], row["output"], row["cache_read"], row["cache_write"], row["total"]) == (
            d["inputTokens"], d["outputTokens"], d["cacheReadTokens"], d["cacheCreationTokens"], d["totalTokens"])
        for b in d["modelBreakdowns"]:
            mine = next(m for m in row["models"] if m["model"] == b["modelName"])
            if b.get("missingPricing"):
                assert mine["cost_usd"] is None
            else:
                assert mine["cost_usd"] == pytest.approx(b["cost"], rel=1e-9, abs=1e-9)
    t = theirs["totals"]
    assert (report["totals"]["input"], report["totals"]["output"], report["totals"]["total"]) == (t["inputTokens"], t["outputTokens"], t["totalTokens"])
    assert report["unpriced_models"] == t["unpricedModels"] == ["claude-foo-9"]
    assert report["totals"]["cost_usd"] == pytest.approx(t["totalCost"], rel=1e-9)


@pytest.mark.parametrize("zone", ZONES)
def test_codex_days_and_models_equal_ccusage(made: Home, tmp_path: Path, zone: str) -> None:
    home = made.path
    theirs = ccusage(home, "codex", "daily", "-z", zone)
    report = sna_usage(tmp_path / "s.db", home, str(home / ".codex" / "sessions"), "--runtime", "codex", "--tz", zone)
    expected = truth(made.codex.responses, zone)
    assert ours(report) == expected
    assert len(expected) >= 3

    theirs_days = {
        d["date"]: {
            name: {"input": m["inputTokens"], "output": m["outputTokens"], "cache_read": m["cacheReadTokens"],
                   "cache_write": m["cacheCreationTokens"], "total": m["totalTokens"]}
            for name, m in d["models"].items()
        }
        for d in theirs["daily"]
    }
    assert ours(report) == theirs_days
    for d in theirs["daily"]:
        row = next(r for r in report["rows"] if r["key"] == d["date"])
        assert (row["input"], row["output"], row["cache_read"], row["reasoning"], row["total"]) == (
            d["inputTokens"], d["outputTokens"], d["cacheReadTokens"], d["reasoningOutputTokens"], d["totalTokens"])
        assert row["cost_usd"] == pytest.approx(d["costUSD"], rel=1e-9)
    assert not any(m.get("isFallback") for d in theirs["daily"] for m in d["models"].values())


def test_claude_code_2_1_request_refs_count_once(made: Home, tmp_path: Path) -> None:
    """Claude Code 2.1 names the request `requestRef` and stamps each content record of a response
    apart. Each response counts once here; ccusage 20.0.24 reads only `requestId`, so it counts such
    a response once per content record, which is why the comparison above uses `requestId` trees."""
    newer = tmp_path / "home"
    tree = trees.claude_tree(newer, seed=5, request_field="requestRef")
    report = sna_usage(tmp_path / "s.db", newer, str(newer / ".claude" / "projects"), "--tz", "UTC")
    assert day_totals(ours(report)) == day_totals(truth(tree.responses, "UTC"))
    theirs = ccusage(newer, "claude", "daily", "-z", "UTC")
    assert theirs["totals"]["outputTokens"] > report["totals"]["output"]

    # The same in a transcript Claude Code 2.1.328 wrote (tests/fixtures): one response per request
    # the mock model server received, whatever the number of its content records.
    real = tmp_path / "real"
    project = real / ".claude" / "projects" / "-home-dev-project"
    project.mkdir(parents=True)
    fixture = FIXTURES / "claude-code" / "tools-thinking"
    (transcript,) = [p for p in fixture.glob("*-*-*-*-*.jsonl")]
    (project / transcript.name).write_text(transcript.read_text())
    requests = len(fixture.joinpath("requests.jsonl").read_text().splitlines())
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    with_usage = [r for r in records if r.get("type") == "assistant"]
    assert len(with_usage) > requests == 3, "each response is written as several records"
    report = sna_usage(tmp_path / "real.db", real, str(real / ".claude" / "projects"), "--tz", "UTC")
    assert report["totals"]["responses"] == requests
    largest: dict[str, int] = {}
    for r in with_usage:
        largest[r["message"]["id"]] = max(largest.get(r["message"]["id"], 0), r["message"]["usage"]["output_tokens"])
    assert report["totals"]["output"] == sum(largest.values())


def test_a_second_run_counts_what_a_file_gained(made: Home, tmp_path: Path) -> None:
    """`sna usage PATH` imports what a file gained and counts it; an unchanged tree gives the same."""
    home, copy = made.path, tmp_path / "claude"
    subprocess.run(["cp", "-r", str(home / ".claude"), str(copy)], check=True)
    db, projects = tmp_path / "s.db", str(copy / "projects")
    first = sna_usage(db, home, projects, "--by", "month", "--tz", "UTC")
    assert sna_usage(db, home, projects, "--by", "month", "--tz", "UTC") == first
    session = sorted((copy / "projects").glob("*/*.jsonl"))[-1]
    record = json.loads(session.read_text().splitlines()[-1])
    record["message"]["id"], record["requestId"], record["uuid"] = "msg_later", "req_later", "later"
    record["message"]["usage"] = {"input_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 7, "output_tokens": 6}
    with session.open("a") as f:
        f.write(json.dumps(record, separators=(",", ":")) + "\n")
    after = sna_usage(db, home, projects, "--by", "month", "--tz", "UTC")
    gained = {k: after["totals"][k] - first["totals"][k] for k in ("input", "output", "cache_read", "responses")}
    assert gained == {"input": 5, "output": 6, "cache_read": 7, "responses": 1}
