"""The chaos campaign imports the conformance suite's helpers (tests/conformance/helpers)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for path in (HERE, HERE.parent / "conformance"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
