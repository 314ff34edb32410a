// An ACP client (the @agentclientprotocol/sdk package) that drives `sna acp` for test_acp.py:
//   node acp_client.mjs <sna> <sna args…>
// It spawns the agent (own process group) and takes commands as JSON lines on stdin:
//   {"op": "request", "tag": T, "method": M, "params": P}  → {"tag": T, "result"|"error", "updates": [...]}
//        (updates: every session/update that arrived between the request and its answer, in order)
//   {"op": "notify", "method": M, "params": P}
//   {"op": "permissions", "answer": "allow" | "reject" | "cancelled"}  (how permission requests are answered)
//   {"op": "close", "tag": T}  → stdin closed; {"tag": T, "code": exit code, "pid": the agent's pid}
// Besides answers it writes {"event": "update", "params"} for each update as it arrives, and
// {"event": "permission", "params"} for each permission request.
import * as acp from '@agentclientprotocol/sdk'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { Readable, Writable } from 'node:stream'

const [bin, ...args] = process.argv.slice(2)
const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'inherit'], detached: true })
const out = (value) => process.stdout.write(JSON.stringify(value) + '\n')
const updates = []
let answer = 'allow'

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout))
const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)))

let closing = null
try {
  await acp
    .client({ name: 'sna-acp-test' })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      out({ event: 'permission', params })
      if (answer === 'cancelled') return { outcome: { outcome: 'cancelled' } }
      const kind = answer === 'allow' ? 'allow_once' : 'reject_once'
      const option = params.options.find((o) => o.kind === kind) ?? params.options[0]
      return { outcome: { outcome: 'selected', optionId: option.optionId } }
    })
    .onNotification(acp.methods.client.session.update, async ({ params }) => {
      updates.push(params)
      out({ event: 'update', params })
    })
    .connectWith(stream, async (ctx) => {
      const lines = createInterface({ input: process.stdin })
      const running = []
      for await (const line of lines) {
        if (!line.trim()) continue
        const command = JSON.parse(line)
        if (command.op === 'request') {
          const from = updates.length
          running.push(
            ctx.request(command.method, command.params).then(
              (result) => out({ tag: command.tag, result, updates: updates.slice(from) }),
              (error) => out({ tag: command.tag, error: { code: error.code, message: error.message, data: error.data }, updates: updates.slice(from) }),
            ),
          )
        } else if (command.op === 'notify') {
          await ctx.notify(command.method, command.params)
        } else if (command.op === 'permissions') {
          answer = command.answer
        } else if (command.op === 'close') {
          await Promise.allSettled(running)
          closing = command.tag
          break
        }
      }
    })
} catch (error) {
  // The agent closing its side ends the connection: expected once stdin is closed.
  if (closing === null) throw error
}
child.stdin.end()
const code = await exited
out({ tag: closing, code, pid: child.pid })
process.exit(0)
