"""Store.usage: token usage and cost, on a database file and on PostgreSQL."""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path
from typing import Iterator

import pytest

import sna_history
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests"))
import pgdb  # noqa: E402


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sna_history.Store]:
    if request.param == "sqlite":
        yield sna_history.Store(tmp_path / "h.db")
        return
    with pgdb.database("pyusage") as url:
        s = sna_history.Store(url)
        yield s
        s.close()


def _record(message_id: str, at: str, model: str, output: int, text: str) -> dict:
    return {
        "type": "assistant", "uuid": f"{message_id}-{output}", "parentUuid": None, "sessionId": "s1", "timestamp": at,
        "cwd": "/home/dev/p", "requestId": f"req-{message_id}",
        "message": {"id": message_id, "role": "assistant", "model": model, "content": [{"type": "text", "text": text}],
                    "usage": {"input_tokens": 1000, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 2000, "output_tokens": output}},
    }


def _fill(store: sna_history.Store) -> None:
    records = [
        _record("m1", "2026-11-30T23:59:58.000Z", "claude-sonnet-4-5", 10, "a"),
        _record("m1", "2026-11-30T23:59:58.000Z", "claude-sonnet-4-5", 100, "b"),  # the same response, final count
        _record("m2", "2026-12-01T00:00:02.000Z", "claude-foo-9", 50, "c"),
    ]
    store.import_native("claude-code", "".join(json.dumps(r) + "\n" for r in records))


def test_usage_counts_each_response_once_by_day_and_model(store: sna_history.Store, tmp_path: Path) -> None:
    _fill(store)
    none = tmp_path / "none.json"
    none.write_text('{"models": {}}')
    report = store.usage(tz="UTC", prices=none)
    assert isinstance(report, sna_history.UsageReport)
    assert (report.by, report.tz) == ("day", "UTC")
    assert [(r.key, r.input, r.output, r.cache_read, r.total, r.responses) for r in report.rows] == [
        ("2026-11-30", 1000, 100, 2000, 3100, 1),
        ("2026-12-01", 1000, 50, 2000, 3050, 1),
    ]
    first = report.rows[0]
    assert isinstance(first, sna_history.UsageRow)
    assert first.cost_usd == pytest.approx((1000 * 3 + 100 * 15 + 2000 * 0.3) / 1e6)
    assert first.first_at == datetime.datetime(2026, 11, 30, 23, 59, 58, tzinfo=datetime.timezone.utc)
    assert [(m.model, m.output) for m in first.models] == [("claude-sonnet-4-5", 100)]
    assert isinstance(first.models[0], sna_history.ModelUsage)
    # A model without a price: counted, not priced.
    assert (report.rows[1].cost_usd, report.rows[1].unpriced_models) == (None, ["claude-foo-9"])
    assert report.unpriced_models == ["claude-foo-9"]
    assert report.totals.key is None and report.totals.responses == 2
    assert report.prices_date == "2026-12-06" and report.price_files == [str(none)]
    assert report.to_dict()["rows"][0]["cache_read"] == 2000
    # One session, response by response: the larger copy of m1 (its second record) counts.
    mine = store.session("s1").usage(prices=none)
    assert isinstance(mine, sna_history.SessionUsage) and isinstance(mine.responses[0], sna_history.ResponseUsage)
    assert [(r.seq, r.model, r.output, r.cost_usd is None) for r in mine.responses] == [(1, "claude-sonnet-4-5", 100, False), (2, "claude-foo-9", 50, True)]
    assert mine.totals.total == report.totals.total and mine.price_files == [str(none)]
    # Tokyo is nine hours ahead: both responses fall on 1 December.
    tokyo = store.usage(tz="Asia/Tokyo", since=datetime.date(2026, 12, 1), until="2026-12-01", prices=none)
    assert [(r.key, r.responses) for r in tokyo.rows] == [("2026-12-01", 2)]
    by_model = store.usage(by="model", runtime="claude-code", prices=none)
    assert [r.key for r in by_model.rows] == ["claude-sonnet-4-5", "claude-foo-9"]
    since = datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)
    assert [r.key for r in store.usage(by="month", tz="UTC", since=since, prices=none).rows] == ["2026-12"]


def test_a_user_price_file_and_bad_options(store: sna_history.Store, tmp_path: Path) -> None:
    _fill(store)
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": {"claude-foo-9": {"input": 1, "output": 1, "cache_read": 1}}}')
    report = store.usage(by="model", prices=prices)
    assert report.unpriced_models == []
    assert report.rows[-1].cost_usd == pytest.approx(3050 / 1e6)
    with pytest.raises(sna_history.InvalidInputError) as e:
        store.usage(by="year")  # type: ignore[arg-type]
    assert e.value.field == "by"
    with pytest.raises(sna_history.InvalidInputError) as e:
        store.usage(tz="Nowhere/Else")
    assert e.value.field == "tz"
    with pytest.raises(sna_history.InvalidInputError) as e:
        store.usage(since=datetime.datetime(2026, 12, 1))
    assert e.value.field == "since"
    prices.write_text("{")
    with pytest.raises(sna_history.InvalidInputError, match="prices.json"):
        store.usage(prices=prices)
