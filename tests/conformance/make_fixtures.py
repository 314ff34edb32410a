"""Records the fixtures of a runtime under tests/fixtures/<runtime>/ from runs of its pinned CLI
against the scripted mocks (offline):

    python3 tests/conformance/make_fixtures.py qwen-code|copilot-cli [SCENARIO ...]

Each scenario gets a folder with what the CLI wrote (its session file, named as the CLI names it),
what it printed (`events.jsonl`), the model requests it sent (`requests.jsonl`, the mock's log) and
`manifest.json` (the command lines, the ids, where each file was). The private HOME becomes
`/home/dev` and the project `/home/dev/project` in every file, the CLI's project folder name too.
Nothing is edited beyond those paths: a fixture is what the CLI wrote."""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from helpers.common import make_project, stop  # noqa: E402
from helpers.mocks import start_mock  # noqa: E402
from helpers.runtimes import COPILOT_CACHE, COPILOT_MODEL, QWEN_MODEL, run_copilot, run_qwen  # noqa: E402

FIXTURES = HERE.parent / "fixtures"
HOME, CWD = "/home/dev", "/home/dev/project"
# An 8x8 PNG, all red.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000080000000808020000004b6d29dc0000001249444154789c63f8cfc0801561171db4120028ff3fc16eecdf610000000049454e44ae426082"
)
# Qwen Code compresses only a conversation whose last prompt was larger than its summary would be.
LARGE_USAGE = {"prompt_tokens": 60000, "completion_tokens": 50, "total_tokens": 60050}


def qwen_slug(path: Path | str) -> str:
    """Qwen Code's project folder name: the cwd with every character but letters, digits and `-`
    made a `-`."""
    return re.sub(r"[^A-Za-z0-9-]", "-", str(path))


# Each scenario: what it shows, the mock's script, and the runs (`prompt`, or `resume: True` to go on
# with the session of the first run).
QWEN_SCENARIOS: dict[str, dict[str, Any]] = {
    "basic": {
        "about": "One prompt, one plain text reply.",
        "script": {"replies": [[{"type": "text", "text": "Hello! Nice to meet you."}]]},
        "runs": [{"prompt": "Say hello in one short sentence."}],
    },
    "tools-thinking": {
        "about": "Reasoning (reasoning_content), a shell call and its result, then an answer with reasoning.",
        "script": {"replies": [
            [{"type": "reasoning", "text": "I will read the notes with cat."},
             {"type": "tool_call", "id": "call_qt1", "name": "run_shell_command", "arguments": {"command": "cat notes.txt", "description": "Show the notes"}}],
            [{"type": "reasoning", "text": "The file says hello from notes."}, {"type": "text", "text": "notes.txt says: hello from notes"}],
        ]},
        "runs": [{"prompt": "What does notes.txt say? Use the shell."}],
    },
    "tool-error": {
        "about": "A read_file call of a missing file fails; the model says so.",
        "script": {"replies": [
            [{"type": "tool_call", "id": "call_qe1", "name": "read_file", "arguments": {"file_path": CWD + "/missing.txt"}}],
            [{"type": "text", "text": "missing.txt does not exist."}],
        ]},
        "runs": [{"prompt": "Read missing.txt."}],
    },
    "image": {
        "about": "A prompt that attaches an image with @pixel.png; the model describes it.",
        "script": {"replies": [[{"type": "text", "text": "A small red square."}]]},
        "runs": [{"prompt": "Describe the image @pixel.png in five words."}],
        "files": {"pixel.png": PIXEL},
    },
    "resume": {
        "about": "A turn, then a second run resumed with --resume <id> that goes on in the same file.",
        "script": {"replies": [
            [{"type": "text", "text": "Noted: the codeword is PELICAN."}],
            [{"type": "text", "text": "The codeword was PELICAN."}],
        ]},
        "runs": [{"prompt": "Remember the codeword PELICAN."}, {"prompt": "What was the codeword?", "resume": True}],
    },
    "compact": {
        "about": "Two turns, /compress (its summary from the model), then a turn after it.",
        "script": {
            "replies": [
                [{"type": "text", "text": "There are two files: notes.txt and data.csv."}],
                [{"type": "text", "text": "I will remember PELICAN."}],
                # The compression's summary request.
                [{"type": "text", "text": "<state_snapshot>SUMMARY-MARKER-qwen-code: the user listed the files and asked to remember PELICAN.</state_snapshot>"}],
                [{"type": "text", "text": "You asked me to remember PELICAN."}],
            ],
            "usage": LARGE_USAGE,
        },
        "runs": [
            {"prompt": "Which files are in this folder? Answer from what you know."},
            {"prompt": "Remember the word PELICAN.", "resume": True},
            {"prompt": "/compress", "resume": True},
            {"prompt": "What did I ask you to remember?", "resume": True},
        ],
    },
}


