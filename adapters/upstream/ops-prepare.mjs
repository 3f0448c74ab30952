// Preparation ops (mirrors adapters/reference/prepare_ops.py): surface, projection,
// retention, prepare() and candidate discovery, on the published resolver with the real
// in-memory SessionStore + SessionQueryEngine.

import { ArgumentError, arg, op } from './core.mjs'
import { SR, projection, serialization } from './ops-uri.mjs'
import { appendTranslated, atTime, headerMeta, translateEvent } from './translate.mjs'

const { Context } = await import('@deepseek-ai/cordis')
const { default: SessionStore } = await import('@deepseek-ai/dsh-session')
const { default: SessionQueryEngine } = await import('@deepseek-ai/dsh-session-query')
const { isCompactCheckpointSource } = await import('@deepseek-ai/dsh-compaction')

/** The engine is abstract only in its full-text half; exact reads are concrete. */
class ExactReadQueryEngine extends SessionQueryEngine {
  searchSessions() { return Promise.resolve({ items: [] }) }
  searchEvents(request) { return this.readSurface(request.sessionId).then(s => ({ session: s.session, items: [] })) }
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/**
 * A fresh Context with the real store and query engine holding `sessions` (id -> {header,
 * events}).  A session whose log the real store rejects is left out and remembered in
 * `broken`, so reading it fails the way any unreadable source fails.
 */
async function realStore(sessions = {}) {
  if (!isObject(sessions)) throw new ArgumentError('sessions must be an object of id -> {header, events}')
  const ctx = new Context()
  await ctx.plugin(SessionStore)
  await ctx.plugin(ExactReadQueryEngine)
  const store = ctx.get('sessions')
  const live = new Map()
  const broken = new Map()
  for (const [key, log] of Object.entries(sessions)) {
    try {
      const header = isObject(log?.header) ? log.header : {}
      const id = typeof header.id === 'string' ? header.id : key
      const session = atTime(0, () => store.create(id, { meta: headerMeta(header) }))
      appendTranslated(session, id, log?.events)
      live.set(key, session)
    } catch (error) {
      broken.set(key, error)
    }
  }
  return { ctx, store, live, broken, query: ctx.get('sessionQuery') }
}

/** One seed snapshot {session, capturedThroughSeq, events} in the release's vocabulary. */
function releaseSnapshot(snapshot) {
  if (!isObject(snapshot) || !isObject(snapshot.session) || !Array.isArray(snapshot.events)) {
    throw new ArgumentError('snapshot must be {session, capturedThroughSeq, events}')
  }
  const id = snapshot.session.id
  return {
    session: snapshot.session,
    capturedThroughSeq: snapshot.capturedThroughSeq ?? null,
    events: snapshot.events.map(event => ({ ...event, ...translateEvent(id, event) })),
  }
}

/** Back to the caller's vocabulary: each surviving event is the caller's event at that seq. */
function seedSnapshot(release, seedEvents) {
  const bySeq = new Map((seedEvents ?? []).map(event => [event.seq, event]))
  return {
    session: release.session,
    capturedThroughSeq: release.capturedThroughSeq,
    events: release.events.map(event => {
      const seed = bySeq.get(event.seq)
      const out = { type: seed?.type ?? event.type, seq: event.seq, time: event.time, data: seed?.data ?? event.data }
      if (event.surfaceOp !== undefined) out.surfaceOp = event.surfaceOp
      if (event.sourceEventSeqs !== undefined) out.sourceEventSeqs = event.sourceEventSeqs
      return out
    }),
  }
}

async function readOne(args) {
  const session = arg(args, 'session')
  if (!isObject(session) || !isObject(session.header) || typeof session.header.id !== 'string') {
    throw new ArgumentError('session must be {header: {id, ...}, events}')
  }
  const { live, broken, query } = await realStore({ [session.header.id]: session })
  if (broken.has(session.header.id)) throw broken.get(session.header.id)
  void live
  return { release: await query.readSurface(session.header.id), seed: session.events }
}

async function snapshotArg(args) {
  if (Object.hasOwn(args, 'snapshot')) return releaseSnapshot(args.snapshot)
  return (await readOne(args)).release
}

// Invalid logs: the real store throws plain Errors (decision D-143 maps them per op).
const EVENT_ERRORS = { Error: 'DSH_INVALID_EVENT', TypeError: 'DSH_INVALID_EVENT' }

op('session.surface', 'projection', async args => {
  const { release, seed } = await readOne(args)
  return seedSnapshot(release, seed)
}, EVENT_ERRORS)

/**
 * The published projection is private; retainReferencedSession with an unbounded cap
 * returns exactly its items.  The per-item checkpoint flag is read from the published
 * checkpoint predicate of the surface event each item came from (decision D-146).
 */
function projectWithFlags(snapshot) {
  const retained = projection.retainReferencedSession(snapshot, '', Number.MAX_SAFE_INTEGER)
  const items = retained.data.conversation
  const flags = []
  for (const event of snapshot.events) {
    if (event.type === 'user/message') flags.push({ role: 'user', checkpoint: isCompactCheckpointSource(event.data.source) })
    else if (event.type === 'assistant/message') flags.push({ role: 'assistant', checkpoint: false })
  }
  // Items are produced in surface order by a subset of these events: align greedily.
  let cursor = 0
  return items.map(item => {
    while (cursor < flags.length && flags[cursor].role !== item.role) cursor += 1
    const checkpoint = cursor < flags.length ? flags[cursor].checkpoint : false
    cursor += 1
    return { role: item.role, text: item.text, checkpoint }
  })
}

op('projection.project', 'projection', async args => projectWithFlags(await snapshotArg(args)), EVENT_ERRORS)

// The release's own omission notice: it writes the exact count it omitted (issue 36).
const RELEASE_NOTICE = /\n\[\u2026 omitted (\d+) UTF-8 bytes \u2026\]$/u
const utf8 = text => Buffer.byteLength(text, 'utf8')

/**
 * The typed account (issue 36) of one data object the release emitted, computed from what
 * it returned: its size under the release's own tag-safe serializer, and per message the
 * count the release's notice states -- or, for a text the release emptied without a
 * notice, the bytes it lost.  `originals` (the projection, when known) gives the
 * checkpoint flags and the lengths of emptied texts: retained items are aligned to it
 * from the newest backwards, as the release keeps checkpoints and a suffix.
 */
function typedSource(data, originals, omittedMessages) {
  const conversation = data.conversation
  const aligned = new Array(conversation.length).fill(undefined)
  let i = originals.length - 1
  for (let j = conversation.length - 1; j >= 0; j -= 1) {
    const item = conversation[j]
    while (i >= 0 && !(originals[i].role === item.role && (originals[i].text === item.text || item.text === '' || RELEASE_NOTICE.test(item.text)))) i -= 1
    if (i >= 0) { aligned[j] = originals[i]; i -= 1 }
  }
  return {
    serializedBytes: utf8(serialization.stringifyTagSafeJson(data)),
    omittedMessages,
    messages: conversation.map((item, j) => {
      const original = aligned[j]
      const notice = RELEASE_NOTICE.exec(item.text)
      let omittedBytes = 0
      if (original !== undefined && original.text !== item.text) {
        omittedBytes = notice !== null ? Number(notice[1]) : Math.max(0, utf8(original.text) - utf8(item.text))
      }
      return { role: item.role, text: item.text, omittedBytes, checkpoint: original?.checkpoint ?? false }
    }),
  }
}

op('retention.retain', 'retention', async args => {
  const snapshot = await snapshotArg(args)
  const label = Object.hasOwn(args, 'label') ? args.label : snapshot.session.id
  const maxBytes = args.maxBytes ?? 65536
  const retained = projection.retainReferencedSession(snapshot, label, maxBytes)
  if (retained === undefined) {
    const error = new Error('referenced session snapshot cannot fit the configured byte budget')
    error.code = 'SESSION_REFERENCE_BUDGET_EXCEEDED'
    throw error
  }
  const source = typedSource(retained.data, projectWithFlags(snapshot), retained.stats.omittedMessages)
  return { ...retained, source }
}, EVENT_ERRORS)

// ---- prepare() in virtual time ---------------------------------------------------------------

function virtualTime(value, what) {
  if (value === undefined || value === null) return 0
  if (typeof value !== 'number' || !(value >= 0)) throw new ArgumentError(`${what} must be a non-negative number`)
  return value
}

/**
 * A sessionQuery whose readSurface settles in virtual time (decision D-147): each read
 * starts at once against the real engine, then waits for the scheduler to release it at
 * its fault's time.  `never` reads settle only if nothing else decides the outcome.
 */
function faultingQuery(env, faults, schedule) {
  return {
    readSurface(sessionId) {
      const fault = isObject(faults[sessionId]) ? faults[sessionId] : {}
      const kind = fault.kind
      const entry = { index: schedule.length, at: 0, settle: null }
      schedule.push(entry)
      return new Promise((resolve, reject) => {
        if (kind === 'never') { entry.at = Infinity; return }
        if (kind === 'fail') {
          entry.at = virtualTime(fault.at, 'fail.at')
          entry.settle = () => reject(new Error(String(fault.message ?? 'injected read failure')))
          return
        }
        entry.at = virtualTime(fault.ms ?? fault.at, 'delay')
        const observed = env.broken.has(sessionId)
          ? Promise.reject(new Error(`invalid session surface: ${env.broken.get(sessionId).message}`))
          : env.query.readSurface(sessionId)
        const settled = observed.then(
          snapshot => ({ ok: true, snapshot }),
          error => ({ ok: false, error }),
        )
        entry.ready = settled.then(outcome => {
          if (kind === 'mutateAfterRead' && outcome.ok) mutate(env, sessionId, fault)
          entry.settle = () => (outcome.ok ? resolve(outcome.snapshot) : reject(outcome.error))
        })
      })
    },
    listSessions: (...a) => env.query.listSessions(...a),
    readTitleSnapshots: (...a) => env.query.readTitleSnapshots(...a),
  }
}

function mutate(env, sessionId, fault) {
  const session = env.live.get(sessionId)
  if (Array.isArray(fault.append) && session !== undefined) {
    appendTranslated(session, session.id, fault.append, { renumber: true })
  }
  // `delete` and `replace` change what a LATER read observes; the release's read already
  // returned a detached snapshot, so only an append to the live log is applied.
}

const flush = () => new Promise(resolve => setImmediate(resolve))

function targetArg(args) {
  const target = arg(args, 'target')
  if (!isObject(target) || typeof target.id !== 'string') throw new ArgumentError('target must be an object with a string id')
  if (target.cwd !== undefined && target.cwd !== null && typeof target.cwd !== 'string') throw new ArgumentError('target cwd must be a string')
  return { id: target.id, session: { id: target.id, header: target.cwd == null ? {} : { cwd: target.cwd } } }
}

/** Mount the published resolver the way a host does (Cordis plugin, schema-validated config). */
async function mountResolver(ctx, config) {
  if (config !== undefined && config !== null && !isObject(config)) {
    const error = new Error('config must be an object')
    error.code = 'SESSION_REFERENCE_INVALID_CONFIG'
    throw error
  }
  await ctx.plugin(SR.SessionReferenceResolver, config ?? {})
  const resolver = ctx.get('sessionReferenceResolver')
  if (resolver === undefined) throw new Error('the session-reference resolver did not start (see stderr)')
  return resolver
}

const OPEN_TAG = '<referenced-sessions>\n'
const CLOSE_TAG = '\n</referenced-sessions>'

/**
 * The release's {content, additionalContext?} as this project's {content, contexts} (D-146),
 * with the typed `sources` (issue 36) read from the data array the release's prompt holds
 * and the per-source records of its recall source.
 */
function asContexts(result, originals) {
  if (result.additionalContext === undefined) return { content: result.content, contexts: [] }
  const contexts = [{ source: result.additionalContext.source, content: result.additionalContext.content }]
  const text = result.additionalContext.content?.[0]?.text ?? ''
  const start = text.indexOf(OPEN_TAG)
  const end = text.lastIndexOf(CLOSE_TAG)
  const data = start >= 0 && end > start ? JSON.parse(text.slice(start + OPEN_TAG.length, end)) : []
  const records = result.additionalContext.source?.references ?? []
  const sources = data.map((d, index) => ({
    sessionId: d.sessionId,
    ...typedSource(d, originals.get(d.sessionId) ?? [], records[index]?.omittedMessages ?? 0),
  }))
  // the release's framing (D-442): its warning, the tags, the array's brackets and commas --
  // every byte of the context's text that no data object's size counts
  const texts = contexts[0].content.map(block => (typeof block?.text === 'string' ? block.text : ''))
  const framingBytes = utf8(texts.join('')) - sources.reduce((sum, s) => sum + s.serializedBytes, 0)
  return { content: result.content, contexts, sources, framingBytes }
}

/** Each referenced source's projection as the store holds it before preparation starts. */
async function originalsOf(env, references) {
  const originals = new Map()
  for (const reference of Array.isArray(references) ? references : []) {
    const id = reference?.sessionId
    if (typeof id !== 'string' || originals.has(id) || !env.live.has(id)) continue
    try {
      originals.set(id, projectWithFlags(await env.query.readSurface(id)))
    } catch {
      // unreadable: the preparation fails on it anyway
    }
  }
  return originals
}

op('prepare', 'prepare', async args => {
  const agent = targetArg(args)
  const references = arg(args, 'references')
  const content = arg(args, 'content')
  const env = await realStore(args.sessions ?? {})
  const originals = await originalsOf(env, references)
  const faults = isObject(args.faults) ? args.faults : {}
  const schedule = []
  const ctx = new Context()
  ctx.provide('sessionQuery', faultingQuery(env, faults, schedule))
  const resolver = await mountResolver(ctx, args.config)
  const cancelAt = args.cancelAt
  const controller = new AbortController()
  if (cancelAt === 'before') controller.abort('cancelled before preparation')
  const cancelTime = cancelAt === undefined || cancelAt === null || cancelAt === 'before'
    ? null
    : virtualTime(cancelAt, 'cancelAt')
  const signal = cancelAt === undefined || cancelAt === null ? undefined : controller.signal
  let outcome = null
  const running = resolver.prepare(agent, content, references, signal).then(
    value => { outcome = { value } },
    error => { outcome = { error } },
  )
  await flush()
  await Promise.all(schedule.map(entry => entry.ready))
  const times = [...new Set(schedule.map(entry => entry.at))].filter(t => t !== Infinity).sort((a, b) => a - b)
  let cancelled = false
  for (const time of times) {
    if (outcome !== null) break
    if (!cancelled && cancelTime !== null && cancelTime <= time) {
      controller.abort('cancelled'); cancelled = true
      await flush()
      if (outcome !== null) break
    }
    for (const entry of schedule) if (entry.at === time && entry.settle !== null) entry.settle()
    await flush()
  }
  if (outcome === null && !cancelled && cancelTime !== null) {
    controller.abort('cancelled')
    await flush()
  }
  if (outcome === null) {
    throw new ArgumentError('a read never settles and nothing cancels preparation: it would never return')
  }
  await running
  if (outcome.error !== undefined) throw outcome.error
  return asContexts(outcome.value, originals)
})

// ---- candidate discovery ---------------------------------------------------------------------

op('candidates.list', 'candidates', async args => {
  const agent = targetArg(args)
  const env = await realStore(args.sessions ?? {})
  for (const [key, error] of env.broken) throw Object.assign(error, { message: `session ${key}: ${error.message}` })
  const listDelay = args.listDelay
  const cancelAt = args.cancelAt
  const controller = new AbortController()
  if (cancelAt === 'before') controller.abort('cancelled before discovery')
  const ctx = new Context()
  let releaseList = null
  const listAt = listDelay === 'never' ? Infinity : virtualTime(listDelay, 'listDelay')
  ctx.provide('sessionQuery', {
    listSessions: signal => new Promise((resolve, reject) => {
      releaseList = () => env.query.listSessions(signal).then(resolve, reject)
    }),
    readTitleSnapshots: (ids, signal) => env.query.readTitleSnapshots(ids, signal),
    readSurface: id => env.query.readSurface(id),
  })
  const resolver = await mountResolver(ctx, args.config)
  const signal = cancelAt === undefined || cancelAt === null ? undefined : controller.signal
  // Without an explicit limit the host-facing Remote face answers (configured limit, plus
  // the canonical mention); with one, listCandidates (decision D-148).
  const work = Object.hasOwn(args, 'limit')
    ? resolver.listCandidates(agent, args.query ?? '', args.limit, signal)
    : resolver.remoteExportCandidates(agent, args.query ?? '', signal ?? new AbortController().signal)
  let outcome = null
  const running = work.then(
    value => { outcome = { value } },
    error => { outcome = { error } },
  )
  await flush()
  const cancelTime = cancelAt === undefined || cancelAt === null || cancelAt === 'before' ? null : virtualTime(cancelAt, 'cancelAt')
  if (outcome === null && cancelTime !== null && cancelTime <= listAt) { controller.abort('cancelled'); await flush() }
  if (outcome === null && releaseList !== null && listAt !== Infinity) { releaseList(); await flush(); await flush() }
  if (outcome === null) throw new ArgumentError('the session listing never settles and nothing cancels discovery')
  await running
  if (outcome.error !== undefined) throw outcome.error
  return outcome.value
}, EVENT_ERRORS)
