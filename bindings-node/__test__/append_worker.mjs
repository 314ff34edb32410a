// Appends N blocks to one session, one transaction each, with content `${TAG}-${i}`:
//   node append_worker.mjs DB SESSION N TAG
// The cross-language concurrency test (tests/concurrency) runs it beside Rust and Python writers.
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
  const session = store.session(sessionId)
  for (let i = 0; i < count; i++) session.append({ actor: 'user', kind: 'text', content: `${tag}-${i}` })
  store.close()
} catch (err) {
  console.error(`append_worker.mjs: ${err.code ?? 'ERROR'}: ${err.message}`)
  process.exit(1)
}
