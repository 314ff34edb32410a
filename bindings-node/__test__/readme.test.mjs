// The README's JavaScript snippets run here, so they cannot rot, and the concurrency helper
// script behaves as the cross-language test expects (exit 0, or exit 1 with the error on stderr).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
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

function snippets() {
  const readme = readFileSync(join(HERE, '..', 'README.md'), 'utf8')
  return [...readme.matchAll(/```js\n([^]*?)```/g)].map((m) => m[1])
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
