// Native text through the Node API: toNativeText and exportTo (a path or a writable stream) give
// the text of toNative's data written in the format, for every runtime.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, readFileSync, readdirSync, writeFileSync, createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { Writable } from 'node:stream'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Store } = require('../index.js')
const DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'fixtures', 'claude-code', 'tools-thinking')
const TRANSCRIPT = join(DIR, readdirSync(DIR).find((f) => f.endsWith('.jsonl') && !['events.jsonl', 'requests.jsonl'].includes(f)))

function tmp(t) {
  const dir = mkdtempSync(join(tmpdir(), 'sna-node-text-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

// A JSON document, else JSONL records.
function parsed(text) {
  try {
    return JSON.parse(text)
  } catch {
    return text.split('\n').filter((l) => l).map((l) => JSON.parse(l))
  }
}

const session = () => new Store().importFile(TRANSCRIPT)

test('the text holds the data, for every runtime and format', () => {
  const s = session()
  for (const [runtime, format] of [['claude-code'], ['claude-code', 'messages'], ['codex'], ['codex', 'rollout'], ['opencode']]) {
    const text = s.toNativeText(runtime, format ? { format } : null)
    assert.equal(typeof text, 'string')
    assert.ok(text.endsWith('\n'))
    assert.deepEqual(parsed(text), s.toNative(runtime, format ? { format } : null), `${runtime} ${format}`)
  }
  assert.equal(s.toNativeText('claude-code'), readFileSync(TRANSCRIPT, 'utf8'), 'the transcript comes back byte for byte')
})

test('exportTo writes to a path and to a writable stream', async (t) => {
  const dir = tmp(t)
  const s = session()
  const expected = s.toNativeText('claude-code')
  const report = s.exportTo(join(dir, 'out.jsonl'), 'claude-code')
  assert.deepEqual(report, s.export('claude-code').report)
  assert.equal(readFileSync(join(dir, 'out.jsonl'), 'utf8'), expected)

  const chunks = []
  const sink = new Writable({ write(chunk, _enc, done) { chunks.push(chunk); done() } })
  s.exportTo(sink, 'claude-code')
  assert.ok(chunks.every((c) => Buffer.isBuffer(c)))
  assert.equal(Buffer.concat(chunks).toString('utf8'), expected)

  const file = createWriteStream(join(dir, 'stream.jsonl'))
  s.exportTo(file, 'codex', { format: 'rollout' })
  file.end()
  await once(file, 'finish')
  assert.equal(readFileSync(join(dir, 'stream.jsonl'), 'utf8'), s.toNativeText('codex', { format: 'rollout' }))
})

test('bad destinations, a throwing stream and a refused export', (t) => {
  const dir = tmp(t)
  const s = session()
  assert.throws(() => s.exportTo(42, 'claude-code'), (e) => e.code === 'INVALID_INPUT' && /dest/.test(e.message))
  assert.throws(() => s.exportTo({}, 'claude-code'), (e) => e.code === 'INVALID_INPUT' && /write/.test(e.message))
  const boom = new Error('disk on fire')
  assert.throws(() => s.exportTo({ write() { throw boom } }, 'claude-code'), (e) => e === boom)
  assert.throws(() => s.exportTo(join(dir, 'no', 'such', 'dir.jsonl'), 'claude-code'), (e) => e.code === 'IO')

  const lossy = new Store().createSession()
  lossy.append({ actor: 'assistant', kind: 'thinking', content: 'unsigned' })
  const target = join(dir, 'keep.jsonl')
  writeFileSync(target, 'before\n')
  assert.throws(() => lossy.exportTo(target, 'claude-code', { strict: true }), (e) => e.code === 'LOSSY')
  assert.equal(readFileSync(target, 'utf8'), 'before\n')
  assert.deepEqual(readdirSync(dir), ['keep.jsonl'], 'no temporary file left')
})
