// The host of the Node host scripts: Claude Code against the mock model server, in a private HOME,
// with the variables that keep the CLI from updating itself or calling home.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Store, Host } = require('../../bindings-node/index.js')

export function claudeHost(claude, home, db, mockUrl) {
  const env = {
    ANTHROPIC_BASE_URL: mockUrl,
    ANTHROPIC_API_KEY: 'sk-ant-mock-key',
    TMPDIR: `${home}/tmp`,
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
  }
  return new Host(new Store(db), { bins: { 'claude-code': claude }, env, home })
}
