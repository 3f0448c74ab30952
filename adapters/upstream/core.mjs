// Shared pieces of the upstream adapter: the op registry, error mapping, deterministic ids.

import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const PROTOCOL = 2  // docs/protocol-changelog.md (D-290)

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

/** The packages the shim and its op modules import (adapters/upstream/host.py SHIM_IMPORTS). */
export const IMPORTS = [
  '@deepseek-ai/cordis', '@deepseek-ai/dsh-agent', '@deepseek-ai/dsh-agent-loop', '@deepseek-ai/dsh-compaction',
  '@deepseek-ai/dsh-llm', '@deepseek-ai/dsh-session', '@deepseek-ai/dsh-session-query',
  '@deepseek-ai/dsh-session-reference', '@deepseek-ai/dsh-system-prompt', '@deepseek-ai/dsh-tools',
]

/** The package.json folder Node loads `name` from when `fromFile` imports it, or null. */
function packageDir(name, fromFile) {
  for (const base of createRequire(fromFile).resolve.paths(name) ?? []) {
    const dir = join(base, name)
    if (existsSync(join(dir, 'package.json'))) return realpathSync(dir)
  }
  return null
}

let componentCache = null

/**
 * name -> version of every package loaded: the imported ones and, transitively, their
 * dependencies and present peers, each resolved from where its importer lives (D-187).
 */
export function components() {
  if (componentCache !== null) return componentCache
  const found = {}
  const seen = new Set()
  const queue = IMPORTS.map(name => [name, fileURLToPath(import.meta.url)])
  while (queue.length > 0) {
    const [name, from] = queue.shift()
    const dir = packageDir(name, from)
    if (dir === null || seen.has(dir)) continue
    seen.add(dir)
    let data
    try {
      data = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    } catch {
      continue
    }
    if (typeof data.version === 'string' && !(name in found)) found[name] = data.version
    const here = join(dir, 'package.json')
    for (const dep of [...Object.keys(data.dependencies ?? {}), ...Object.keys(data.peerDependencies ?? {})]) {
      queue.push([dep, here])
    }
  }
  componentCache = Object.fromEntries(Object.entries(found).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  return componentCache
}

export function implementation() {
  const version = packageVersion('@deepseek-ai/dsh-session-reference') ?? 'unknown'
  return {
    name: '@deepseek-ai/dsh-session-reference',
    language: 'typescript',
    version,
    homepage: 'https://github.com/deepseek-ai/deepseek-harness',
    components: components(),
  }
}

/** Versions of the runtime and of the adapter's pinned packages (core op `meta.info`). */
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
