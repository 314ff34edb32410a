// Store.syncTo: a local history through a shared PostgreSQL database to another file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { withDatabase } from './pgdb.mjs'

const require = createRequire(import.meta.url)
const { Store } = require('../index.js')

function tmp(t) {
  const dir = mkdtempSync(join(tmpdir(), 'sna-node-sync-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function history(path) {
  const store = new Store(path)
  const session = store.createSession({ id: 'js-chat', title: 'Chat' })
  session.append({ actor: 'user', kind: 'text', content: 'what is ![d](embed://d)?', embeds: { d: { mime: 'image/png', data: Buffer.from('\x89PNG dot', 'latin1') } } })
  session.append({ actor: 'assistant', kind: 'text', content: 'a dot', provider: 'codex', modelProvider: 'openai', model: 'gpt-5.4' })
  return store
}

const blocks = (store) => store.sessions().map((i) => i.id).sort().flatMap((id) => store.session(id).blocks())

test('syncTo through PostgreSQL keeps blocks and embeds, and copies nothing twice', (t) => {
  const dir = tmp(t)
  const local = history(join(dir, 'local.db'))
  withDatabase('jssync', (url) => {
    const shared = new Store(url)
    const report = local.syncTo(shared, { origin: 'laptop' })
    assert.deepEqual(
      [report.sessions, report.created, report.blocks, report.embeds, report.embedBytes, report.conflicts, report.targetAhead],
      [1, 1, 2, 1, 8, [], []],
    )
    const again = local.syncTo(shared, { origin: 'laptop' })
    assert.deepEqual([again.blocks, again.created, again.unchanged], [0, 0, 1])
    const other = new Store(join(dir, 'other.db'))
    assert.equal(shared.syncTo(other).created, 1)
    assert.deepEqual(blocks(other), blocks(local))
    assert.deepEqual(other.session('js-chat').embed('d'), Buffer.from('\x89PNG dot', 'latin1'))
    assert.equal(other.sessions()[0].origin, 'laptop')
    assert.equal(local.sessions()[0].origin, null)
    // Both sides appended: reported, neither changed.
    local.session('js-chat').append({ actor: 'user', kind: 'text', content: 'here' })
    other.session('js-chat').append({ actor: 'user', kind: 'text', content: 'there' })
    local.syncTo(shared)
    const { conflicts } = other.syncTo(shared)
    assert.deepEqual(conflicts.map((c) => [c.sessionId, c.seq, c.sourceBlocks, c.targetBlocks]), [['js-chat', 2, 3, 3]])
    assert.equal(shared.session('js-chat').blocks()[2].content, 'here')
    shared.close()
  })
})

test('syncTo refuses itself and bad arguments', (t) => {
  const dir = tmp(t)
  const store = history(join(dir, 'a.db'))
  assert.throws(() => store.syncTo(store), (e) => e.code === 'INVALID_INPUT' && /same store/.test(e.message))
  assert.throws(() => store.syncTo(join(dir, 'b.db')))
  assert.throws(() => store.syncTo(new Store(join(dir, 'b.db')), { origin: '\n' }), (e) => e.code === 'INVALID_INPUT' && /origin/.test(e.message))
  assert.throws(() => store.syncTo(new Store(join(dir, 'c.db')), { machine: 'x' }), (e) => e.code === 'INVALID_INPUT' && /machine/.test(e.message))
  assert.equal(store.storeId().length, 32)
})