# Copilot CLI's scenarios (bring-your-own-key Anthropic, the mock_anthropic.py replies).
COPILOT_SCENARIOS: dict[str, dict[str, Any]] = {
    "basic": {
        "about": "One prompt, one plain text reply.",
        "script": {"replies": [[{"type": "text", "text": "Hello! Nice to meet you."}]]},
        "runs": [{"prompt": "Say hello in one short sentence."}],
    },
    "tools-thinking": {
        "about": "Signed thinking, a bash call and its result, then an answer.",
        "script": {"replies": [
            [{"type": "thinking", "thinking": "I will read the notes with cat.", "signature": "c2lnLWNvcGlsb3QtMQ=="},
             {"type": "tool_use", "id": "toolu_cpt1", "name": "bash", "input": {"command": "cat notes.txt", "description": "Show the notes"}}],
            [{"type": "text", "text": "notes.txt says: hello from notes"}],
        ]},
        "runs": [{"prompt": "What does notes.txt say? Use the shell."}],
    },
    "tool-error": {
        "about": "A view call of a missing file fails; the model says so.",
        "script": {"replies": [
            [{"type": "tool_use", "id": "toolu_cpe1", "name": "view", "input": {"path": CWD + "/missing.txt"}}],
            [{"type": "text", "text": "missing.txt does not exist."}],
        ]},
        "runs": [{"prompt": "Read missing.txt."}],
    },
    "resume": {
        "about": "A turn, then a second run resumed with --resume <id> that goes on in the same log.",
        "script": {"replies": [
            [{"type": "text", "text": "Noted: the codeword is PELICAN."}],
            [{"type": "text", "text": "The codeword was PELICAN."}],
        ]},
        "runs": [{"prompt": "Remember the codeword PELICAN."}, {"prompt": "What was the codeword?", "resume": True}],
    },
    "compact": {
        "about": "Two turns, /compact (its summary from the model), then a turn after it.",
        "script": {"replies": [
            [{"type": "text", "text": "There are two files: notes.txt and data.csv."}],
            [{"type": "text", "text": "I will remember PELICAN."}],
            [{"type": "text", "text": "SUMMARY-MARKER-copilot-cli: the user listed the files and asked to remember PELICAN."}],
            [{"type": "text", "text": "You asked me to remember PELICAN."}],
        ]},
        "runs": [
            {"prompt": "Which files are in this folder? Answer from what you know."},
            {"prompt": "Remember the word PELICAN.", "resume": True},
            {"prompt": "/compact", "resume": True},
            {"prompt": "What did I ask you to remember?", "resume": True},
        ],
    },
}


