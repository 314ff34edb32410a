// Permissions from Node: a Claude Code agent started with `askPermissions` reports the tool it
// would run as a `permission_needed` event while `send` is pending; `answerPermission(id, false)`
// refuses it and the turn goes on; answering again rejects with NOT_FOUND. First, an image whose
// type is not an image is refused before anything reaches the runtime. Prints what happened as
// JSON. Used by test_host.py.
//   node host_permission.mjs <claude> <home> <cwd> <db> <mock url>
import { claudeHost } from './claude_host.mjs'

const [claude, home, cwd, db, mockUrl] = process.argv.slice(2)
const host = claudeHost(claude, home, db, mockUrl)

const failure = (e) => ({ code: e.code, field: e.field ?? null, message: e.message })
const out = {}
try {
  const agent = await host.start('node-ask', { runtime: 'claude-code', model: 'claude-opus-5-5', cwd, askPermissions: true })
  out.pid = agent.status().pid
  try {
    await agent.send('Read this.', { images: [{ mime: 'application/pdf', data: Buffer.from('%PDF-1.4') }] })
  } catch (e) {
    out.badImage = failure(e)
  }
  const since = agent.status().cursor
  const turn = agent.send('Make refused.txt.', { timeout: 120000 })
  for await (const ev of agent.events({ since, timeout: 60000 })) {
    if (ev.type === 'permission_needed') {
      out.asked = ev.data
      break
    }
  }
  if (out.asked) {
    await agent.answerPermission(out.asked.id, false)
    try {
      await agent.answerPermission(out.asked.id, false)
    } catch (e) {
      out.again = failure(e)
    }
  }
  out.text = (await turn).text
  out.answered = []
  for await (const ev of agent.events({ since })) if (ev.type === 'permission_answered') out.answered.push(ev.data)
} finally {
  await host.close()
}
console.log(JSON.stringify(out))
