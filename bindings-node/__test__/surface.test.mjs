// Parity: the Node binding exposes core's API list (tests/api/surface.json) in camelCase.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const sna = require('../index.js')
const SURFACE = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'api', 'surface.json'), 'utf8'))
const camel = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase())
const members = (cls) => new Set(Object.getOwnPropertyNames(cls.prototype).filter((n) => n !== 'constructor'))
// The methods the idioms' Node spellings name on an instance of `cls` (`session.exportAsync(`).
const spelled = (cls) => {
  const call = new RegExp(`\\b${cls[0].toLowerCase()}${cls.slice(1)}\\.(\\w+)\\(`, 'g')
  return new Set(Object.values(SURFACE.idioms).flatMap((idiom) => [...idiom.node.matchAll(call)].map((m) => m[1])))
}

test('every core call is in Node, camelCased, and nothing else is public', () => {
  for (const cls of ['Store', 'Session', 'Host', 'Agent']) {
    const have = members(sna[cls])
    const want = new Set([...SURFACE[cls].map(camel), ...spelled(cls)])
    assert.deepEqual([...want].filter((n) => !have.has(n)), [], `${cls}: missing`)
    const extra = [...have].filter((n) => !want.has(n) && !['closed', 'length'].includes(n))
    assert.deepEqual(extra, [], `${cls}: beyond the list`)
  }
  assert.deepEqual([...spelled('Session')].sort(), ['exportAsync', 'exportTo', 'prepareResumeAsync'])
  assert.ok(members(sna.Session).has('length'))
  assert.equal(typeof sna.formats, 'function')
  assert.deepEqual(sna.RUNTIMES, ['claude-code', 'codex', 'opencode', 'gemini-cli', 'pi', 'qwen-code', 'copilot-cli'])
})
