// Store.usage: token usage and cost, on a database file and on PostgreSQL.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { withDatabase } from './pgdb.mjs'

const require = createRequire(import.meta.url)
const { Store } = require('../index.js')

function record(id, at, model, output, text) {
  return {
    type: 'assistant', uuid: `${id}-${output}`, parentUuid: null, sessionId: 's1', timestamp: at, cwd: '/home/dev/p', requestId: `req-${id}`,
    message: { id, role: 'assistant', model, content: [{ type: 'text', text }], usage: { input_tokens: 1000, cache_creation_input_tokens: 0, cache_read_input_tokens: 2000, output_tokens: output } },
  }
}

function check(store, dir) {
  const records = [
    record('m1', '2026-11-30T23:59:58.000Z', 'claude-sonnet-4-5', 10, 'a'),
    record('m1', '2026-11-30T23:59:58.000Z', 'claude-sonnet-4-5', 100, 'b'),
    record('m2', '2026-12-01T00:00:02.000Z', 'claude-foo-9', 50, 'c'),
  ]
  store.importNative('claude-code', records.map((r) => JSON.stringify(r) + '\n').join(''))
  const none = join(dir, 'none.json')
  writeFileSync(none, '{"models": {}}')
  const report = store.usage({ tz: 'UTC', prices: none })
  assert.equal(report.by, 'day')
  assert.deepEqual(report.rows.map((r) => [r.key, r.input, r.output, r.cacheRead, r.total, r.responses]), [
    ['2026-11-30', 1000, 100, 2000, 3100, 1],
    ['2026-12-01', 1000, 50, 2000, 3050, 1],
  ])
  assert.ok(Math.abs(report.rows[0].costUsd - (1000 * 3 + 100 * 15 + 2000 * 0.3) / 1e6) < 1e-12)
  assert.equal(report.rows[0].firstAt, '2026-11-30T23:59:58.000Z')
  assert.deepEqual(report.rows[0].models.map((m) => [m.model, m.output]), [['claude-sonnet-4-5', 100]])
  assert.equal(report.rows[1].costUsd, null)
  assert.deepEqual(report.unpricedModels, ['claude-foo-9'])
  assert.equal(report.totals.responses, 2)
  assert.deepEqual(report.prices.files, [none])
  // One session, response by response: the larger copy of m1 (its second record) counts.
  const mine = store.session('s1').usage({ prices: none })
  assert.deepEqual(mine.responses.map((r) => [r.seq, r.model, r.output, r.costUsd === null]), [[1, 'claude-sonnet-4-5', 100, false], [2, 'claude-foo-9', 50, true]])
  assert.equal(mine.totals.total, report.totals.total)
  assert.throws(() => store.session('s1').usage({ tz: 'UTC' }), (e) => e.code === 'INVALID_INPUT' && /tz/.test(e.message))
  const tokyo = store.usage({ tz: 'Asia/Tokyo', since: '2026-12-01', until: '2026-12-01', prices: none })
  assert.deepEqual(tokyo.rows.map((r) => [r.key, r.responses]), [['2026-12-01', 2]])
  const since = store.usage({ by: 'month', tz: 'UTC', since: new Date(Date.UTC(2026, 11, 1)), prices: none })
  assert.deepEqual(since.rows.map((r) => r.key), ['2026-12'])
  assert.throws(() => store.usage({ by: 'year' }), (e) => e.code === 'INVALID_INPUT' && e.field === 'by')
  assert.throws(() => store.usage({ tz: 'Nowhere/Else' }), (e) => e.code === 'INVALID_INPUT' && e.field === 'tz')
  assert.throws(() => store.usage({ zone: 'UTC' }), (e) => e.code === 'INVALID_INPUT' && /zone/.test(e.message))
}

test('usage on a database file', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sna-node-usage-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const store = new Store(join(dir, 'h.db'))
  check(store, dir)
  store.close()
})

test('usage on PostgreSQL', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sna-node-usage-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  withDatabase('jsusage', (url) => {
    const store = new Store(url)
    try {
      check(store, dir)
    } finally {
      store.close()
    }
  })
})