def record_copilot(name: str, scenario: dict[str, Any]) -> None:
    out_dir = FIXTURES / "copilot-cli" / name
    with tempfile.TemporaryDirectory(prefix="sna-fixture-") as tmp_name:
        tmp = Path(tmp_name)
        script = scenario["script"]
        mock, proc = start_mock(tmp / "mock", script, "mock_anthropic.py")
        home, cwd = tmp / "home", make_project(tmp)
        printed: list[str] = []
        runs: list[dict[str, Any]] = []
        session_id = None
        try:
            for run in scenario["runs"]:
                args = (["--resume", session_id] if run.get("resume") and session_id else []) + ["-p", run["prompt"]]
                done = run_copilot(args, home=home, cwd=cwd, mock=mock)
                lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
                printed += lines
                session_id = session_id or json.loads(lines[-1])["sessionId"]
                runs.append({"argv": ["copilot", *args, "--allow-all-tools", "--output-format", "json", "--disable-client-telemetry"], "exit_code": done.returncode})
            requests = mock.log.read_text()
        finally:
            stop(proc)
        folder = home / ".copilot" / "session-state" / str(session_id)
        shutil.rmtree(out_dir, ignore_errors=True)
        out_dir.mkdir(parents=True)
        (out_dir / f"{session_id}.events.jsonl").write_text(scrub((folder / "events.jsonl").read_text(), home, cwd))
        (out_dir / "workspace.yaml").write_text(scrub((folder / "workspace.yaml").read_text(), home, cwd))
        (out_dir / "events.jsonl").write_text(scrub("\n".join(printed) + "\n", home, cwd))
        (out_dir / "requests.jsonl").write_text(scrub(requests, home, cwd))
        manifest = {
            "runtime": "copilot-cli",
            "runtime_version": "1.0.102",
            "scenario": name,
            "about": scenario["about"],
            "session_id": session_id,
            "model": COPILOT_MODEL,
            "home": HOME,
            "cwd": CWD,
            "env": {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:PORT", "COPILOT_PROVIDER_TYPE": "anthropic",
                    "COPILOT_PROVIDER_API_KEY": "dummy", "COPILOT_MODEL": COPILOT_MODEL},
            "script": script,
            "runs": runs,
            "files": {f"{session_id}.events.jsonl": f"~/.copilot/session-state/{session_id}/events.jsonl",
                      "workspace.yaml": f"~/.copilot/session-state/{session_id}/workspace.yaml"},
        }
        (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        print(f"{out_dir}: {len((folder / 'events.jsonl').read_text().splitlines())} lines")


def scrub(text: str, home: Path, cwd: Path) -> str:
    for real, fake in ((qwen_slug(cwd), qwen_slug(CWD)), (str(cwd), CWD), (str(home), HOME), (str(COPILOT_CACHE), HOME + "/.cache")):
        text = text.replace(real, fake)
    return text


def record_qwen(name: str, scenario: dict[str, Any]) -> None:
    out_dir = FIXTURES / "qwen-code" / name
    with tempfile.TemporaryDirectory(prefix="sna-fixture-") as tmp_name:
        tmp = Path(tmp_name)
        script = {"side_text": "Mock title", **scenario["script"]}
        mock, proc = start_mock(tmp / "mock", script, "mock_openai_chat.py")
        home, cwd = tmp / "home", make_project(tmp)
        for file, data in scenario.get("files", {}).items():
            (cwd / file).write_bytes(data)
        printed: list[str] = []
        runs: list[dict[str, Any]] = []
        session_id = None
        try:
            for run in scenario["runs"]:
                args = [run["prompt"]] + (["--resume", session_id] if run.get("resume") and session_id else [])
                done = run_qwen(args, home=home, cwd=cwd, mock=mock)
                lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
                printed += lines
                session_id = session_id or json.loads(lines[-1])["session_id"]
                runs.append({"argv": ["qwen", *args, "--auth-type", "openai", "--approval-mode", "yolo", "-o", "stream-json"], "exit_code": done.returncode})
            requests = mock.log.read_text()
        finally:
            stop(proc)
        chats = home / ".qwen" / "projects" / qwen_slug(cwd) / "chats" / f"{session_id}.jsonl"
        shutil.rmtree(out_dir, ignore_errors=True)
        out_dir.mkdir(parents=True)
        (out_dir / chats.name).write_text(scrub(chats.read_text(), home, cwd))
        (out_dir / "events.jsonl").write_text(scrub("\n".join(printed) + "\n", home, cwd))
        (out_dir / "requests.jsonl").write_text(scrub(requests, home, cwd))
        manifest = {
            "runtime": "qwen-code",
            "runtime_version": "0.24.4",
            "scenario": name,
            "about": scenario["about"],
            "session_id": session_id,
            "model": QWEN_MODEL,
            "home": HOME,
            "cwd": CWD,
            "env": {"OPENAI_BASE_URL": "http://127.0.0.1:PORT/v1", "OPENAI_API_KEY": "dummy", "OPENAI_MODEL": QWEN_MODEL},
            "script": script,
            "runs": runs,
            "files": {chats.name: f"~/.qwen/projects/{qwen_slug(CWD)}/chats/{chats.name}"},
        }
        (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        print(f"{out_dir}: {len(chats.read_text().splitlines())} lines")


def main() -> int:
    runtime, names = sys.argv[1], sys.argv[2:]
    recorders = {"qwen-code": (QWEN_SCENARIOS, record_qwen), "copilot-cli": (COPILOT_SCENARIOS, record_copilot)}
    if runtime not in recorders:
        print(f"no scenarios for {runtime} (there are: {', '.join(recorders)})", file=sys.stderr)
        return 2
    scenarios, record = recorders[runtime]
    for name in names or list(scenarios):
        record(name, scenarios[name])
    return 0


if __name__ == "__main__":
    sys.exit(main())
