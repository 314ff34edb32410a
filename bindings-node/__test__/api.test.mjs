import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execFileSync } from 'node:child_process'
import { Worker } from 'node:worker_threads'
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const sna = require('../index.js')
const { Store } = sna
const HERE = dirname(fileURLToPath(import.meta.url))

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
  // Embed syntax naming no embed of the block is plain text.
  assert.equal(s.append({ actor: 'user', kind: 'text', content: '![a](embed://gone)' }).content, '![a](embed://gone)')
  throwsCode(() => s.extend([{ actor: 'user', kind: 'text' }, { actor: 'user', kind: 'tool_result' }]), 'INVALID_INPUT', 'block 1 of the batch')
  assert.equal(s.length, 1)
  throwsCode(() => store.session('nope'), 'NOT_FOUND', 'nope')
  throwsCode(() => s.append('not a block'), 'INVALID_INPUT')
  throwsCode(() => store.session(42), 'INVALID_INPUT')
  throwsCode(() => s.bind('gemini', 'x', 0), 'INVALID_INPUT', 'unknown runtime "gemini"')
})

test('a rejected Promise carries the same code and location as a throw', async () => {
  const store = new Store()
  store.createSession({ id: 'never-ran' })
  const host = new sna.Host(store)
  try {
    await assert.rejects(host.resume('never-ran'), (err) => {
      assert.ok(err instanceof Error)
      assert.equal(err.code, 'INVALID_INPUT', err.message)
      assert.equal(err.field, 'runtime')
      assert.ok(err.message.includes('never ran in a runtime'), err.message)
      return true
    })
    await assert.rejects(host.resume('nobody'), (err) => err.code === 'NOT_FOUND' && err.field === undefined)
  } finally {
    await host.close()
  }
})

test('files: a directory, a newer schema (left untouched), reopening', (t) => {
  const dir = tmp(t)
  throwsCode(() => new Store(dir), 'INVALID_INPUT', 'is a directory')
  const path = join(dir, 'h.db')
  const store = new Store(path)
  assert.equal(store.path, path)
  assert.equal(new Store().path, null)
  assert.equal(new Store(null).path, null)
  store.createSession({ id: 's' }).append({ actor: 'user', kind: 'text', content: 'kept' })
  store.close()
  assert.equal(store.closed, true)
  store.close()
  throwsCode(() => store.sessions(), 'CLOSED')
  assert.equal(new Store(path).session('s').blocks()[0].content, 'kept')
  const future = join(dir, 'future.db')
  execFileSync('python3', ['-c', [
    'import sqlite3, sys',
    'c = sqlite3.connect(sys.argv[1])',
    "c.execute('PRAGMA application_id = 1397637448')",
    "c.execute('PRAGMA user_version = 99')",
    'c.commit()',
    'c.close()',
  ].join('\n'), future])
  const before = readFileSync(future)
  throwsCode(() => new Store(future), 'SCHEMA_TOO_NEW', 'schema version 99')
  assert.ok(readFileSync(future).equals(before), 'the newer database was modified')
  const junk = join(dir, 'junk.db')
  writeFileSync(junk, 'not sqlite '.repeat(200))
  throwsCode(() => new Store(junk), 'INVALID_INPUT', 'not an SQLite database')
  throwsCode(() => new Store(join(dir, 'no', 'such', 'dir.db')), 'IO')
})

test('wrong argument types are INVALID_INPUT naming the argument', () => {
  const store = new Store()
  const s = store.createSession({ id: 's' })
  s.append({ actor: 'user', kind: 'text', content: 'x' })
  throwsCode(() => new Store(5), 'INVALID_INPUT', '"path"')
  throwsCode(() => store.createSession('s2'), 'INVALID_INPUT', '"options"')
  throwsCode(() => store.createSession({ id: 5 }), 'INVALID_INPUT', '"id"')
  throwsCode(() => store.createSession({ name: 'x' }), 'INVALID_INPUT', 'unknown option "name"')
  throwsCode(() => store.session(42), 'INVALID_INPUT', '"id"', 'a number')
  throwsCode(() => store.session(), 'INVALID_INPUT', '"id"', 'undefined')
  throwsCode(() => store.deleteSession(null), 'INVALID_INPUT', '"id"')
  throwsCode(() => s.append('not a block'), 'INVALID_INPUT', '"block"', 'a string')
  throwsCode(() => s.append([{ actor: 'user', kind: 'text' }]), 'INVALID_INPUT', '"block"', 'an array')
  throwsCode(() => s.extend({ actor: 'user', kind: 'text' }), 'INVALID_INPUT', '"blocks"')
  throwsCode(() => s.extend([{ actor: 'user', kind: 'text' }, 7]), 'INVALID_INPUT', 'block 1 of the batch')
  throwsCode(() => s.blocksRange('0', 1), 'INVALID_INPUT', '"from"')
  throwsCode(() => s.blocksRange(0, -1), 'INVALID_INPUT', '"to"')
  throwsCode(() => s.blocksRange(0.5, 1), 'INVALID_INPUT', '"from"')
  assert.equal(s.blocksRange(0, Infinity).length, 1)
  throwsCode(() => s.block(1), 'INVALID_INPUT', '"id"')
  throwsCode(() => s.embed({}), 'INVALID_INPUT', '"embedId"')
  throwsCode(() => s.bind('codex', 5, 0), 'INVALID_INPUT', '"nativeId"')
  throwsCode(() => s.bind('codex', 'x', -1), 'INVALID_INPUT', '"throughSeq"')
  throwsCode(() => s.bind(3, 'x', 0), 'INVALID_INPUT', '"runtime"')
  throwsCode(() => s.toNative('codex', 'items'), 'INVALID_INPUT', '"options"')
  throwsCode(() => store.importNative('codex', 42), 'INVALID_INPUT', '"source"')
  throwsCode(() => store.importFile(7), 'INVALID_INPUT', '"path"')
  throwsCode(() => store.importFile('x.jsonl', 7), 'INVALID_INPUT', '"runtime"')
})

