// The OpenCode adapter through the Node API: session documents in and out unchanged, opencode.db,
// documents for sessions built here, live capture and the import a resume needs.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, readFileSync, readdirSync, writeFileSync, chmodSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Store } = require('../index.js')
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'fixtures', 'opencode')
const NAMES = readdirSync(FIXTURES)
const doc = (name) => JSON.parse(readFileSync(join(FIXTURES, name, 'export.json'), 'utf8'))

function tmp(t) {
  const dir = mkdtempSync(join(tmpdir(), 'sna-node-opencode-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('every fixture round-trips from every source type, and from opencode.db', () => {
  for (const name of NAMES) {
    const path = join(FIXTURES, name, 'export.json')
    const store = new Store()
    const sessions = [
      store.importFile(path),
      store.importNative('opencode', readFileSync(path, 'utf8'), { sessionId: 'text' }),
      store.importNative('opencode', readFileSync(path), { sessionId: 'buffer' }),
      store.importNative('opencode', doc(name), { sessionId: 'object' }),
    ]
    assert.equal(sessions[0].id, doc(name).info.id)
    for (const session of sessions) {
      const { data, report } = session.export('opencode')
      assert.deepEqual(data, doc(name), name)
      assert.deepEqual(report.entries, [], name)
    }
    const fromDb = new Store().importFile(join(FIXTURES, name, 'opencode.db'))
    assert.deepEqual(fromDb.toNative('opencode'), doc(name), name)
    const other = new Store()
    assert.deepEqual(other.importOpencodeDb(join(FIXTURES, name, 'opencode.db')).map((s) => s.id), [fromDb.id])
  }
})

test('reasoning carries its signature scope; malformed documents name the path', () => {
  const session = new Store().importFile(join(FIXTURES, 'tools-reasoning', 'export.json'))
  const thinking = session.blocks().find((b) => b.kind === 'thinking')
  assert.equal(thinking.reasoning.format, 'anthropic-signature')
  assert.deepEqual(thinking.reasoning.scope, { provider: 'opencode', modelProvider: 'anthropic', model: 'claude-sonnet-4-5' })
  const bad = doc('tools-reasoning')
  delete bad.messages[1].parts[3].callID
  assert.throws(() => new Store().importNative('opencode', bad), (err) => err.code === 'INVALID_INPUT' && err.field === 'messages[1].parts[3].callID' && err.line === undefined && /callID"?: missing/.test(err.message))
})

test('a session built here becomes a document with steps and tool parts', (t) => {
  const dir = tmp(t)
  const store = new Store()
  const session = store.createSession({ cwd: dir, title: 'Built in Node' })
  const by = { provider: 'opencode', modelProvider: 'anthropic', model: 'claude-sonnet-4-5' }
  session.extend([
    { actor: 'user', kind: 'text', content: 'List please' },
    { actor: 'assistant', kind: 'tool_use', content: '{"command":"ls"}', tool: { callId: 'toolu_1', name: 'bash' }, ...by },
    { actor: 'user', kind: 'tool_result', content: 'a.txt', tool: { callId: 'toolu_1' } },
    { actor: 'assistant', kind: 'text', content: 'One file.', ...by },
  ])
  const data = session.toNative('opencode')
  assert.deepEqual(data.messages.map((m) => [m.info.role, m.info.finish ?? null]), [['user', null], ['assistant', 'tool-calls'], ['assistant', 'stop']])
  const tool = data.messages[1].parts.find((p) => p.type === 'tool')
  assert.deepEqual([tool.callID, tool.state.status, tool.state.output, tool.state.input], ['toolu_1', 'completed', 'a.txt', { command: 'ls' }])
  assert.match(session.toNative('opencode', { format: 'prelude' }), /\[tool result id=toolu_1\]\na\.txt\n/)
  const fake = join(dir, 'opencode')
  // `session delete` answers as OpenCode does when it has no such session.
  writeFileSync(fake, '#!/bin/sh\nif [ "$1" = session ]; then echo "Error: Session not found: $3" >&2; exit 1; fi\necho "Imported session: $2"\n')
  chmodSync(fake, 0o755)
  const plan = session.prepareResume('opencode', { home: join(dir, 'home'), cwd: dir, runImport: true, opencodeBin: fake })
  assert.equal(plan.files.length, 1)
  assert.equal(statSync(plan.files[0]).mode & 0o777, 0o600)
  assert.deepEqual(plan.setup, [])
  assert.equal(plan.ran[0].status, 0)
  assert.equal(plan.ran[0].stdout, `Imported session: ${plan.files[0]}\n`)
  assert.deepEqual(plan.argv, [fake, 'run', '--session', plan.sessionId])
  assert.throws(() => session.prepareResume('opencode', { runImport: 'yes' }), (err) => err.code === 'INVALID_INPUT')
})

test('run --format json events are captured like the export', () => {
  const store = new Store()
  const imported = store.importFile(join(FIXTURES, 'tools-reasoning', 'export.json'))
  const live = store.createSession()
  for (const line of readFileSync(join(FIXTURES, 'tools-reasoning', 'events.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    live.ingest('opencode', JSON.parse(line))
  }
  const said = (s) => s.blocks().filter((b) => b.actor === 'assistant' && b.kind !== 'status').map((b) => [b.kind, b.content])
  assert.equal(said(live).length, 6)
  assert.deepEqual(said(live), said(imported))
})

test('importDatabase detects the runtime of a database', () => {
  const store = new Store()
  const db = join(FIXTURES, 'basic', 'opencode.db')
  assert.deepEqual(store.importDatabase(db).map((s) => s.id), [doc('basic').info.id])
  assert.deepEqual(store.importDatabase(db, 'opencode'), [], 'sessions already held are skipped')
  assert.throws(() => store.importDatabase(db, 'codex'), (err) => err.code === 'UNSUPPORTED' && /is not a Codex database/.test(err.message))
  assert.throws(() => store.importDatabase(join(FIXTURES, 'basic', 'export.json')), (err) => err.code === 'INVALID_INPUT' && /not a database of any runtime/.test(err.message))
})
