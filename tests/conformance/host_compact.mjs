// Compaction and the context window from Node, with Claude Code against the mock: a session built
// here (30 turns of 12,000-byte tool results) started with `contextWindow` is folded to fit (the
// turn's `replay`); then a new session's turn and `agent.compact(instructions)`, after which
// `session.compactions()` lists it. A bad `contextWindow` is refused at once. Prints what happened as
// JSON. Used by test_host_compact.py.
//   node host_compact.mjs <claude> <home> <cwd> <db> <mock url>
import { createRequire } from 'node:module'
import { claudeHost } from './claude_host.mjs'

const { Store } = createRequire(import.meta.url)('../../bindings-node/index.js')

const [claude, home, cwd, db, mockUrl] = process.argv.slice(2)
const host = claudeHost(claude, home, db, mockUrl)

const out = { pids: [] }
try {
  try {
    host.start('refused', { runtime: 'claude-code', cwd, contextWindow: -5 })
  } catch (e) {
    out.refused = { code: e.code, field: e.field }
  }
  // A session over the window: every turn a prompt, a Bash call, its 12,000-byte result, an answer.
  const built = new Store(db).createSession({ id: 'node-budget', cwd })
  for (let i = 0; i < 30; i++) {
    const tag = i === 0 ? 'NODE-OLDEST' : `NODE-TURN-${i}`
    built.extend([
      { actor: 'user', kind: 'text', content: `Prompt ${tag}: show step ${i}.` },
      { actor: 'assistant', kind: 'tool_use', content: JSON.stringify({ command: `cat step-${i}.log` }), tool: { callId: `toolu_node_${String(i).padStart(3, '0')}`, name: 'Bash' } },
      { actor: 'user', kind: 'tool_result', content: `RESULT-${i} ` + 'x'.repeat(12000), tool: { callId: `toolu_node_${String(i).padStart(3, '0')}` } },
      { actor: 'assistant', kind: 'text', content: `Answer ${tag}.` },
    ])
  }
  const folded = await host.start('node-budget', { runtime: 'claude-code', model: 'claude-opus-5-5', cwd, contextWindow: 60000 })
  out.pids.push(folded.status().pid)
  const turn = await folded.send('Newest prompt from Node.', { timeout: 120000 })
  out.budget = { resumedVia: turn.resumedVia, replay: turn.replay, text: turn.text }
  for await (const ev of folded.events({ since: 0 })) if (ev.type === 'started') out.budget.started = ev.data.replay
  await folded.kill()

  const agent = await host.start('node-compact', { runtime: 'claude-code', model: 'claude-opus-5-5', cwd })
  out.pids.push(agent.status().pid)
  await agent.send('Remember the word PELICAN.', { timeout: 120000 })
  const compacted = await agent.compact('Keep the word PELICAN.', { timeout: 120000 })
  out.compact = { keys: Object.keys(compacted).sort(), replay: compacted.replay, blocks: compacted.blocks.length }
  out.compactions = agent.session.compactions().map((c) => ({ runtime: c.runtime, trigger: c.trigger, summary: c.summary, boundarySeq: c.boundarySeq }))
  out.events = []
  for await (const ev of agent.events({ since: 0 })) out.events.push(ev.type)
} finally {
  await host.close()
}
console.log(JSON.stringify(out))
