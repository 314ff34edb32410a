// Appends N blocks to one session, one transaction each, with content `${TAG}-${i}`:
//   node append_worker.mjs DB SESSION N TAG
// SESSION `PREFIX*K` spreads the blocks over sessions PREFIX0 … PREFIX{K-1}, block i to session
// (i + a per-tag offset) mod K. DB is a file or a postgres:// URL. The concurrency tests
// (tests/concurrency) run it beside Rust and Python writers.
// Exits 0 when every block was appended; otherwise prints the error to stderr and exits 1.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

const args = process.argv.slice(2)
const count = Number(args[2])
if (args.length !== 4 || !Number.isSafeInteger(count) || count < 0) {
  console.error('usage: node append_worker.mjs DB SESSION N TAG (N a non-negative integer)')
  process.exit(1)
}
const [db, sessionId, , tag] = args

try {
  const { Store } = require('../index.js')
  const store = new Store(db)
  const [prefix, spread] = sessionId.includes('*') ? sessionId.split('*') : [sessionId, null]
  const sessions = spread === null ? [store.session(prefix)] : Array.from({ length: Number(spread) }, (_, k) => store.session(`${prefix}${k}`))
  const offset = [...tag].reduce((sum, c) => sum + c.charCodeAt(0), 0)
  for (let i = 0; i < count; i++) {
    sessions[(i + offset) % sessions.length].append({ actor: 'user', kind: 'text', content: `${tag}-${i}` })
  }
  store.close()
} catch (err) {
  console.error(`append_worker.mjs: ${err.code ?? 'ERROR'}: ${err.message}`)
  process.exit(1)
}
