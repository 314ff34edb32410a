// The host scenario (see examples/README.md) in Node: run Claude Code for a session turn by turn,
// survive a killed process, switch to Codex. Needs the runtimes' CLIs and where their models are
// (tests/conformance/test_host.py runs it against the pinned CLIs and mock models):
//   node host.mjs <claude> <codex> <home> <project> <database>
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Store, Host } = require('../../bindings-node/index.js')

const [claude, codex, home, project, database] = process.argv.slice(2)
const store = new Store(database)
const host = new Host(store, { bins: { 'claude-code': claude, codex }, home })
try {
  const agent = await host.start('host-example', { runtime: 'claude-code', model: 'claude-opus-5-5', cwd: project })
  const texts = ['Remember the word teal.', 'Which word was it?']
  for (const [i, text] of texts.entries()) {
    const turn = await agent.send(text, { timeout: 300000 })
    console.log(`turn ${i + 1}: ${turn.text} (resumed: ${turn.resumedVia ?? 'no'})`)
  }
  await agent.kill()
  let turn = await agent.send('And after a restart?', { timeout: 300000 })
  console.log(`after kill: ${turn.text} (resumed: ${turn.resumedVia}), processes started: ${agent.status().spawns}`)
  await agent.switch('codex')
  turn = await agent.send('Now in Codex: which word?', { timeout: 300000 })
  console.log(`in codex: ${turn.text} (resumed: ${turn.resumedVia})`)
  const said = agent.session.blocks().filter((b) => b.actor !== 'system' && ['text', 'tool_use', 'tool_result'].includes(b.kind))
  const runs = agent.session.switches().map((s) => s.to.provider ?? '?')
  console.log(`conversation: ${said.length} blocks; runs: ${runs.join(', ')}`)
} finally {
  await host.close()
  store.close()
}
