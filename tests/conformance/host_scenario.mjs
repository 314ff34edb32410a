// The host scenario from Node: two turns in one kept-alive Claude Code process against the mock,
// the events read with `for await`, a kill and a native resume; a timer must keep firing on time
// while each send runs. Prints what happened as JSON. Used by test_host.py.
//   node host_scenario.mjs <claude> <home> <cwd> <db> <mock url>
import { claudeHost } from './claude_host.mjs'

const [claude, home, cwd, db, mockUrl] = process.argv.slice(2)
const host = claudeHost(claude, home, db, mockUrl)

// The largest gap between ticks of a 10 ms timer while `work` runs.
async function timed(work) {
  let last = Date.now()
  let gap = 0
  const timer = setInterval(() => {
    const now = Date.now()
    gap = Math.max(gap, now - last)
    last = now
  }, 10)
  try {
    return { value: await work(), gap }
  } finally {
    clearInterval(timer)
  }
}

const out = { turns: [], gaps: [], pids: [] }
try {
  const agent = await host.start('node-session', { runtime: 'claude-code', model: 'claude-opus-5-5', cwd })
  for (const text of ['Remember the word teal.', 'Which word?']) {
    const { value, gap } = await timed(() => agent.send(text, { timeout: 120000 }))
    out.turns.push({ text: value.text, resumedVia: value.resumedVia, blocks: value.blocks.length })
    out.gaps.push(gap)
  }
  out.pids.push(agent.status().pid)
  out.status = agent.status()
  out.events = []
  for await (const ev of agent.events({ since: 0 })) out.events.push(ev.type)
  await agent.kill()
  const again = await agent.send('And again?', { timeout: 120000 })
  out.pids.push(agent.status().pid)
  out.turns.push({ text: again.text, resumedVia: again.resumedVia, blocks: again.blocks.length })
  out.spawns = agent.status().spawns
  try {
    await host.resume('node-session')
  } catch (e) {
    out.conflict = e.code
  }
} finally {
  await host.close()
}
console.log(JSON.stringify(out))
