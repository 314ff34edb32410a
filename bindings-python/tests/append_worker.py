"""Appends N blocks to one session, one transaction each: `append_worker.py DB SESSION N TAG`."""

import sys

import sna_history


def main() -> int:
    db, session_id, n, tag = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    try:
        with sna_history.Store(db) as store:
            session = store.session(session_id)
            for i in range(n):
                session.append(actor="user", kind="text", content=f"{tag}-{i}")
    except sna_history.SnaError as e:
        print(f"append_worker.py: {e.code} {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
