"""The host chaos campaign as a test: CHAOS_STEPS steps (default 200) from CHAOS_SEED (default 47),
on CHAOS_RUNTIMES (default Claude Code and Codex, comma-separated). A failure names the seed and the
step; `scripts/chaos.sh STEPS SEED` runs the same sequence."""

from __future__ import annotations

import os
import time
from pathlib import Path

from campaign import Campaign


def test_chaos(tmp_path: Path) -> None:
    steps = int(os.environ.get("CHAOS_STEPS", "200"))
    seed = int(os.environ.get("CHAOS_SEED", "47"))
    runtimes = os.environ.get("CHAOS_RUNTIMES", "claude-code,codex").split(",")
    campaign = Campaign(tmp_path, seed, runtimes)
    started = time.monotonic()
    try:
        counts = campaign.run(steps)
    finally:
        campaign.close()
    # Nothing the host started outlives it.
    campaign.check_gone()
    print(f"chaos: seed {seed}, {steps} steps on {runtimes} in {time.monotonic() - started:.0f} s: {counts}; "
          f"the runtimes' own files checked: {campaign.checked_files}")
    assert sum(counts.values()) == steps
