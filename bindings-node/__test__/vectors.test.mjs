// The shared vectors of tests/vectors/, run against the Node API (the same files as the Rust and
// Python runners). Vector inputs are snake_case: this runner turns them into the binding's
// camelCase, and the binding's results back, before matching.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { camelKey, snakeKey, convertKeys } from './keys.mjs'
import { withDatabase } from './pgdb.mjs'

const require = createRequire(import.meta.url)
const { Store } = require('../index.js')
const VECTORS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'vectors')

function blockInput(block) {
  const out = convertKeys(block, camelKey)
  if (out.embeds) {
    for (const embed of Object.values(out.embeds)) {
      if ('dataBase64' in embed) {
        embed.data = Buffer.from(embed.dataBase64, 'base64')
        delete embed.dataBase64
      }
    }
  }
  return out
}

const back = (value) => convertKeys(value, snakeKey)

function mismatch(expected, actual, path, present = true) {
  if (expected && typeof expected === 'object' && !Array.isArray(expected) && Object.keys(expected).length === 1) {
    if (expected.$absent === true) return present && actual !== undefined ? `${path}: expected no value, got ${JSON.stringify(actual)}` : null
    if ('$contains' in expected) {
      return present && typeof actual === 'string' && actual.includes(expected.$contains) ? null : `${path}: expected a string containing ${expected.$contains}, got ${JSON.stringify(actual)}`
    }
  }
  if (!present || actual === undefined) return `${path}: missing, expected ${JSON.stringify(expected)}`
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return `${path}: expected ${expected.length} elements, got ${JSON.stringify(actual)}`
    for (let i = 0; i < expected.length; i++) {
      const p = mismatch(expected[i], actual[i], `${path}[${i}]`)
      if (p) return p
    }
    return null
  }
  if (expected && typeof expected === 'object') {
    if (!actual || typeof actual !== 'object') return `${path}: expected an object, got ${JSON.stringify(actual)}`
    for (const [k, v] of Object.entries(expected)) {
      const p = mismatch(v, actual[k], `${path}.${k}`, k in actual)
      if (p) return p
    }
    return null
  }
  // A missing optional field arrives as null from some calls; the vectors only name present ones.
  return expected === actual ? null : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`
}

function runStep(store, step) {
  switch (step.op) {
    case 'create_session':
      return { id: store.createSession({ id: step.id, title: step.title, cwd: step.cwd }).id }
    case 'session':
      return { id: store.session(step.session).id }
    case 'sessions':
      return back(store.sessions())
    case 'delete_session':
      return store.deleteSession(step.session) ?? null
    case 'import_native': {
      const options = step.options ? convertKeys(step.options, camelKey) : undefined
      const session = store.importNative(step.runtime, step.source, options)
      return { id: session.id, length: session.length }
    }
  }
  const session = store.session(step.session)
  switch (step.op) {
    case 'append': return back(session.append(blockInput(step.block)))
    case 'extend': return back(session.extend(step.blocks.map(blockInput)))
    case 'blocks':
      return back('from' in step || 'to' in step ? session.blocksRange(step.from ?? 0, step.to ?? Number.MAX_SAFE_INTEGER) : session.blocks())
    case 'block': return back(session.block(step.id))
    case 'embed': return { base64: session.embed(step.embed_id).toString('base64') }
    case 'switches': return back(session.switches())
    case 'bind': return back(session.bind(step.runtime, step.native_id, step.through_seq))
    case 'continuation': return back(session.continuation(step.runtime))
    case 'to_native': return session.toNative(step.runtime, step.options ? convertKeys(step.options, camelKey) : undefined)
    case 'prepare_resume': {
      const home = mkdtempSync(join(tmpdir(), 'sna-vector-'))
      try {
        return back(session.prepareResume(step.runtime, { home, ...convertKeys(step.options ?? {}, camelKey) }))
      } finally {
        rmSync(home, { recursive: true, force: true })
      }
    }
    default: throw new Error(`unknown op ${step.op}`)
  }
}

const files = readdirSync(VECTORS).filter((f) => f.endsWith('.json')).sort()

test('the shared vectors are there', () => assert.ok(files.length >= 4))

for (const file of files) {
  test(`vector ${file}`, () => runVector(file, new Store()))
  test(`vector ${file} on PostgreSQL`, () =>
    withDatabase('nodevec', (url) => {
      const store = new Store(url)
      // The store names its server without the password, and has no file.
      assert.ok(store.url.startsWith('postgres://') && !store.url.includes('@'), store.url)
      assert.equal(store.path, null)
      try {
        runVector(file, store)
      } finally {
        store.close()
      }
    }))
}

function runVector(file, store) {
  const c = JSON.parse(readFileSync(join(VECTORS, file), 'utf8'))
  c.steps.forEach((step, i) => {
    const at = `${file} step ${i} (${step.op})`
    if (step.expect_error) {
      assert.throws(() => runStep(store, step), (err) => {
        assert.ok(err instanceof Error, at)
        assert.equal(err.code, step.expect_error.code, `${at}: ${err.message}`)
        for (const needle of step.expect_error.contains ?? []) assert.ok(err.message.includes(needle), `${at}: ${err.message} lacks ${needle}`)
        if (step.expect_error.at) {
          for (const key of ['line', 'offset', 'index', 'field']) {
            assert.equal(err[key], step.expect_error.at[key], `${at}: location ${key} of ${err.message}`)
          }
        }
        return true
      }, at)
    } else {
      const result = runStep(store, step)
      if ('expect' in step) {
        const problem = mismatch(step.expect, result, 'result')
        assert.equal(problem, null, `${at}: ${problem}`)
      }
    }
  })
}

test('the matcher rejects what it should', () => {
  assert.ok(mismatch({ a: 1 }, { a: 2 }, 'r'))
  assert.ok(mismatch([1], [1, 2], 'r'))
  assert.ok(mismatch({ a: { $absent: true } }, { a: 1 }, 'r'))
  assert.ok(mismatch({ a: { $contains: 'xy' } }, { a: 'x' }, 'r'))
  assert.equal(mismatch({ a: 1 }, { a: 1, b: 2 }, 'r'), null)
})
