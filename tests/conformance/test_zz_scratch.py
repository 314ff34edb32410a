import json
from pathlib import Path
import pytest
from test_compaction import ORIGINS, PROMPT, conversation
from test_switch import origin_file, resume_in
from conftest import FIXTURES

@pytest.mark.parametrize("mode", ["latest"])
@pytest.mark.parametrize(("origin", "target"), [(o, t) for o in ORIGINS for t in ORIGINS if o != t])
def test_dump(origin, target, mode, drivers, tmp_path, anthropic_mock, openai_mock, gemini_mock):
    request, result = resume_in(target, drivers["python"], origin_file(origin, FIXTURES / ORIGINS[origin].folder), tmp_path, anthropic_mock, openai_mock, gemini_mock, prompt=PROMPT, options={"compaction": mode})
    out = Path("/tmp/dump") ; out.mkdir(exist_ok=True)
    (out / f"{origin}-{target}-{mode}.json").write_text(json.dumps({"items": conversation(target, request), "report": result["export"]["report"]}, indent=1, ensure_ascii=False))
