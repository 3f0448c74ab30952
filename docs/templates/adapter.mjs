#!/usr/bin/env node
// A complete dsh-conformance adapter in plain Node (no dependencies).
//
// Copy this file, replace the three `uri` functions with imports from your implementation,
// add the operations of each capability you implement to `ops` and `capabilities`, then:
//
//   dsh-conformance smoke --adapter 'subprocess:node adapter.mjs'
//   dsh-conformance run   --adapter 'subprocess:node adapter.mjs' --report-dir out/
//
// The protocol (docs/protocol.md): one JSON request per line on stdin, one reply per line
// on stdout, in request order; stderr is free for logs. Every field of every operation is
// in docs/protocol-reference.md.
import { createInterface } from 'node:readline'

const PROTOCOL = 2                  // the version this adapter speaks (docs/protocol-changelog.md)
const capabilities = ['uri']        // declare a capability only when every one of its ops answers

// Keep stdout for replies: a stray log line there is a protocol error.
for (const level of ['log', 'info', 'warn', 'debug']) {
  console[level] = (...parts) => process.stderr.write(parts.join(' ') + '\n')
}

/** A typed error: the harness compares the code, never the message. */
const failure = (code, message) => Object.assign(new Error(message), { code })

// --- the implementation under test (replace these with imports from yours) -----------------

const SCHEME = 'dsh-session:'
const INVALID = 'SESSION_REFERENCE_INVALID_REFERENCE'

// JSON.stringify writes a lone surrogate as a \udxxx escape, so its UTF-8 is well formed.
const encodeUri = (sessionId) =>
  SCHEME + Buffer.from(JSON.stringify(sessionId), 'utf8').toString('base64url')

function decodeUri (uri) {          // the exact inverse of encodeUri; anything else is invalid
  if (typeof uri !== 'string' || !/^dsh-session:[A-Za-z0-9_-]+$/.test(uri)) {
    throw failure(INVALID, 'not a dsh-session: URI')
  }
  let sessionId
  try {
    const bytes = Buffer.from(uri.slice(SCHEME.length), 'base64url')
    sessionId = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    throw failure(INVALID, 'the URI payload is not base64url JSON')
  }
  if (typeof sessionId !== 'string' || encodeUri(sessionId) !== uri) {
    throw failure(INVALID, 'not the canonical URI of a session id')
  }
  return sessionId
}

const formatMention = (sessionId, label = sessionId) =>
  `@[${label.replace(/[\\\]]/g, '\\$&')}](${encodeUri(sessionId)})`

// --- the operations --------------------------------------------------------------------------

function argument (args, name) {
  if (!(name in args)) throw failure('DSH_INVALID_ARGUMENT', `missing argument ${name}`)
  return args[name]
}

const ops = {
  // The harness offers its newest version; answer ours when it runs it, else refuse (the
  // harness then offers an older one).
  handshake: (args) => {
    if (!Number.isInteger(args.protocol) || args.protocol < PROTOCOL) {
      throw failure('DSH_PROTOCOL_MISMATCH', `this adapter speaks protocol ${PROTOCOL}`)
    }
    return {
      protocol: PROTOCOL,
      implementation: { name: 'my-implementation', language: 'javascript', version: '0.1.0' },
      capabilities,
    }
  },
  reset: () => null,                // drop every piece of state your implementation keeps
  shutdown: () => { setImmediate(() => process.exit(0)); return null },
  'uri.encode': (args) => encodeUri(argument(args, 'sessionId')),
  'uri.decode': (args) => decodeUri(argument(args, 'uri')),
  'mention.format': (args) => formatMention(argument(args, 'sessionId'), args.label),
}

async function answer (line) {      // the reply to one request line; never throws
  let request
  try {
    request = JSON.parse(line)
  } catch {
    return { id: null, error: { code: 'DSH_INVALID_REQUEST', message: 'not JSON' } }
  }
  const { id, op } = request
  const run = Object.hasOwn(ops, op) ? ops[op] : undefined
  if (run === undefined) {
    return { id, error: { code: 'DSH_UNSUPPORTED_OPERATION', message: `unknown operation ${op}` } }
  }
  try {
    return { id, result: (await run(request.args ?? {})) ?? null }
  } catch (error) {
    return { id, error: { code: error.code ?? 'DSH_ADAPTER_FAILURE', message: String(error.message) } }
  }
}

// Read line by line and answer strictly in order: the harness may send many at once.
let chain = Promise.resolve()
createInterface({ input: process.stdin })
  .on('line', (line) => {
    if (!line.trim()) return
    chain = chain.then(async () => process.stdout.write(JSON.stringify(await answer(line)) + '\n'))
  })
  .on('close', () => chain.then(() => process.exit(0)))   // stdin closed: leave
