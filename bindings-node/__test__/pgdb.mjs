// A PostgreSQL database of its own for one Node test, on the server SNA_TEST_POSTGRES_URL names
// (scripts/test.sh starts a throwaway one with scripts/postgres.sh); the tests fail, not skip,
// without it. Databases are made and dropped with psql.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'

function adminUrl() {
  const url = process.env.SNA_TEST_POSTGRES_URL
  if (!url) throw new Error('SNA_TEST_POSTGRES_URL names the PostgreSQL server for these tests (scripts/postgres.sh start DIR prints one)')
  return url
}

function psql(url, sql) {
  execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', url, '-c', sql], { stdio: ['ignore', 'ignore', 'pipe'] })
}

// Calls `use(url)` with the URL of a new, empty database, dropped afterwards.
export function withDatabase(tag, use) {
  const admin = adminUrl()
  const name = `sna_${tag}_${randomBytes(6).toString('hex')}`
  psql(admin, `CREATE DATABASE ${name}`)
  try {
    return use(admin.replace(/\/[^/?]*(\?|$)/, `/${name}$1`))
  } finally {
    psql(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
}
