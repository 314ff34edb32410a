// Builds a conversation through the Node API and writes it for Codex with prepareResume; prints
// the plan as JSON. Used by test_codex.py (conformance b).
//   node codex_session.mjs <codex home> <cwd> <png file>
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Store } = require('../../bindings-node/index.js')

const [codexHome, cwd, pngPath] = process.argv.slice(2)
const by = { provider: 'codex', modelProvider: 'mock', model: 'gpt-5.5' }
const store = new Store()
const session = store.createSession({ cwd })
session.extend([
  {
    actor: 'user',
    kind: 'text',
    content: 'What colour is ![red](embed://red)? Then look at the project.',
    embeds: { red: { mime: 'image/png', name: 'red.png', data: readFileSync(pngPath) } },
  },
  {
    actor: 'assistant',
    kind: 'thinking',
    content: '**Looking** The image is red; now the files.',
    reasoning: { format: 'openai-encrypted', data: 'gAAAAABapi-encrypted-reasoning==', scope: { provider: 'codex', modelProvider: 'mock', model: 'gpt-5.5' } },
    ...by,
  },
  { actor: 'assistant', kind: 'tool_use', content: '{"cmd":"ls"}', tool: { callId: 'call_api_ls', name: 'exec_command' }, ...by },
  { actor: 'assistant', kind: 'tool_use', content: '{"cmd":"cat notes.txt"}', tool: { callId: 'call_api_cat', name: 'exec_command' }, ...by },
  { actor: 'user', kind: 'tool_result', content: 'data.csv\nnotes.txt\n', tool: { callId: 'call_api_ls', isError: false } },
  { actor: 'user', kind: 'tool_result', content: 'hello from notes\n', tool: { callId: 'call_api_cat', isError: false } },
  { actor: 'assistant', kind: 'text', content: 'Red. Two files; notes.txt says hello.', ...by },
])
const plan = session.prepareResume('codex', { codexHome, cwd, modelProvider: 'mock' })
console.log(JSON.stringify(plan))
