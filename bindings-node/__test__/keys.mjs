// Key conversion between the binding's camelCase objects and the serialized (snake_case) form of
// docs/design.md §1 that the shared vectors and the conformance drivers use. Field-aware: keys inside
// `native.data` and embed ids are never renamed.

export const camelKey = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase())
export const snakeKey = (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

export function convertKeys(value, key) {
  if (Array.isArray(value)) return value.map((v) => convertKeys(v, key))
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value
  const out = {}
  for (const [k, v] of Object.entries(value)) {
    if (k === 'embeds' && v && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v).map(([id, e]) => [id, convertKeys(e, key)]))
    } else if (k === 'native' && v && typeof v === 'object') {
      out[k] = { runtime: v.runtime, data: v.data }
    } else {
      out[key(k)] = convertKeys(v, key)
    }
  }
  return out
}