test('keys: camelCase for known fields only; unknown keys reach core', () => {
  const s = new Store().createSession()
  throwsCode(() => s.append({ actor: 'user', kind: 'text', colour: 'red' }), 'INVALID_INPUT', 'colour')
  throwsCode(() => s.append({ actor: 'user', kind: 'text', fooBar: 1 }), 'INVALID_INPUT', 'fooBar')
  throwsCode(() => s.append({ actor: 'user', kind: 'text', turn_id: 't' }), 'INVALID_INPUT', 'turn_id', 'turnId')
  throwsCode(() => s.append({ actor: 'assistant', kind: 'tool_use', tool: { call_id: 'c', name: 'x' } }), 'INVALID_INPUT', 'tool.call_id', 'callId')
  throwsCode(() => s.append({ actor: 'user', kind: 'text', tool: { callId: 'c', colour: 1 } }), 'INVALID_INPUT', 'colour')
  throwsCode(() => s.toNative('codex', { target_model: 'x' }), 'INVALID_INPUT', 'targetModel')
  throwsCode(() => s.append({ actor: 'user', kind: 'text', native: { runtime: 'x', data: { f() {} } } }), 'INVALID_INPUT', 'native.data.f', 'function')
  throwsCode(() => s.append({ actor: 'user', kind: 'text', native: { runtime: 'x', data: [1, NaN] } }), 'INVALID_INPUT', 'native.data[1]')
  throwsCode(() => s.append({ actor: 'user', kind: 'text', native: { runtime: 'x', data: Buffer.from('x') } }), 'INVALID_INPUT', 'binary data')
  const cyclic = { runtime: 'x', data: {} }
  cyclic.data.self = cyclic.data
  throwsCode(() => s.append({ actor: 'user', kind: 'text', native: cyclic }), 'INVALID_INPUT', 'nested')
  // native.data and embed ids keep their keys, whatever their case; `__proto__` stays an own key.
  const data = JSON.parse('{"camelKey": {"snake_key": [1.5, null, true]}, "__proto__": {"x": 1}, "n": 9007199254740991}')
  const b = s.append({ actor: 'user', kind: 'text', content: '![a](embed://my_img.ID)', embeds: { 'my_img.ID': { mime: 'image/png', data: new Uint8Array([1, 2]) } }, native: { runtime: 'claude-code', data }, createdAt: '2026-11-30T11:00:00.123+01:00' })
  assert.deepEqual(Object.keys(b.native.data), ['camelKey', '__proto__', 'n'])
  assert.deepEqual(b.native.data.camelKey, { snake_key: [1.5, null, true] })
  assert.equal(Object.getPrototypeOf(b.native.data), Object.prototype)
  assert.equal(b.native.data.n, 9007199254740991)
  assert.deepEqual(Object.keys(b.embeds), ['my_img.ID'])
  assert.equal(b.createdAt, '2026-11-30T10:00:00.123Z')
  assert.deepEqual([...s.embed('my_img.ID')], [1, 2])
  // undefined fields are left out, as JSON.stringify leaves them out.
  assert.equal(s.append({ actor: 'user', kind: 'text', model: undefined, tool: undefined }).model, undefined)
})

