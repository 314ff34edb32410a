// The Claude Code adapter through the Node API: every source type, lossless export, the Messages
// rebuild, malformed input, live capture and resume files.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, readFileSync, readdirSync, writeFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Store } = require('../index.js')
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'fixtures', 'claude-code')

function transcript(name) {
  const file = readdirSync(join(FIXTURES, name)).find((f) => f.endsWith('.jsonl') && f !== 'events.jsonl' && f !== 'requests.jsonl')
  return join(FIXTURES, name, file)
}

const records = (path) => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))

function tmp(t) {
  const dir = mkdtempSync(join(tmpdir(), 'sna-node-cc-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('every source type imports and exports record for record', () => {
  const path = transcript('tools-thinking')
  const store = new Store()
  const sessions = [
    store.importFile(path),
    store.importFile(path, 'claude-code', { sessionId: 'by-path' }),
    store.importNative('claude-code', readFileSync(path, 'utf8'), { sessionId: 'text' }),
    store.importNative('claude-code', readFileSync(path), { sessionId: 'buffer' }),
    store.importNative('claude-code', records(path), { sessionId: 'list' }),
  ]
  for (const session of sessions) {
    assert.deepEqual(session.toNative('claude-code'), records(path))
    const { data, report } = session.export('claude-code')
    assert.deepEqual(data, records(path))
    assert.deepEqual(report.entries, [])
  }
  const thinking = sessions[0].blocks().find((b) => b.kind === 'thinking')
  assert.equal(thinking.reasoning.format, 'anthropic-signature')
  assert.equal(thinking.modelProvider, 'anthropic')
  assert.equal(sessions[0].info().cwd, '/home/dev/project')
})

test('native records keep their own key names (no camelCase)', () => {
  const store = new Store()
  const session = store.importFile(transcript('tool-error'))
  const result = session.toNative('claude-code').find((r) => r.type === 'user' && Array.isArray(r.message.content))
  assert.ok('tool_use_id' in result.message.content[0])
  assert.ok('toolUseResult' in result)
  const body = session.toNative('claude-code', { format: 'messages' })
  assert.equal(body.messages[2].content[0].is_error, true)
})

test('images are embeds with Buffer bytes', () => {
  const store = new Store()
  const session = store.importFile(transcript('image'))
  const block = session.blocks().find((b) => Object.keys(b.embeds ?? {}).length)
  const [[id, embed]] = Object.entries(block.embeds)
  assert.equal(embed.mime, 'image/png')
  const bytes = session.embed(id)
  assert.ok(Buffer.isBuffer(bytes))
  assert.equal(bytes.subarray(1, 4).toString(), 'PNG')
})

test('malformed lines are reported, or refused in strict mode', (t) => {
  const dir = tmp(t)
  const lines = readFileSync(transcript('basic'), 'utf8').split('\n')
  lines.splice(3, 0, '{"type": "user", "message": ')
  const bad = join(dir, 'bad.jsonl')
  writeFileSync(bad, lines.join('\n'))
  const store = new Store()
  const session = store.importFile(bad, 'claude-code')
  const { entries } = session.importReport()
  assert.equal(entries.length, 1)
  assert.equal(entries[0].action, 'malformed')
  assert.match(entries[0].message, /line 4/)
  assert.throws(() => store.importFile(bad, 'claude-code', { strict: true, sessionId: 'strict' }), (err) => {
    assert.equal(err.code, 'INVALID_INPUT')
    assert.match(err.message, /line 4/)
    return true
  })
  assert.throws(() => store.session('strict'), (err) => err.code === 'NOT_FOUND')
})

test('stream-json events are captured as blocks', () => {
  const store = new Store()
  const live = store.createSession()
  const lines = readFileSync(join(FIXTURES, 'parallel-tools', 'events.jsonl'), 'utf8').split('\n').filter(Boolean)
  for (const line of lines) live.ingest('claude-code', JSON.parse(line))
  const kinds = live.blocks().filter((b) => b.kind !== 'status').map((b) => `${b.actor}/${b.kind}`)
  assert.deepEqual(kinds, ['assistant/text', 'assistant/tool_use', 'assistant/tool_use', 'user/tool_result', 'user/tool_result', 'assistant/text'])
})

test('prepareResume writes the transcript and returns the plan', (t) => {
  const dir = tmp(t)
  const store = new Store()
  const session = store.createSession({ cwd: dir })
  session.append({ actor: 'user', kind: 'text', content: 'Hello' })
  session.append({ actor: 'assistant', kind: 'text', content: 'Hi', provider: 'claude-code', modelProvider: 'anthropic', model: 'claude-opus-5-5' })
  const config = join(dir, 'config')
  const plan = session.prepareResume('claude-code', { configDir: config, cwd: dir })
  assert.deepEqual(plan.argv, ['claude', '--resume', plan.sessionId])
  assert.deepEqual(plan.env, { CLAUDE_CONFIG_DIR: config })
  assert.equal(plan.files.length, 1)
  assert.equal(statSync(plan.files[0]).mode & 0o777, 0o600)
  assert.deepEqual(records(plan.files[0]).map((r) => r.type), ['user', 'assistant', 'last-prompt'])
  assert.equal(session.binding('claude-code').nativeId, plan.sessionId)
  assert.throws(() => session.prepareResume('claude-code', { home: dir, cwd: dir, sessionId: '../x' }), (err) => err.code === 'INVALID_INPUT')
})

test('strict export turns loss into a LOSSY Error', () => {
  const store = new Store()
  const session = store.createSession()
  session.append({ actor: 'user', kind: 'text', content: 'Think' })
  session.append({ actor: 'assistant', kind: 'thinking', content: 'unsigned' })
  const { report } = session.export('claude-code')
  assert.deepEqual(report.entries.map((e) => e.action), ['dropped'])
  assert.throws(() => session.toNative('claude-code', { strict: true }), (err) => err.code === 'LOSSY')
  const body = session.toNative('claude-code', { format: 'messages', foreignReasoning: 'text' })
  assert.deepEqual(body.messages[1].content[0], { type: 'text', text: '[reasoning] unsigned' })
})
