// The Node driver of the conformance suite (README.md here): runs one job through the Node
// binding and prints the result in the serialized (snake_case) form, as the Rust and Python
// drivers do. Usage: node job.mjs <job.json>
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { convertKeys, snakeKey, camelKey } from '../../../bindings-node/__test__/keys.mjs'

const require = createRequire(import.meta.url)
const { Store } = require('../../../bindings-node/index.js')

function run(job) {
  const session = new Store().importFile(job.import.path, job.import.runtime ?? null)
  const blocks = session.blocks()
  const embeds = {}
  for (const block of blocks) {
    for (const id of Object.keys(block.embeds ?? {})) embeds[id] = session.embed(id).toString('base64')
  }
  const result = { session_id: session.id, blocks: convertKeys(blocks, snakeKey), embeds }
  if (job.export) {
    const options = convertKeys(job.export.options ?? {}, camelKey)
    const { data, report } = session.export(job.export.runtime, options)
    result.export = { data, report: convertKeys(report, snakeKey) }
    result.export_again = session.export(job.export.runtime, options).data
  }
  if (job.resume) {
    const plan = session.prepareResume(job.resume.runtime, convertKeys(job.resume.options ?? {}, camelKey))
    // `env` names environment variables: its keys stay as they are.
    result.plan = { session_id: plan.sessionId, files: plan.files, argv: plan.argv, cwd: plan.cwd, env: plan.env, setup: plan.setup, ran: plan.ran }
  }
  return result
}

const path = process.argv[2]
if (!path) {
  console.error('usage: node job.mjs <job.json>')
  process.exit(2)
}
try {
  process.stdout.write(JSON.stringify(run(JSON.parse(readFileSync(path, 'utf8')))) + '\n')
} catch (err) {
  console.error(`job.mjs: ${err.code ?? 'ERROR'}: ${err.message}`)
  process.exit(1)
}
