// dsh-conformance adapter for the published @deepseek-ai/dsh-* packages.
//
// Speaks the dsh-conformance adapter protocol (spec/schemas/protocol.json): one JSON
// object per line on stdin and stdout, UTF-8, answered strictly in request order.
//   request : {"id": <opaque>, "op": "<name>", "args": {...}}
//   reply   : {"id": <same>, "result": <json>} | {"id": <same>, "error": {"code", "message"}}
// stdout carries protocol lines only; every console method writes to stderr.
//
// The op modules (ops-*.mjs) translate this project's op shapes (adapters/reference/*_ops.py)
// into calls on the published API and back.  They add no behaviour of their own: where the
// published API differs from the design note, the difference must show in the results.

// Node 20 lacks Promise.withResolvers; dsh-agent and dsh-agent-loop call it at runtime.
if (typeof Promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers() {
      let resolve
      let reject
      const promise = new this((res, rej) => { resolve = res; reject = rej })
      return { promise, resolve, reject }
    },
  })
}

import { createInterface } from 'node:readline'

for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir']) {
  console[level] = (...items) => process.stderr.write(items.map(String).join(' ') + '\n')
}

const { PROTOCOL, OPS, capabilities, implementation, info, errorReply, resetState } = await import('./core.mjs')
await import('./ops-uri.mjs')
await import('./ops-prepare.mjs')
await import('./ops-agent.mjs')
await import('./ops-scenario.mjs')

function write(message) {
  let text
  try {
    text = JSON.stringify(message)
  } catch (error) {
    text = JSON.stringify({ id: message.id ?? null, error: { code: 'DSH_ADAPTER_FAILURE', message: `the result cannot be sent as JSON: ${error.message}` } })
  }
  process.stdout.write(text + '\n')
}

async function handle(request) {
  const { id, op } = request
  const args = request.args ?? {}
  switch (op) {
    case 'handshake': {
      const wanted = args.protocol
      // The harness offers its newest version; answer ours if it runs it (D-291).
      if (wanted !== undefined && !(Number.isInteger(wanted) && wanted >= PROTOCOL)) {
        return { id, error: { code: 'DSH_UNSUPPORTED_OPERATION', message: `protocol ${wanted} is not supported (this adapter speaks ${PROTOCOL})` } }
      }
      return { id, result: { protocol: PROTOCOL, implementation: implementation(), capabilities: capabilities() } }
    }
    case 'reset':
      resetState()
      return { id, result: null }
    case 'meta.info':
      return { id, result: info() }
    case 'meta.bench': {
      // Time `repeat` runs of one op inside Node, without the protocol (tools/bench_upstream.py).
      const entry = OPS.get(args.op)
      if (entry === undefined) return { id, error: { code: 'DSH_UNSUPPORTED_OPERATION', message: `no operation ${JSON.stringify(args.op)}` } }
      const millis = []
      try {
        for (let i = 0; i < (args.repeat ?? 1); i += 1) {
          const start = performance.now()
          await entry.handler(args.args ?? {})
          millis.push(performance.now() - start)
        }
      } catch (error) {
        return { id, error: errorReply(error, entry) }
      }
      return { id, result: { millis } }
    }
    case 'shutdown':
      return { id, result: null, shutdown: true }
    default: {
      const entry = OPS.get(op)
      if (entry === undefined) {
        return { id, error: { code: 'DSH_UNSUPPORTED_OPERATION', message: `operation ${JSON.stringify(op)} is not supported by the upstream adapter` } }
      }
      try {
        const result = await entry.handler(args)
        return { id, result: result === undefined ? null : result }
      } catch (error) {
        return { id, error: errorReply(error, entry) }
      }
    }
  }
}

// A late rejection inside the library (for example a storage read that settles after
// cancellation) must not kill the process or touch stdout.
process.on('unhandledRejection', reason => {
  process.stderr.write(`upstream adapter: unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}\n`)
})

let chain = Promise.resolve()
let closing = false
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
lines.on('line', line => {
  if (closing || line.trim() === '') return
  chain = chain.then(async () => {
    if (closing) return
    let request
    try {
      request = JSON.parse(line)
    } catch (error) {
      write({ id: null, error: { code: 'DSH_ADAPTER_FAILURE', message: `request is not JSON: ${error.message}` } })
      return
    }
    if (request === null || typeof request !== 'object' || typeof request.op !== 'string') {
      write({ id: request?.id ?? null, error: { code: 'DSH_ADAPTER_FAILURE', message: 'request must be an object with a string "op"' } })
      return
    }
    const reply = await handle(request)
    if (reply.shutdown === true) {
      closing = true
      write({ id: reply.id, result: null })
      lines.close()
      process.stdout.write('', () => process.exit(0))
      return
    }
    write(reply)
  })
})
lines.on('close', () => { chain.then(() => process.exit(0)) })
