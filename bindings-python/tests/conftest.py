from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors"
SCHEMA = ROOT / "schema" / "block.schema.json"


def vector_files() -> list[Path]:
    return sorted(VECTORS.glob("*.json"))


def block_input(value: dict[str, Any]) -> dict[str, Any]:
    """A vector's block as `append` takes it: `data_base64` of each embed becomes bytes."""
    out = dict(value)
    if isinstance(out.get("embeds"), dict):
        embeds = {}
        for embed_id, embed in out["embeds"].items():
            embed = dict(embed)
            if "data_base64" in embed:
                embed["data"] = base64.b64decode(embed.pop("data_base64"))
            embeds[embed_id] = embed
        out["embeds"] = embeds
    return out


def mismatch(expected: Any, actual: Any, path: str, present: bool = True) -> str | None:
    """The matcher of tests/vectors/README.md; returns the first mismatch or None."""
    if isinstance(expected, dict) and len(expected) == 1:
        if expected.get("$absent") is True:
            return f"{path}: expected no value, got {actual!r}" if present else None
        if "$contains" in expected:
            if present and isinstance(actual, str) and expected["$contains"] in actual:
                return None
            return f"{path}: expected a string containing {expected['$contains']!r}, got {actual!r}"
    if not present:
        return f"{path}: missing, expected {expected!r}"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            problem = mismatch(value, actual.get(key), f"{path}.{key}", key in actual)
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{path}: expected {len(expected)} elements, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            problem = mismatch(e, a, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if type(expected) is not type(actual) and not (
        isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(actual, bool)
    ):
        return f"{path}: expected {expected!r}, got {actual!r}"
    return None if expected == actual else f"{path}: expected {expected!r}, got {actual!r}"


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())
