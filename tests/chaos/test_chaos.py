"""The host chaos campaign as a test: CHAOS_STEPS steps (default 200) from CHAOS_SEED (default 47),
on CHAOS_RUNTIMES (default Claude Code and Codex, comma-separated). A failure names the seed and the
step; `scripts/chaos.sh STEPS SEED` runs the same sequence. A failing run's database and HOME (the
runtimes' own files) are kept under `target/chaos-failure-<seed>/`, since a long run is slow to
repeat."""

from __future__ import annotations

import os
import shutil
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
    except BaseException:
        campaign.close()
        keep = Path(__file__).resolve().parents[2] / "target" / f"chaos-failure-{seed}"
        shutil.rmtree(keep, ignore_errors=True)
        keep.mkdir(parents=True)
        for name in ("history.db", "history.db-wal", "history.db-shm"):
            if (tmp_path / name).exists():
                shutil.copy2(tmp_path / name, keep / name)
        # The runtimes' sockets cannot be copied.
        shutil.copytree(tmp_path / "home", keep / "home", symlinks=True, ignore=lambda d, names: [n for n in names if n.endswith(".sock")], dirs_exist_ok=True)
        (keep / "steps.txt").write_text("\n".join(campaign.log) + "\n")
        print(f"the failing run's database, HOME and steps are kept in {keep}")
        raise
    finally:
        campaign.close()
    # Nothing the host started outlives it.
    campaign.check_gone()
    print(f"chaos: seed {seed}, {steps} steps on {runtimes} in {time.monotonic() - started:.0f} s: {counts}; "
          f"the runtimes' own files checked: {campaign.checked_files}")
    assert sum(counts.values()) == steps
