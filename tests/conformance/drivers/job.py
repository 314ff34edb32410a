"""The Python driver of the conformance suite (README.md here): runs one job through the Python
binding, in process, and returns the result in the serialized (snake_case) form, as the Rust and
Node drivers print it."""

from __future__ import annotations

import base64
from typing import Any

import sna_history


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    session = sna_history.Store().import_file(job["import"]["path"], job["import"].get("runtime"))
    blocks = session.blocks()
    embeds = {embed_id: base64.b64encode(session.embed(embed_id)).decode() for b in blocks for embed_id in b.embeds}
    result: dict[str, Any] = {"session_id": session.id, "blocks": [b.to_dict() for b in blocks], "embeds": embeds}
    if "export" in job:
        options = job["export"].get("options", {})
        export = session.export(job["export"]["runtime"], **options)
        result["export"] = {"data": export.data, "report": export.report.to_dict()}
        result["export_again"] = session.export(job["export"]["runtime"], **options).data
    if "resume" in job:
        result["plan"] = session.prepare_resume(job["resume"]["runtime"], **job["resume"].get("options", {})).to_dict()
    return result
