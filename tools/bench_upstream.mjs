// Node half of tools/bench_upstream.py: times the upstream adapter's op handlers in-process.
//
// Loads the same op modules as adapters/upstream/shim.mjs (so the published packages come
// from adapters/upstream/node_modules) and answers one JSON line per request:
//   {"calls": [[op, args], ...], "n": N}  ->  {"result": <last call's result>, "seconds": s}
// where s is the wall time of N runs of the whole call sequence, measured with
// process.hrtime.bigint() around the loop (no per-call timer, no protocol in the timing).

if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function withResolvers() {
    let resolve
    let reject
    const promise = new this((res, rej) => { resolve = res; reject = rej })
    return { promise, resolve, reject }
  }
}

import { createInterface } from 'node:readline'

const root = new URL('../adapters/upstream/', import.meta.url)
const { OPS } = await import(new URL('core.mjs', root).href)
await import(new URL('ops-uri.mjs', root).href)
await import(new URL('ops-prepare.mjs', root).href)

// Synchronous handlers run in a plain loop; only a handler that returns a promise is awaited.
async function runOnce(calls) {
  let result
  for (const [name, args] of calls) {
    result = OPS.get(name).handler(args)
    if (result instanceof Promise) result = await result
  }
  return result
}

function runSync(handlers, calls, n) {
  let result
  for (let i = 0; i < n; i += 1) {
    for (let j = 0; j < handlers.length; j += 1) result = handlers[j](calls[j][1])
  }
  return result
}

function isAsync(calls) {
  return calls.some(([name, args]) => OPS.get(name).handler(args) instanceof Promise)
}

async function handle(request) {
  for (const [name] of request.calls) {
    if (!OPS.has(name)) return { error: `no operation ${name}` }
  }
  const result = await runOnce(request.calls)
  const n = request.n ?? 1
  const handlers = request.calls.map(([name]) => OPS.get(name).handler)
  const sync = !isAsync(request.calls)
  const start = process.hrtime.bigint()
  if (sync) runSync(handlers, request.calls, n)
  else for (let i = 0; i < n; i += 1) await runOnce(request.calls)
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  return { result: result === undefined ? null : result, seconds }
}

let chain = Promise.resolve()
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
lines.on('line', line => {
  chain = chain.then(async () => {
    let reply
    try {
      reply = await handle(JSON.parse(line))
    } catch (error) {
      reply = { error: `${error?.code ?? ''} ${error?.message ?? String(error)}` }
    }
    process.stdout.write(JSON.stringify(reply) + '\n')
  })
})
lines.on('close', () => { chain.then(() => process.exit(0)) })
