"""A stand-in for `claude -p --input-format stream-json --output-format stream-json`, for load tests
of `sna serve` where the runtime is not what is measured: each user line on stdin is answered at once
with `--deltas N` text deltas ("0 ", "1 ", …), the whole assistant message and a `result`. It takes
(and ignores) Claude Code's other flags; it writes no transcript. `helpers.serve.fake_claude` makes
an executable of it."""

from __future__ import annotations

import json
import sys
import uuid


def main() -> None:
    args = sys.argv[1:]
    deltas = int(args[args.index("--deltas") + 1]) if "--deltas" in args else 50
    session = str(uuid.uuid4())
    out = sys.stdout

    def emit(event: dict) -> None:
        out.write(json.dumps(event) + "\n")

    emit({"type": "system", "subtype": "init", "session_id": session, "model": "fake-model", "tools": [], "cwd": ""})
    out.flush()
    for turn, line in enumerate(sys.stdin):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") != "user":
            continue
        emit({**event, "session_id": session, "uuid": str(uuid.uuid4())})
        message_id = f"msg_fake_{turn}"
        for i in range(deltas):
            emit({"type": "stream_event", "session_id": session, "event": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"{i} "}}})
        text = "".join(f"{i} " for i in range(deltas))
        usage = {"input_tokens": 1, "output_tokens": deltas}
        message = {"id": message_id, "type": "message", "role": "assistant", "model": "fake-model", "content": [{"type": "text", "text": text}], "usage": usage}
        emit({"type": "assistant", "message": message, "session_id": session, "uuid": str(uuid.uuid4())})
        emit({"type": "result", "subtype": "success", "is_error": False, "result": text, "session_id": session, "usage": usage})
        out.flush()


if __name__ == "__main__":
    main()