test('embeds: Buffer or Uint8Array bytes; stored bytes named by sha256', () => {
  const store = new Store()
  const s = store.createSession()
  throwsCode(() => s.append({ actor: 'user', kind: 'text', content: '![a](embed://a)', embeds: { a: { mime: 'text/plain', data: 'abc' } } }), 'INVALID_INPUT', 'embeds.a.data', 'Buffer or Uint8Array')
  throwsCode(() => s.append({ actor: 'user', kind: 'text', content: '![a](embed://a)', embeds: { a: { mime: 'text/plain', data: new Int16Array(2) } } }), 'INVALID_INPUT', 'embeds.a.data')
  throwsCode(() => s.append({ actor: 'user', kind: 'text', content: '![a](embed://a)', embeds: { a: { mime: 'text/plain' } } }), 'INVALID_INPUT', 'carries no bytes')
  const first = s.append({ actor: 'user', kind: 'text', content: '![a](embed://a)', embeds: { a: { mime: 'text/plain', data: Buffer.from('abc') } } })
  const again = store.createSession().append({ actor: 'user', kind: 'text', content: '![b](embed://b)', embeds: { b: { mime: 'text/plain', sha256: first.embeds.a.sha256 } } })
  assert.equal(again.embeds.b.size, 3)
  assert.equal(store.blobCount(), 1)
  throwsCode(() => s.append({ actor: 'user', kind: 'text', createdAt: new Date(NaN) }), 'INVALID_INPUT', 'invalid Date')
})

test('sessions, bindings and continuations come back in camelCase', () => {
  const store = new Store()
  const s = store.createSession({ id: 's', title: 'T' })
  s.extend([
    { actor: 'user', kind: 'text', content: 'q' },
    { actor: 'assistant', kind: 'text', content: 'a', provider: 'codex', modelProvider: 'openai', model: 'gpt-5.4' },
  ])
  const [info] = store.sessions()
  assert.equal(info.blockCount, 2)
  assert.equal(info.cwd, null)
  assert.deepEqual(info.modelProviders, ['openai'])
  assert.equal(typeof info.createdAt, 'string')
  assert.equal(s.binding('codex'), null)
  const bound = s.bind('codex', 'thread-1', 1)
  assert.equal(bound.nativeId, 'thread-1')
  assert.equal(bound.throughSeq, 1)
  assert.deepEqual(s.binding('codex'), bound)
  s.append({ actor: 'user', kind: 'text', content: 'more' })
  const next = s.continuation('codex')
  assert.equal(next.mode, 'continue')
  assert.equal(next.nativeId, 'thread-1')
  assert.deepEqual(next.pending.map((b) => b.content), ['more'])
  assert.equal(s.continuation('claude-code').mode, 'replay')
  store.deleteSession('s')
  throwsCode(() => s.length, 'NOT_FOUND', 'deleted')
  throwsCode(() => store.deleteSession('s'), 'NOT_FOUND')
})

test('RUNTIMES, ERROR_CODES and formats() agree with the unions of index.d.ts', () => {
  const dts = readFileSync(join(HERE, '..', 'index.d.ts'), 'utf8')
  const union = (name) => {
    const start = dts.indexOf(`export type ${name} =`)
    assert.ok(start >= 0, `no type ${name} in index.d.ts`)
    // The union runs until the first line that does not continue it.
    const lines = dts.slice(start).split('\n')
    const body = [lines[0], ...lines.slice(1).filter((_, i, all) => all.slice(0, i + 1).every((l) => /^\s+\|/.test(l)))]
    return [...body.join('\n').matchAll(/'([^']+)'/g)].map((x) => x[1])
  }
  assert.deepEqual(sna.RUNTIMES, union('Runtime'))
  assert.deepEqual(sna.ERROR_CODES, union('ErrorCode'))
  assert.deepEqual(sna.RUNTIMES.flatMap((rt) => sna.formats(rt)), union('NativeFormat'))
  assert.deepEqual(sna.formats('claude-code'), ['transcript', 'messages'])
  throwsCode(() => sna.formats('gemini'), 'INVALID_INPUT', 'unknown runtime "gemini"')
})

