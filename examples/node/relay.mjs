// The examples' scenario (see examples/README.md) in Node: record a Claude Code run and a switch
// to Codex as a host would, export for Codex, prepare the resume.
import { readFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Store } = require('../../bindings-node/index.js')
const DATA = join(dirname(fileURLToPath(import.meta.url)), '..', 'data')
const events = (name) => readFileSync(join(DATA, name), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))

const store = new Store()
const session = store.createSession({ id: '0193c5a0-0000-7000-8000-00000000e001', title: 'Relay example', cwd: '/home/dev/project' })
for (const event of events('claude-stream.jsonl')) session.ingest('claude-code', event)
session.append({ actor: 'user', kind: 'text', content: 'List the files in this project.' })
for (const event of events('codex-exec.jsonl')) session.ingest('codex', event)

const info = session.info()
console.log(`session ${info.id} "${info.title ?? ''}": ${info.blockCount} blocks`)
for (const s of session.switches()) {
  const who = [s.to.provider, s.to.modelProvider, s.to.model].filter(Boolean)
  console.log(`at block ${s.seq}: ${who.join(' ')}`)
}
const options = { modelProvider: 'openai', targetModel: 'gpt-5.5' }
const { data, report } = session.export('codex', options)
console.log(`codex items: ${data.length}`)
for (const entry of report.entries) console.log(`  ${entry.action}: ${entry.message}`)
const home = mkdtempSync(join(tmpdir(), `sna-example-node-${process.pid}-`))
try {
  const plan = session.prepareResume('codex', { home, cwd: '/home/dev/project', ...options })
  console.log(`resume: ${plan.argv.join(' ')}`)
} finally {
  rmSync(home, { recursive: true, force: true })
}
store.close()
