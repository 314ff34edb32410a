// The Codex adapter through the Node API: rollouts in and out line for line, the items rebuild,
// malformed lines, live capture (exec --json) and the rollout file a resume needs.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, readFileSync, readdirSync, writeFileSync, statSync, utimesSync, appendFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname, basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Store } = require('../index.js')
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'fixtures', 'codex')

const rollout = (name) => join(FIXTURES, name, readdirSync(join(FIXTURES, name)).find((f) => f.startsWith('rollout-')))
const lines = (path) => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))

function tmp(t) {
  const dir = mkdtempSync(join(tmpdir(), 'sna-node-codex-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('every fixture round-trips line for line, from every source type', () => {
  for (const name of readdirSync(FIXTURES)) {
    const path = rollout(name)
    const store = new Store()
    const sessions = [
      store.importFile(path),
      store.importNative('codex', readFileSync(path, 'utf8'), { sessionId: 'text' }),
      store.importNative('codex', readFileSync(path), { sessionId: 'buffer' }),
      store.importNative('codex', lines(path), { sessionId: 'list' }),
    ]
    assert.ok(basename(path).endsWith(`${sessions[0].id}.jsonl`), `${name}: the thread id is the session id`)
    for (const session of sessions) {
      const { data, report } = session.export('codex', { format: 'rollout' })
      assert.deepEqual(data, lines(path), name)
      assert.deepEqual(report.entries, [], name)
    }
  }
})

test('blocks are attributed and reasoning is scoped', () => {
  const session = new Store().importFile(rollout('reasoning-exec'))
  const thinking = session.blocks().find((b) => b.kind === 'thinking')
  assert.equal(thinking.reasoning.format, 'openai-encrypted')
  assert.deepEqual(thinking.reasoning.scope, { provider: 'codex', modelProvider: 'mock', model: 'gpt-5.5' })
  assert.deepEqual([thinking.provider, thinking.modelProvider, thinking.model], ['codex', 'mock', 'gpt-5.5'])
  const items = session.toNative('codex')
  const calls = items.filter((i) => i.type === 'function_call').map((i) => i.call_id)
  const outputs = items.filter((i) => i.type === 'function_call_output').map((i) => i.call_id)
  assert.ok(calls.length > 0)
  assert.deepEqual(calls, outputs)
})

test('images are embeds with Buffer bytes', () => {
  const session = new Store().importFile(rollout('image'))
  const block = session.blocks().find((b) => Object.keys(b.embeds ?? {}).length)
  const [[id, embed]] = Object.entries(block.embeds)
  assert.equal(embed.mime, 'image/png')
  const bytes = session.embed(id)
  assert.ok(Buffer.isBuffer(bytes))
  assert.equal(bytes.subarray(1, 4).toString(), 'PNG')
})

test('malformed lines are kept and reported, or refused with strict', (t) => {
  const dir = tmp(t)
  const text = readFileSync(rollout('basic'), 'utf8').split('\n')
  text.splice(2, 0, '{"type": "response_item", "payload": ')
  const bad = join(dir, 'rollout-bad.jsonl')
  writeFileSync(bad, text.join('\n'))
  const store = new Store()
  const report = store.importFile(bad, 'codex').importReport()
  assert.deepEqual(report.entries.map((e) => e.action), ['malformed'])
  assert.match(report.entries[0].message, /line 3/)
  assert.throws(() => store.importFile(bad, 'codex', { strict: true, sessionId: 'strict' }), (err) => err.code === 'INVALID_INPUT' && /^line 3, offset \d+: /.test(err.message))
  assert.throws(() => store.session('strict'), (err) => err.code === 'NOT_FOUND')
})

test('exec --json events are captured like the rollout they wrote', () => {
  const store = new Store()
  const imported = store.importFile(rollout('reasoning-exec'))
  const live = store.createSession()
  for (const line of readFileSync(join(FIXTURES, 'reasoning-exec', 'events.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    live.ingest('codex', JSON.parse(line))
  }
  const said = (s) => s.blocks().filter((b) => b.actor === 'assistant' && (b.kind === 'text' || b.kind === 'thinking')).map((b) => [b.kind, b.content])
  assert.ok(said(live).length > 0)
  assert.deepEqual(said(live), said(imported))
})

test('prepareResume writes a legacy rollout under codexHome', (t) => {
  const dir = tmp(t)
  const store = new Store()
  const session = store.createSession({ id: '0193c5a0-0000-7000-8000-0000000000c2', cwd: dir })
  const by = { provider: 'codex', modelProvider: 'mock', model: 'gpt-5.5' }
  session.extend([
    { actor: 'user', kind: 'text', content: 'Look at ![s](embed://s)', embeds: { s: { mime: 'image/png', name: 's.png', data: Buffer.from('\x89PNG\r\n\x1a\nfake', 'latin1') } } },
    { actor: 'assistant', kind: 'thinking', content: 'Hmm.', reasoning: { format: 'openai-encrypted', data: 'gAAAAB-node', scope: { provider: 'codex', modelProvider: 'mock', model: 'gpt-5.5' } }, ...by },
    { actor: 'assistant', kind: 'tool_use', content: '{"cmd":"ls"}', tool: { callId: 'call_1', name: 'exec_command' }, ...by },
    { actor: 'user', kind: 'tool_result', content: 's.png', tool: { callId: 'call_1' } },
    { actor: 'assistant', kind: 'text', content: 'A picture.', ...by },
  ])
  const plan = session.prepareResume('codex', { codexHome: join(dir, 'codex'), cwd: dir, modelProvider: 'mock' })
  assert.deepEqual(plan.argv, ['codex', 'exec', 'resume', session.id])
  assert.equal(plan.files.length, 1)
  const file = plan.files[0]
  assert.ok(file.startsWith(join(dir, 'codex', 'sessions')) && file.endsWith(`-${session.id}.jsonl`))
  assert.equal(statSync(file).mode & 0o777, 0o600)
  const rows = lines(file)
  assert.equal(rows[0].payload.model_provider, 'mock')
  const items = rows.filter((r) => r.type === 'response_item').map((r) => r.payload)
  assert.deepEqual(items.map((i) => i.type), ['message', 'reasoning', 'function_call', 'function_call_output', 'message'])
  assert.equal(items[1].encrypted_content, 'gAAAAB-node')
  assert.ok(rows.some((r) => r.type === 'event_msg' && r.payload.type === 'user_message'))
  // Another provider: the encrypted reasoning does not travel, and the report says so.
  const other = session.export('codex', { modelProvider: 'openai', targetModel: 'gpt-5.4' })
  assert.ok(!JSON.stringify(other.data).includes('gAAAAB-node'))
  assert.deepEqual(other.report.entries.map((e) => e.action), ['dropped'])
  assert.throws(() => session.toNative('codex', { modelProvider: 'openai', strict: true }), (err) => err.code === 'LOSSY')
  assert.throws(() => session.prepareResume('codex', { codexHome: dir, cwd: dir, sessionId: '../x' }), (err) => err.code === 'INVALID_INPUT')
})

test('importSource adds only what a rollout gained', (t) => {
  const dir = tmp(t)
  const original = readFileSync(rollout('reasoning-exec'), 'utf8').split('\n').filter(Boolean)
  const path = join(dir, basename(rollout('reasoning-exec')))
  writeFileSync(path, original.slice(0, -3).join('\n') + '\n')
  const store = new Store(join(dir, 'h.db'))
  const first = store.importSource(path)
  assert.equal(first.outcome, 'imported')
  assert.equal(store.importSource(path).outcome, 'unchanged')
  writeFileSync(path, original.join('\n') + '\n')
  const grown = store.importSource(path)
  assert.equal(grown.outcome, 'appended')
  assert.ok(grown.blocks > 0)
  assert.deepEqual(grown.session.toNative('codex', { format: 'rollout' }), lines(rollout('reasoning-exec')))
  store.close()
})

test('sourceUnchanged answers from the file\'s look', (t) => {
  const dir = tmp(t)
  const path = join(dir, basename(rollout('reasoning-exec')))
  writeFileSync(path, readFileSync(rollout('reasoning-exec')))
  utimesSync(path, 1_700_000_000, 1_700_000_000)
  const store = new Store(join(dir, 'h.db'))
  assert.equal(store.sourceUnchanged(path), false)
  store.importSource(path)
  assert.equal(store.sourceUnchanged(path), true)
  appendFileSync(path, '\n')
  assert.equal(store.sourceUnchanged(path), false)
  assert.throws(() => store.sourceUnchanged(join(dir, 'gone.jsonl')), (err) => err.code === 'IO' && err.message.includes('gone.jsonl'))
  store.close()
})
