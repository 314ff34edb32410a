import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { Worker } from 'node:worker_threads'
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const sna = require('../index.js')
const { Store } = sna

function tmp(t) {
  const dir = mkdtempSync(join(tmpdir(), 'sna-node-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function throwsCode(fn, code, ...needles) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof Error)
    assert.equal(err.code, code, err.message)
    for (const needle of needles) assert.ok(err.message.includes(needle), `${err.message} lacks ${needle}`)
    return true
  })
}

test('blocks go in and come out in camelCase with Buffers for embeds', () => {
  const session = new Store().createSession({ title: 't', cwd: '/home/dev/p' })
  const data = Buffer.from([0, 1, 2, 255])
  const a = session.append({ actor: 'user', kind: 'text', content: 'see ![i](embed://img)', embeds: { img: { mime: 'image/png', data, name: 'i.png' } }, createdAt: new Date(Date.UTC(2026, 10, 30)) })
  assert.equal(a.seq, 0)
  assert.equal(a.createdAt, '2026-11-30T00:00:00.000Z')
  assert.deepEqual(a.embeds.img, { mime: 'image/png', name: 'i.png', size: 4, sha256: createHash('sha256').update(data).digest('hex') })
  assert.ok(session.embed('img').equals(data))
  const b = session.append({ actor: 'assistant', kind: 'tool_use', content: '{}', tool: { callId: 'c1', name: 'Bash' }, modelProvider: 'openai', model: 'gpt-5.4', provider: 'codex', messageId: 'm1', createdAt: 0 })
  assert.deepEqual(b.tool, { callId: 'c1', name: 'Bash' })
  assert.equal(b.modelProvider, 'openai')
  assert.equal(b.messageId, 'm1')
  assert.equal(b.createdAt, '1970-01-01T00:00:00.000Z')
  const c = session.append({ actor: 'user', kind: 'tool_result', content: 'ok', tool: { callId: 'c1', isError: false }, native: { runtime: 'codex', data: { call_id: 'c1', snake_key: 1 } } })
  assert.deepEqual(c.native, { runtime: 'codex', data: { call_id: 'c1', snake_key: 1 } })
  assert.equal(session.length, 3)
  assert.deepEqual(session.blocks().map((x) => x.seq), [0, 1, 2])
  const [sw] = session.switches()
  assert.equal(sw.blockId, b.id)
  assert.equal(sw.to.modelProvider, 'openai')
})

test('embed bytes are sha256-addressed', () => {
  const store = new Store()
  const s = store.createSession()
  const b = s.append({ actor: 'user', kind: 'text', content: '![x](embed://x)', embeds: { x: { mime: 'text/plain', data: Buffer.from('abc') } } })
  assert.equal(b.embeds.x.sha256, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  assert.equal(store.blobCount(), 1)
})

test('bad input throws Errors with the right code and where', () => {
  const store = new Store()
  const s = store.createSession()
  throwsCode(() => s.append({ actor: 'robot', kind: 'text' }), 'INVALID_INPUT', 'unknown actor "robot"')
  throwsCode(() => s.append({ actor: 'user', kind: 'speech' }), 'INVALID_INPUT', 'unknown kind "speech"')
  throwsCode(() => s.append({ actor: 'assistant', kind: 'tool_use', content: '{}' }), 'INVALID_INPUT', 'tool.call_id')
  throwsCode(() => s.append({ actor: 'user', kind: 'text', content: '![a](embed://gone)' }), 'INVALID_INPUT', 'dangling', 'embed://gone')
  throwsCode(() => s.extend([{ actor: 'user', kind: 'text' }, { actor: 'user', kind: 'tool_result' }]), 'INVALID_INPUT', 'block 1 of the batch')
  assert.equal(s.length, 0)
  throwsCode(() => store.session('nope'), 'NOT_FOUND', 'nope')
  throwsCode(() => s.append('not a block'), 'INVALID_INPUT')
  throwsCode(() => store.session(42), 'INVALID_INPUT')
  throwsCode(() => s.bind('gemini', 'x', 0), 'INVALID_INPUT', 'unknown runtime "gemini"')
})

test('files: directory, newer schema left untouched, reopen', (t) => {
  const dir = tmp(t)
  throwsCode(() => new Store(dir), 'INVALID_INPUT', 'is a directory')
  const path = join(dir, 'h.db')
  const store = new Store(path)
  store.createSession({ id: 's' }).append({ actor: 'user', kind: 'text', content: 'kept' })
  store.close()
  throwsCode(() => store.sessions(), 'CLOSED')
  assert.equal(new Store(path).session('s').blocks()[0].content, 'kept')
  const future = join(dir, 'future.db')
  new Store(future).close()
  execFileSync('python3', ['-c', 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version=99"); c.commit(); c.close()', future])
  const before = readFileSync(future)
  throwsCode(() => new Store(future), 'SCHEMA_TOO_NEW', 'schema version 99')
  assert.ok(readFileSync(future).equals(before))
  const junk = join(dir, 'junk.db')
  writeFileSync(junk, 'not sqlite '.repeat(200))
  throwsCode(() => new Store(junk), 'INVALID_INPUT', 'not an SQLite database')
})

test('conversion calls are declared and check their arguments', (t) => {
  const dir = tmp(t)
  const store = new Store()
  const s = store.createSession()
  for (const rt of sna.runtimes()) {
    throwsCode(() => s.toNative(rt), 'UNSUPPORTED')
    throwsCode(() => s.export(rt, { strict: true }), 'UNSUPPORTED')
    throwsCode(() => s.ingest(rt, { type: 'x' }), 'UNSUPPORTED')
    throwsCode(() => s.prepareResume(rt, { home: dir, cwd: dir }), 'UNSUPPORTED')
    throwsCode(() => store.importNative(rt, '{}'), 'UNSUPPORTED')
  }
  throwsCode(() => s.toNative('claude-code', { format: 'rollout' }), 'INVALID_INPUT', 'unknown format "rollout"')
  throwsCode(() => s.toNative('codex', { fromat: 'items' }), 'INVALID_INPUT', 'fromat')
  throwsCode(() => s.toNative('gemini'), 'INVALID_INPUT', 'unknown runtime')
  throwsCode(() => store.importFile(join(dir, 'missing.jsonl')), 'IO')
  assert.deepEqual(sna.formats('codex'), ['items', 'rollout'])
  assert.ok(sna.errorCodes().includes('SCHEMA_TOO_NEW'))
})

test('a panic becomes an INTERNAL Error and the process goes on', () => {
  throwsCode(() => sna.__panicForTests(), 'INTERNAL', 'deliberate panic')
  assert.equal(new Store().createSession().append({ actor: 'user', kind: 'text' }).seq, 0)
})

test('worker threads each open their own Store on one file', async (t) => {
  const dir = tmp(t)
  const path = join(dir, 'w.db')
  new Store(path).createSession({ id: 's' })
  const code = `
    const { workerData, parentPort } = require('node:worker_threads')
    const { Store } = require(workerData.index)
    const s = new Store(workerData.path).session('s')
    for (let i = 0; i < 300; i++) s.append({ actor: 'user', kind: 'text', content: workerData.tag + '-' + i })
    parentPort.postMessage('done')`
  const index = require.resolve('../index.js')
  await Promise.all(['a', 'b'].map((tag) => new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { index, path, tag } })
    w.on('message', resolve)
    w.on('error', reject)
  })))
  const blocks = new Store(path).session('s').blocks()
  assert.deepEqual(blocks.map((b) => b.seq), [...Array(600).keys()])
  assert.equal(new Set(blocks.map((b) => b.content)).size, 600)
})
