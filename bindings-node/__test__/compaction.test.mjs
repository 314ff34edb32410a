// Compactions and the context budget: session.compactions(), the compaction, contextWindow and
// models options, and a JavaScript summarizer (awaited by exportAsync and prepareResumeAsync).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Store } = require('../index.js')
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const COMPACT = join(ROOT, 'tests', 'fixtures', 'claude-code', 'compact')
const MODEL = { provider: 'claude-code', modelProvider: 'anthropic', model: 'claude-opus-4-5' }

function tmp(t) {
  const dir = mkdtempSync(join(tmpdir(), 'sna-node-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** The runtime's own transcript of a fixture set (not its events or the mock's requests). */
function transcript(dir) {
  const [name, ...more] = readdirSync(dir).filter((n) => n.endsWith('.jsonl') && !['events.jsonl', 'requests.jsonl'].includes(n))
  assert.equal(more.length, 0)
  return join(dir, name)
}

/** `turns` turns built through the API, each a prompt, a tool call, its result (`size` bytes) and
 * an answer, attributed to Claude Code: far over a 100,000-token window. */
function longSession(store, turns = 100, size = 12_000) {
  const session = store.createSession({ id: 'long', cwd: '/home/dev/project' })
  const blocks = []
  for (let i = 0; i < turns; i++) {
    const callId = `toolu_${String(i).padStart(4, '0')}`
    blocks.push({ actor: 'user', kind: 'text', content: `PROMPT-${i}: look at part ${i} of the log` })
    blocks.push({ actor: 'assistant', kind: 'tool_use', content: JSON.stringify({ command: `sed -n ${i}p log` }), tool: { callId, name: 'Bash' }, ...MODEL })
    blocks.push({ actor: 'user', kind: 'tool_result', content: `${i} `.repeat(size / 2), tool: { callId, isError: false } })
    blocks.push({ actor: 'assistant', kind: 'text', content: `ANSWER-${i}`, ...MODEL })
  }
  session.extend(blocks)
  return session
}

function isCode(code, ...needles) {
  return (err) => {
    assert.ok(err instanceof Error, `${err}`)
    assert.equal(err.code, code, err.message)
    for (const needle of needles) assert.ok(err.message.includes(needle), `${err.message} lacks ${needle}`)
    return true
  }
}

test('compactions of an imported compacted transcript', () => {
  const session = new Store().importFile(transcript(COMPACT))
  const list = session.compactions()
  assert.equal(list.length, 1)
  const [c] = list
  assert.equal(c.runtime, 'claude-code')
  assert.equal(c.trigger, 'manual')
  assert.ok(c.boundarySeq < c.summarySeq, JSON.stringify(c))
  assert.ok(c.preserved.length > 0 && c.preserved.every((seq) => seq < c.boundarySeq))
  assert.ok(c.summary.includes('SUMMARY-MARKER'))
  assert.ok(session.blocks()[c.summarySeq].content.includes('SUMMARY-MARKER'))
  assert.ok(c.tokensBefore === undefined || c.tokensBefore > 0)
  assert.equal(c.createdAt, session.blocks()[c.boundarySeq].createdAt)
  assert.deepEqual(Object.keys(c).filter((k) => k.includes('_')), [], 'camelCase keys')
  assert.deepEqual(new Store().createSession().compactions(), [])
})

test('the compaction option chooses where a replay starts', () => {
  const session = new Store().importFile(transcript(COMPACT))
  const latest = session.export('codex', { compaction: 'latest' })
  assert.equal(latest.report.entries.filter((e) => e.action === 'compacted').length, 1)
  assert.deepEqual(session.export('codex').report, latest.report, 'latest is the default')
  const whole = session.export('codex', { compaction: 'none' })
  assert.ok(!whole.report.entries.some((e) => e.action === 'compacted'))
  assert.ok(JSON.stringify(whole.data).length > JSON.stringify(latest.data).length)
  assert.throws(() => session.export('codex', { compaction: 'oldest' }), (err) => isCode('INVALID_INPUT', 'compaction')(err) && err.field === 'compaction')
  assert.throws(() => session.toNative('codex', { contextWindow: 0 }), (err) => isCode('INVALID_INPUT', 'above 0')(err) && err.field === 'context_window')
  assert.throws(() => session.toNative('codex', { context_window: 1000 }), isCode('INVALID_INPUT', 'contextWindow'))
})

test('a replay over its window folds whole turns into the digest', () => {
  const session = longSession(new Store())
  const exported = session.export('codex', { contextWindow: 100_000 })
  const text = JSON.stringify(exported.data)
  assert.ok(text.includes('PROMPT-99') && text.includes('ANSWER-99') && !text.includes('PROMPT-0:'))
  assert.ok(text.includes('are in the history store: session long, seq 0'))
  assert.equal(exported.report.entries[0].action, 'degraded')
  assert.ok(exported.report.entries[0].message.includes('folded into one summary to fit the context budget of'))
  assert.throws(() => session.export('codex', { contextWindow: 100_000, strict: true }), isCode('LOSSY', 'context budget of'))
})

test('a model file bounds a model the table does not know', (t) => {
  const dir = tmp(t)
  const session = longSession(new Store())
  assert.ok(session.toNativeText('codex', { targetModel: 'mock-model' }).includes('PROMPT-0:'))
  const models = join(dir, 'models.json')
  writeFileSync(models, JSON.stringify({ models: { 'mock-model': { context_window: 100_000, max_input: 100_000, max_output: 8_000 } } }))
  const exported = session.export('codex', { targetModel: 'mock-model', models })
  assert.ok(!JSON.stringify(exported.data).includes('PROMPT-0:'))
  assert.ok(exported.report.entries[0].message.includes('mock-model in the model table of'))
  assert.throws(() => session.export('codex', { targetModel: 'mock-model', models: join(dir, 'missing.json') }),
    (err) => isCode('INVALID_INPUT', 'cannot read the model file')(err) && err.field === 'models')
})

test('an async summarizer gets whole turns and writes the fold', async (t) => {
  const dir = tmp(t)
  const session = longSession(new Store())
  const seen = []
  const summarizer = async (blocks) => {
    seen.push(blocks)
    await new Promise((resolve) => setTimeout(resolve, 5))
    // Called on the JavaScript thread: it may use the API, the same session included.
    assert.ok(session.blocksRange(0, 1)[0].content.startsWith('PROMPT-0:'))
    return `MY-SUMMARY of ${blocks.length} blocks`
  }
  const exported = await session.exportAsync('codex', { contextWindow: 100_000, summarizer })
  assert.equal(seen.length, 1)
  const [folded] = seen
  assert.ok(folded.length >= 4 && folded.length % 4 === 0, 'whole turns')
  assert.deepEqual(folded.map((b) => b.seq), [...folded.keys()])
  assert.ok(folded[0].content.startsWith('PROMPT-0:') && folded[0].createdAt && folded[1].tool.callId === 'toolu_0000', 'camelCase blocks')
  assert.equal(folded.at(-1).content, `ANSWER-${folded.length / 4 - 1}`)
  const text = JSON.stringify(exported.data)
  assert.ok(text.includes(`MY-SUMMARY of ${folded.length} blocks`) && !text.includes('in the history store'))
  assert.ok(text.includes(`PROMPT-${folded.length / 4}:`), 'the first turn not folded is replayed whole')
  assert.equal(exported.report.entries[0].action, 'degraded')
  // A plain function returning a string will do too.
  const plain = await session.exportAsync('codex', { contextWindow: 100_000, summarizer: (blocks) => `PLAIN ${blocks.length}` })
  assert.ok(JSON.stringify(plain.data).includes(`PLAIN ${folded.length}`))
  // Without a summarizer, exportAsync is export on a worker thread.
  assert.deepEqual(await session.exportAsync('codex', { contextWindow: 100_000 }), session.export('codex', { contextWindow: 100_000 }))
  const home = join(dir, 'home')
  const plan = await session.prepareResumeAsync('codex', { home, contextWindow: 100_000, summarizer })
  assert.ok(readFileSync(plan.files[0], 'utf8').includes('MY-SUMMARY'))
  assert.equal(session.binding('codex').nativeId, plan.sessionId)
})

test('what a summarizer throws rejects the Promise and nothing is written', async (t) => {
  const dir = tmp(t)
  const session = longSession(new Store())
  const quota = new RangeError('the summarizer is out of quota')
  const rejected = (err) => {
    isCode('INVALID_INPUT', 'the summarizer is out of quota')(err)
    assert.equal(err.field, 'summarizer')
    assert.equal(err.cause, quota, 'the cause is what was thrown')
    return true
  }
  await assert.rejects(session.exportAsync('codex', { contextWindow: 100_000, summarizer: async () => { throw quota } }), rejected)
  await assert.rejects(session.exportAsync('codex', { contextWindow: 100_000, summarizer: () => { throw quota } }), rejected)
  await assert.rejects(session.exportAsync('codex', { contextWindow: 100_000, summarizer: () => Promise.reject(quota) }), rejected)
  await assert.rejects(session.exportAsync('codex', { contextWindow: 100_000, summarizer: () => { throw 'boom' } }), isCode('INVALID_INPUT', 'boom'))
  const home = join(dir, 'home')
  await assert.rejects(session.prepareResumeAsync('codex', { home, contextWindow: 100_000, summarizer: async () => { throw quota } }), rejected)
  assert.ok(!existsSync(home), 'nothing is written')
  assert.equal(session.binding('codex'), null, 'no binding recorded')
  // A summarizer that answers something else than a string.
  for (const answer of [42, Promise.resolve(42), null]) {
    await assert.rejects(session.exportAsync('codex', { contextWindow: 100_000, summarizer: () => answer }),
      (err) => isCode('INVALID_INPUT', 'must return a string or a Promise of one')(err) && err.field === 'summarizer')
  }
  // A replay that fits never calls it.
  await session.exportAsync('codex', { summarizer: () => { throw quota } })
})

test('a summarizer is a function, and the synchronous calls refuse it', () => {
  const session = longSession(new Store(), 40)
  const summarizer = async () => 'never'
  const sync = [
    () => session.export('codex', { contextWindow: 100_000, summarizer }),
    () => session.toNative('codex', { summarizer }),
    () => session.toNativeText('codex', { summarizer }),
    () => session.exportTo(join(tmpdir(), 'never-written.jsonl'), 'codex', { summarizer }),
    () => session.prepareResume('codex', { home: join(tmpdir(), 'never-written'), summarizer }),
  ]
  for (const call of sync) {
    assert.throws(call, (err) => isCode('INVALID_INPUT', 'exportAsync', 'prepareResumeAsync')(err) && err.field === 'summarizer')
  }
  assert.ok(!existsSync(join(tmpdir(), 'never-written.jsonl')))
  assert.throws(() => session.exportAsync('codex', { summarizer: 'summarize' }),
    (err) => isCode('INVALID_INPUT', 'expected a function')(err) && err.field === 'summarizer')
  // null and undefined are no summarizer.
  session.export('codex', { summarizer: null })
  session.export('codex', { summarizer: undefined })
})
