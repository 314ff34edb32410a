"""Appends N blocks to one session, one transaction each: `append_worker.py DB SESSION N TAG`.

SESSION `PREFIX*K` spreads the blocks over sessions PREFIX0 … PREFIX{K-1}, block i to session
(i + a per-tag offset) mod K. DB is a file or a postgres:// URL."""

import sys

import sna_history


def main() -> int:
    db, session_id, n, tag = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    try:
        with sna_history.Store(db) as store:
            prefix, _, spread = session_id.partition("*")
            sessions = [store.session(f"{prefix}{k}") for k in range(int(spread))] if spread else [store.session(prefix)]
            offset = sum(ord(c) for c in tag)
            for i in range(n):
                sessions[(i + offset) % len(sessions)].append(actor="user", kind="text", content=f"{tag}-{i}")
    except sna_history.SnaError as e:
        print(f"append_worker.py: {e.code} {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
