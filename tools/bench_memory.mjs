// Node half of tools/bench_upstream.py's side-by-side memory row: the peak RSS of a Node
// process that builds the same preparation input as bench_upstream.session_json (the same
// recipe, checked by a hash of the input's JSON) and runs the upstream adapter's prepare
// handler once.  Prints one JSON line:
//   {"text", "start", "imported", "built", "peak"} (bytes), "input" (sha256 of the args'
//   JSON, computed after the peak is read) and "result" (what the handler returned).

import { createHash } from 'node:crypto'

import { readFileSync } from 'node:fs'

// VmHWM is this program's own high-water mark; resourceUsage().maxRSS (KiB) also keeps
// the peak of the process that forked it, from before exec (a large parent would hide
// the whole measurement), so it is only the fallback where /proc is absent.
const peak = () => {
  try {
    const found = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))
    if (found) return Number(found[1]) * 1024
  } catch {}
  return process.resourceUsage().maxRSS * 1024
}
const start = peak()
const root = new URL('../adapters/upstream/', import.meta.url)
const { OPS } = await import(new URL('core.mjs', root).href)
await import(new URL('ops-prepare.mjs', root).href)
const imported = peak()

const messages = Number(process.argv[2])
const size = 2000
const filler = 'lorem ipsum <dolor> sit amet 界 '.repeat(Math.floor(size / 20))
const events = []
let text = 0
for (let i = 0; i < messages; i += 1) {
  const body = `message ${i}: ${filler}`.slice(0, size) // no surrogates: units are characters
  text += Buffer.byteLength(body, 'utf8')
  const block = [{ type: 'text', text: body }]
  const user = i % 2 === 0
  const data = user
    ? { content: block, source: { kind: 'user' } }
    : { turn: i, step: 0, content: block }
  events.push({
    type: user ? 'user/message' : 'assistant/message',
    seq: i,
    time: i,
    data,
    surfaceOp: 'append',
  })
}
const args = {
  target: { id: 'target' },
  content: [{ type: 'text', text: 'what did @big decide?' }],
  references: [{ sessionId: 'big' }],
  sessions: { big: { header: { version: 0, id: 'big', createdAt: 1, cwd: '/w' }, events } },
}
const built = peak()
let result = OPS.get('prepare').handler(args)
if (result instanceof Promise) result = await result
const top = peak()
const input = createHash('sha256').update(JSON.stringify(args)).digest('hex')
process.stdout.write(
  JSON.stringify({ text, start, imported, built, peak: top, input, result }) + '\n',
)