test('conversion calls: INVALID_INPUT for a bad runtime, format or option', (t) => {
  const dir = tmp(t)
  const file = join(dir, 'native.jsonl')
  writeFileSync(file, '{}\n')
  const store = new Store()
  const s = store.createSession()
  s.append({ actor: 'user', kind: 'text', content: 'hi' })
  throwsCode(() => store.importFile(file), 'INVALID_INPUT', 'could not detect the runtime')
  for (const call of [
    () => s.toNative('gemini'),
    () => s.export('gemini'),
    () => s.ingest('gemini', {}),
    () => s.prepareResume('gemini'),
    () => s.binding('gemini'),
    () => s.continuation('gemini'),
    () => store.importNative('gemini', '{}'),
    () => store.importFile(file, 'gemini'),
  ]) throwsCode(call, 'INVALID_INPUT', 'unknown runtime "gemini"')
  throwsCode(() => s.toNative('claude-code', { format: 'rollout' }), 'INVALID_INPUT', 'unknown format "rollout"')
  throwsCode(() => s.export('codex', { format: 'transcript' }), 'INVALID_INPUT', 'unknown format "transcript"')
  throwsCode(() => s.prepareResume('opencode', { format: 'items', home: dir }), 'INVALID_INPUT', 'unknown format "items"')
  throwsCode(() => s.toNative('codex', { fromat: 'items' }), 'INVALID_INPUT', 'unknown option "fromat"')
  throwsCode(() => s.export('codex', { strict: 'yes' }), 'INVALID_INPUT', 'strict')
  throwsCode(() => s.prepareResume('codex', { home: 5 }), 'INVALID_INPUT', 'home')
  throwsCode(() => s.prepareResume('codex', { colour: 1 }), 'INVALID_INPUT', 'unknown option "colour"')
  throwsCode(() => store.importNative('codex', '{}', { sessionId: '' }), 'INVALID_INPUT', 'session id')
  throwsCode(() => store.importNative('codex', '{}', { bogus: true }), 'INVALID_INPUT', 'unknown option "bogus"')
  throwsCode(() => s.ingest('codex', 'not an event'), 'INVALID_INPUT', 'object')
  throwsCode(() => store.importFile(join(dir, 'missing.jsonl'), 'codex'), 'IO')
  throwsCode(() => store.importFile(dir, 'codex'), 'INVALID_INPUT', 'directory')
})

test('a panic becomes an INTERNAL Error and the process goes on', () => {
  throwsCode(() => sna.__panicForTests(), 'INTERNAL', 'deliberate panic')
  throwsCode(() => sna.__panicForTests(), 'INTERNAL', 'panic in the Node binding')
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

test('native data keeps every character (escaped for JSON.parse when mostly ASCII, UTF-8 otherwise)', () => {
  const few = `${'plain ascii text '.repeat(40)}héllo 😀 \u2028 "quoted" \\ \u0000 ✓`
  const many = '日本語のテキスト😀'.repeat(50)
  for (const text of [few, many]) {
    const session = new Store().createSession()
    session.append({ actor: 'user', kind: 'text', content: text })
    const [message] = session.toNative('claude-code', { format: 'messages' }).messages
    const content = typeof message.content === 'string' ? message.content : message.content[0].text
    assert.equal(content, text)
    assert.equal(session.blocks()[0].content, text)
  }
})

test('option keys are renamed only where they are that call\'s keys; others are named as written', () => {
  const store = new Store()
  const s = store.createSession()
  // A key of another call is not renamed: core names it as it was written.
  throwsCode(() => s.toNative('codex', { configDir: '/x' }), 'INVALID_INPUT', 'unknown option "configDir"')
  throwsCode(() => store.createSession({ sessionId: 'x' }), 'INVALID_INPUT', 'unknown option "sessionId" (expected one of: id, title, cwd)')
  throwsCode(() => s.append({ actor: 'user', kind: 'text', isError: true }), 'INVALID_INPUT', 'isError')
  // A key of this call in core's spelling is refused with its JavaScript name.
  throwsCode(() => s.prepareResume('codex', { codex_home: '/x' }), 'INVALID_INPUT', 'its JavaScript name is "codexHome"')
  // A known key with a bad value: core's message, the same as Python's.
  throwsCode(() => s.prepareResume('codex', { codexHome: 7 }), 'INVALID_INPUT', 'bad value for option "codex_home"')
})

test('redact keeps secrets out of exports', () => {
  const s = new Store().createSession()
  const key = 'sk-ant-api03-abcDEF1234567890_abcdefghijklmnopqrstuvwxyz-AAAA'
  s.append({ actor: 'user', kind: 'text', content: `key ${key}` })
  const exported = s.export('codex', { redact: true })
  assert.ok(!JSON.stringify(exported.data).includes(key))
  assert.deepEqual(exported.report.entries.map((e) => e.action), ['redacted'])
  assert.ok(JSON.stringify(s.toNative('codex')).includes(key))
})

test('scanSecrets and redactInPlace', () => {
  const s = new Store().createSession()
  const token = 'ghp_1234567890abcdefghijklmnopqrstuvwxyzAB'
  s.append({ actor: 'user', kind: 'text', content: `GITHUB_TOKEN=${token}` })
  const [found] = s.scanSecrets()
  assert.equal(found.kind, 'github-token')
  assert.equal(found.seq, 0)
  assert.ok(!found.preview.includes(token))
  assert.deepEqual(s.redactInPlace().entries.map((e) => e.action), ['redacted'])
  assert.equal(s.blocks()[0].content, 'GITHUB_TOKEN=[REDACTED:github-token]')
  assert.deepEqual(s.scanSecrets(), [])
})
