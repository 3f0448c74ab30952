// Shared pieces of the upstream adapter: the op registry, error mapping, deterministic ids.

import { readFileSync } from 'node:fs'

export const PROTOCOL = 1

/** op name -> { name, capability, handler, errors } */
export const OPS = new Map()

/**
 * Register `handler(args)` as the implementation of `name`.
 * `errors` maps an uncoded JS error class name (TypeError, Error...) to the DSH_* code this
 * op reports for it (decision D-143); the default mapping is in `errorReply`.
 */
export function op(name, capability, handler, errors = {}) {
  if (OPS.has(name)) throw new Error(`operation ${name} registered twice`)
  OPS.set(name, { name, capability, handler, errors })
}

export function capabilities() {
  return [...new Set([...OPS.values()].map(entry => entry.capability))].sort()
}

export function packageVersion(name) {
  try {
    const url = new URL(import.meta.resolve(`${name}/package.json`))
    return JSON.parse(readFileSync(url, 'utf8')).version
  } catch {
    return null
  }
}

export function implementation() {
  const version = packageVersion('@deepseek-ai/dsh-session-reference') ?? 'unknown'
  return {
    name: '@deepseek-ai/dsh-session-reference',
    language: 'typescript',
    version,
    homepage: 'https://github.com/deepseek-ai/deepseek-harness',
  }
}

/** Versions of the runtime and of every pinned package (core op `meta.info`). */
export function info() {
  const names = [
    '@deepseek-ai/cordis', '@deepseek-ai/schemastery', '@deepseek-ai/dsh-agent', '@deepseek-ai/dsh-agent-loop',
    '@deepseek-ai/dsh-compaction', '@deepseek-ai/dsh-llm', '@deepseek-ai/dsh-output-retention',
    '@deepseek-ai/dsh-session', '@deepseek-ai/dsh-session-query', '@deepseek-ai/dsh-session-reference',
    '@deepseek-ai/dsh-system-prompt', '@deepseek-ai/dsh-tools',
  ]
  return { node: process.version, packages: Object.fromEntries(names.map(name => [name, packageVersion(name)])) }
}

/** A failure of the adapter's own argument handling (never the library's). */
export class ArgumentError extends Error {
  constructor(message) {
    super(message)
    this.name = 'ArgumentError'
    this.code = 'DSH_INVALID_ARGUMENT'
  }
}

export function arg(args, name) {
  if (!Object.hasOwn(args, name)) throw new ArgumentError(`missing argument ${JSON.stringify(name)}`)
  return args[name]
}

const PASSTHROUGH = /^(SESSION_REFERENCE_[A-Z_]+|DSH_[A-Z_]+)$/u

/**
 * Map a thrown value to a protocol error `{code, message}` (decision D-143).
 * - an error whose `.code` is a SESSION_REFERENCE_* or DSH_* code keeps it;
 * - an uncoded error uses the op's own mapping for its class name, else
 *   TypeError/RangeError -> DSH_INVALID_ARGUMENT, anything else -> DSH_UPSTREAM_ERROR.
 * The message always names the original class and code so nothing is lost.
 */
export function errorReply(error, entry) {
  if (!(error instanceof Error)) {
    return { code: 'DSH_UPSTREAM_ERROR', message: `non-Error thrown: ${safeString(error)}` }
  }
  const className = error.constructor?.name ?? error.name
  const original = error.code === undefined ? className : `${className} ${safeString(error.code)}`
  const cause = error.cause === undefined
    ? ''
    : ` (cause: ${error.cause instanceof Error ? error.cause.message : safeString(error.cause)})`
  let code
  if (typeof error.code === 'string' && PASSTHROUGH.test(error.code)) code = error.code
  else if (Object.hasOwn(entry?.errors ?? {}, className)) code = entry.errors[className]
  else if (error instanceof TypeError || error instanceof RangeError) code = 'DSH_INVALID_ARGUMENT'
  else code = 'DSH_UPSTREAM_ERROR'
  const message = code === error.code ? `${error.message}${cause}` : `[${original}] ${error.message}${cause}`
  return { code, message }
}

function safeString(value) {
  try {
    return typeof value === 'string' ? value : JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

// ---- deterministic ids and clock --------------------------------------------------------
// dsh-llm's createMessage uses crypto.randomUUID and the session store stamps Date.now():
// both are pinned so two runs of the same script produce identical bytes (decision D-144).
// Only the adapter's own ops run between resets, so a counter per reset is reproducible.

let uuidCounter = 0
const realRandomUUID = globalThis.crypto.randomUUID.bind(globalThis.crypto)
void realRandomUUID
Object.defineProperty(globalThis.crypto, 'randomUUID', {
  configurable: true,
  writable: true,
  value: () => {
    uuidCounter += 1
    return `00000000-0000-4000-8000-${uuidCounter.toString(16).padStart(12, '0')}`
  },
})

const resetHooks = []

/** Register a function run by the core op `reset` (drop an area's state). */
export function onReset(hook) {
  resetHooks.push(hook)
}

export function resetState() {
  uuidCounter = 0
  for (const hook of resetHooks) hook()
}

export function resetIds() {
  uuidCounter = 0
}
