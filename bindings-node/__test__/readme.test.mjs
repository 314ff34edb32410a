// The JavaScript snippets of the READMEs and of every page under docs/ run here, so they cannot rot,
// and the concurrency helper script behaves as the cross-language test expects (exit 0, or exit 1
// with the error on stderr).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, readFileSync, readdirSync, copyFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const HERE = dirname(fileURLToPath(import.meta.url))
const INDEX = join(HERE, '..', 'index.js')
const { Store } = require(INDEX)

function tmp(t) {
  const dir = mkdtempSync(join(tmpdir(), 'sna-node-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const ROOT = join(HERE, '..', '..')
const FIXTURES = join(ROOT, 'tests', 'fixtures')

function jsBlocks(file) {
  return [...readFileSync(file, 'utf8').matchAll(/```js\n([^]*?)```/g)].map((m) => m[1])
}

// This package's README, whose snippets the tests below take by position.
function snippets() {
  return jsBlocks(join(HERE, '..', 'README.md'))
}

// Every Markdown page under docs/.
function docPages(dir = join(ROOT, 'docs')) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? docPages(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [])
}

// What a page's snippets print, beyond running without an error.
const EXPECTED = {
  'docs/getting-started.md': [/^14 rollout lines; dropped, dropped$/m],
}

// The files the doc snippets name, as a user would have them.
function stage(dir) {
  const claude = join(FIXTURES, 'claude-code', 'tools-thinking')
  const transcript = readdirSync(claude).find((n) => /^[0-9a-f-]{36}\.jsonl$/.test(n))
  copyFileSync(join(claude, transcript), join(dir, 'transcript.jsonl'))
}

// Runs a snippet in a child process in `cwd`, with `require('sna-history')` resolving to this checkout.
function run(code, cwd, prelude = '') {
  const script = `const Module = require('node:module')
const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  return resolve.call(this, request === 'sna-history' ? ${JSON.stringify(INDEX)} : request, ...rest)
}
${prelude}
${code}`
  return spawnSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8' })
}

test('the README quickstart runs', (t) => {
  const dir = tmp(t)
  const [quickstart] = snippets()
  const out = run(quickstart, dir)
  assert.equal(out.status, 0, out.stderr)
  assert.match(out.stdout, /^0 user text Why does parse\(\) fail\?/m)
  assert.match(out.stdout, /^1 assistant tool_use/m)
  assert.match(out.stdout, /^EOF$/m)
  assert.match(out.stdout, /^continue$/m)
  assert.equal(new Store(join(dir, 'history.db')).sessions()[0].title, 'Fix the parser')
})

test('the main README quickstart runs', (t) => {
  const dir = tmp(t)
  const [quickstart] = jsBlocks(join(ROOT, 'README.md'))
  const out = run(quickstart, dir)
  assert.equal(out.status, 0, out.stderr)
  assert.match(out.stdout, /^0 user text Why does parse\(\) fail\?$/m)
  assert.match(out.stdout, /^2 user tool_result 1 failed$/m)
  assert.equal(new Store(join(dir, 'history.db')).sessions()[0].title, 'Fix the parser')
})

test('every docs page runs its JavaScript snippets', (t) => {
  const pages = docPages().filter((p) => jsBlocks(p).length > 0)
  assert.ok(pages.length > 0, 'no docs page has a js snippet')
  for (const page of pages) {
    const name = relative(ROOT, page)
    assert.ok(name in EXPECTED, `${name}: add what its snippets print to EXPECTED`)
    const dir = tmp(t)
    stage(dir)
    const out = jsBlocks(page).map((code) => run(code, dir))
    for (const o of out) assert.equal(o.status, 0, `${name}: ${o.stderr}`)
    for (const expected of EXPECTED[name]) assert.match(out.map((o) => o.stdout).join(''), expected, name)
  }
})

test('the README error and worker snippets run', (t) => {
  const dir = tmp(t)
  const [, errors, worker] = snippets()
  // Each `expression   // value` line of the snippet becomes an assertion that the expression is the value.
  const checked = errors.replace(/^(\s*)(\S.*?)\s+\/\/ (.*)$/gm, (_, indent, expr, v) => `${indent}assert.deepEqual(${expr}, ${v})`)
  assert.equal((checked.match(/assert\.deepEqual/g) ?? []).length, 4)
  const errorRun = run(`${checked}; assert.ok(thrown === 2)`.replace(/\} catch \(err\) \{/g, '} catch (err) { thrown += 1;'), dir,
    "const assert = require('node:assert/strict'); const store = new (require('sna-history').Store)(); const session = store.createSession(); let thrown = 0")
  assert.equal(errorRun.status, 0, errorRun.stderr)
  new Store(join(dir, 'w.db')).createSession({ id: 's' })
  const workerRun = run(worker, dir, `const workerData = { path: ${JSON.stringify(join(dir, 'w.db'))}, sessionId: 's' }`)
  assert.equal(workerRun.status, 0, workerRun.stderr)
  assert.equal(new Store(join(dir, 'w.db')).session('s').length, 1)
})

test('append_worker.mjs appends N blocks, or exits 1 with the error on stderr', (t) => {
  const dir = tmp(t)
  const db = join(dir, 'a.db')
  new Store(db).createSession({ id: 's' })
  const worker = join(HERE, 'append_worker.mjs')
  const ok = spawnSync(process.execPath, [worker, db, 's', '25', 'node'], { encoding: 'utf8' })
  assert.equal(ok.status, 0, ok.stderr)
  assert.deepEqual(new Store(db).session('s').blocks().map((b) => b.content), [...Array(25).keys()].map((i) => `node-${i}`))
  const missing = spawnSync(process.execPath, [worker, db, 'nope', '1', 'node'], { encoding: 'utf8' })
  assert.equal(missing.status, 1)
  assert.match(missing.stderr, /NOT_FOUND/)
  const usage = spawnSync(process.execPath, [worker, db, 's'], { encoding: 'utf8' })
  assert.equal(usage.status, 1)
  assert.match(usage.stderr, /usage/)
})
