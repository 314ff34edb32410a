// Appends N blocks to one session, one transaction each: `node append_worker.mjs DB SESSION N TAG`.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Store } = require('../index.js')

const [db, sessionId, n, tag] = process.argv.slice(2)
try {
  const store = new Store(db)
  const session = store.session(sessionId)
  for (let i = 0; i < Number(n); i++) session.append({ actor: 'user', kind: 'text', content: `${tag}-${i}` })
  store.close()
} catch (err) {
  console.error(`append_worker.mjs: ${err.code} ${err.message}`)
  process.exit(1)
}
