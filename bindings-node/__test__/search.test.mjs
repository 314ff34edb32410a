// Store.search: full-text search over every session, on a database file and on PostgreSQL.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { withDatabase } from './pgdb.mjs'

const require = createRequire(import.meta.url)
const { Store } = require('../index.js')

function fill(store) {
  const a = store.createSession({ id: 'a' })
  a.append({ actor: 'user', kind: 'text', content: 'How do I handle errors in the parser?', createdAt: '2026-11-01T10:00:00Z' })
  a.append({ actor: 'assistant', kind: 'text', content: 'Error handling: use the ? operator.', provider: 'claude-code', model: 'claude-opus-5-5', createdAt: new Date(Date.UTC(2026, 10, 2, 10)) })
  a.append({ actor: 'user', kind: 'text', content: '数据库 and crème brûlée 🚀', createdAt: '2026-11-03T10:00:00Z' })
  const b = store.createSession({ id: 'b' })
  b.append({ actor: 'assistant', kind: 'text', content: 'parsing JSON with serde', provider: 'codex', model: 'gpt-5.4', createdAt: '2026-11-20T10:00:00Z' })
}

function check(store) {
  fill(store)
  const [hit, ...rest] = store.search('"error handling"')
  assert.equal(rest.length, 0)
  assert.deepEqual([hit.sessionId, hit.seq, hit.kind, hit.actor, hit.provider, hit.model], ['a', 1, 'text', 'assistant', 'claude-code', 'claude-opus-5-5'])
  assert.equal(hit.snippet, '«Error handling»: use the ? operator.')
  assert.equal(hit.createdAt, '2026-11-02T10:00:00.000Z')
  assert.ok(hit.score > 0)
  assert.equal(hit.blockId, store.session('a').blocks()[1].id)
  assert.deepEqual(store.search('pars*').map((h) => h.sessionId).sort(), ['a', 'b'])
  assert.deepEqual(store.search('数据库 brulee 🚀').map((h) => h.seq), [2])
  assert.deepEqual(store.search('pars*', { runtime: 'codex' }).map((h) => h.sessionId), ['b'])
  assert.deepEqual(store.search('pars*', { since: new Date(Date.UTC(2026, 10, 10)) }).map((h) => h.sessionId), ['b'])
  assert.deepEqual(store.search('error OR pars*', { since: '2026-11-01T12:00:00Z', until: '2026-11-10', kinds: ['text'] }).map((h) => h.seq), [1])
  assert.equal(store.search('pars*', { limit: 1 }).length, 1)
  assert.throws(() => store.search('"open'), (e) => e.code === 'INVALID_INPUT' && e.field === 'query' && /no closing quote/.test(e.message))
  assert.throws(() => store.search('x', { kinds: ['poem'] }), (e) => e.code === 'INVALID_INPUT' && /kinds/.test(e.message))
  assert.throws(() => store.search('x', { limit: 0 }), (e) => e.code === 'INVALID_INPUT' && /limit/.test(e.message))
  assert.throws(() => store.search('x', { colour: 'red' }), (e) => e.code === 'INVALID_INPUT' && /colour/.test(e.message))
  assert.throws(() => store.search(3), (e) => e.code === 'INVALID_INPUT')
}

test('search on a database file', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sna-node-search-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const store = new Store(join(dir, 'h.db'))
  check(store)
  store.close()
})

test('search on PostgreSQL', () => {
  withDatabase('jssearch', (url) => {
    const store = new Store(url)
    try {
      check(store)
    } finally {
      store.close()
    }
  })
})
