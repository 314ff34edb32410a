"""Parity: the Python binding exposes core's API list (tests/api/surface.json) in snake_case."""

from __future__ import annotations

import json

import sna_history
from conftest import ROOT

SURFACE = json.loads((ROOT / "tests" / "api" / "surface.json").read_text())


def test_every_core_call_is_in_python() -> None:
    missing = [f"Store.{n}" for n in SURFACE["Store"] if not hasattr(sna_history.Store, n)]
    missing += [f"Session.{n}" for n in SURFACE["Session"] if not hasattr(sna_history.Session, n)]
    missing += [f"Host.{n}" for n in SURFACE["Host"] if not hasattr(sna_history.Host, n)]
    missing += [f"Agent.{n}" for n in SURFACE["Agent"] if not hasattr(sna_history.Agent, n)]
    missing += [n for n in SURFACE["functions"] if not callable(getattr(sna_history, n, None))]
    assert missing == []
    assert hasattr(sna_history.Session, "__len__") and callable(sna_history.Store)
    # And nothing public beyond the list and Python's own protocol methods.
    for cls in ("Store", "Session", "Host", "Agent"):
        public = {n for n in dir(getattr(sna_history, cls)) if not n.startswith("_")}
        assert public - set(SURFACE[cls]) <= {"closed"}, (cls, public - set(SURFACE[cls]))
