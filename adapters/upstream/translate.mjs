// Seed-era session logs (spec/schemas/data.json) -> the events the published release writes
// for the same interaction (decision D-145).  Sequence numbers are preserved one to one, so
// capturedThroughSeq and replace ranges mean the same in both vocabularies.
//
//   user/message {content, source, envelope?}  -> user/message UserMessage {id, role, content, source}
//                                                 (an envelope's displayContent is the direct message;
//                                                  the release writes the snapshot as its own message,
//                                                  which its projection drops)
//   steering/message {turn, content, source…}  -> user/message (the release logs steering as plain input)
//   context/message {content, source, meta?}   -> user/message with that non-user source
//   assistant/message {turn?, step?, content}   -> assistant/message {turn, step, message: AssistantMessage}
//   tool/result {turn?, step?, callId, content, isError?}
//                                               -> tool/result {turn, step, message: ToolResultMessage}
//   session/title {title, …}                    -> session/title {title, messageSeqs, source}
//   anything else                               -> unchanged

const MODEL_SOURCE = Object.freeze({ kind: 'model', provider: 'mock', model: 'mock' })

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function messageId(sessionId, seq) {
  return `${sessionId}#${seq}`
}

/** The data of one release event, or the seed data unchanged when nothing maps. */
export function translateEvent(sessionId, event) {
  const data = event.data
  if (!isObject(data)) return { type: event.type, data }
  const id = messageId(sessionId, event.seq)
  switch (event.type) {
    case 'user/message':
    case 'steering/message':
    case 'context/message': {
      const content = isObject(data.envelope) && Object.hasOwn(data.envelope, 'displayContent')
        ? data.envelope.displayContent
        : data.content
      return { type: 'user/message', data: { id, role: 'user', content, source: data.source } }
    }
    case 'assistant/message': {
      const message = { id, role: 'assistant', content: data.content, source: MODEL_SOURCE }
      const out = { turn: data.turn ?? 1, step: data.step ?? 1, message }
      if (data.usage !== undefined) out.usage = data.usage
      return { type: 'assistant/message', data: out }
    }
    case 'tool/result': {
      const block = { type: 'tool-result', toolCallId: data.callId ?? `call-${event.seq}`, content: data.content ?? [] }
      if (data.isError === true) block.isError = true
      const message = { id, role: 'user', content: [block], source: { kind: 'tool', callId: block.toolCallId } }
      const out = { turn: data.turn ?? 1, step: data.step ?? 1, message }
      if (data.error !== undefined) out.error = data.error
      return { type: 'tool/result', data: out }
    }
    case 'session/title':
      return {
        type: 'session/title',
        data: {
          title: data.title,
          messageSeqs: Array.isArray(data.messageSeqs) ? data.messageSeqs : [],
          source: isObject(data.source) ? data.source : { kind: 'user' },
        },
      }
    default:
      return { type: event.type, data }
  }
}

/** SessionStore `create` metadata from a seed header (createdAt is kept exactly). */
export function headerMeta(header) {
  const meta = {}
  for (const key of ['cwd', 'createdAt', 'parentSession', 'seedLength']) {
    if (header[key] !== undefined && header[key] !== null) meta[key] = header[key]
  }
  return meta
}

/** Run `fn` with Date.now pinned to `time` (the store stamps event times with Date.now). */
export function atTime(time, fn) {
  const realNow = Date.now
  Date.now = () => time
  try {
    return fn()
  } finally {
    Date.now = realNow
  }
}

/**
 * Append the translated events of one seed log to a live release session.  The seed's seq
 * and time are kept: a non-contiguous seq is rejected here (the store would renumber it),
 * unless `renumber` asks for the store's next seq.
 */
export function appendTranslated(session, sessionId, events, { renumber = false } = {}) {
  for (const given of events ?? []) {
    if (!isObject(given)) throw new Error('a session event must be an object')
    // A later append (mutateAfterRead) takes the next seq, as the reference store does.
    const event = renumber ? { ...given, seq: session.seq } : given
    if (event.seq !== session.seq) {
      throw new Error(`event at index ${session.seq} has seq ${JSON.stringify(event.seq)}; seqs must be contiguous`)
    }
    const { type, data } = translateEvent(sessionId, event)
    const time = Number.isSafeInteger(event.time) ? event.time : 0
    atTime(time, () => {
      if (event.surfaceOp === undefined) {
        session.append(type, data)
      } else {
        const intent = { surfaceOp: event.surfaceOp }
        if (event.sourceEventSeqs !== undefined) intent.sourceEventSeqs = event.sourceEventSeqs
        session.append(type, data, intent)
      }
    })
  }
}

// ---- the other way: a release log read in the seed vocabulary (decision D-158) ----------
//
//   user/message UserMessage, source kind 'user'   -> user/message {content, source}
//   user/message UserMessage, any other source      -> context/message {content, source}
//   assistant/message {turn, step, message}         -> assistant/message {turn, step, content, provenance}
//   tool/result {turn, step, message}               -> tool/result {turn, step, callId, content, isError}
//   turn/start, turn/end, step/start, step/end, request/header, tool/call, assistant/chunk
//                                                   -> unchanged (one to one)
//   agent/inbox/*, request/context, anything else   -> dropped (no seed counterpart)
// Message ids and surface markers other than 'append' are lost; seqs are renumbered from 0.

const KEPT = new Set(['turn/start', 'turn/end', 'step/start', 'step/end', 'request/header', 'tool/call', 'assistant/chunk'])

function seedData(event) {
  const data = event.data
  switch (event.type) {
    case 'user/message': {
      const type = data?.source?.kind === 'user' ? 'user/message' : 'context/message'
      return { type, data: { content: data.content, source: data.source }, surface: true }
    }
    case 'assistant/message': {
      const out = { turn: data.turn, step: data.step, content: data.message?.content ?? [] }
      const source = data.message?.source
      out.provenance = { provider: source?.provider, model: source?.model }
      if (data.usage !== undefined) out.usage = data.usage
      return { type: 'assistant/message', data: out, surface: true }
    }
    case 'tool/result': {
      const block = (data.message?.content ?? []).find(b => b?.type === 'tool-result') ?? {}
      const out = { turn: data.turn, step: data.step, callId: block.toolCallId, content: block.content ?? [], isError: block.isError === true }
      if (data.error !== undefined) out.error = data.error
      return { type: 'tool/result', data: out, surface: true }
    }
    default:
      return KEPT.has(event.type) ? { type: event.type, data, surface: false } : undefined
  }
}

/** The events of a release session log, in the seed vocabulary (decision D-158). */
export function toSeedLog(events) {
  const out = []
  for (const event of events) {
    const mapped = seedData(event)
    if (mapped === undefined) continue
    const seed = { type: mapped.type, seq: out.length, time: Number.isSafeInteger(event.time) ? event.time : 0, data: mapped.data }
    if (mapped.surface) seed.surfaceOp = 'append'
    out.push(seed)
  }
  return JSON.parse(JSON.stringify(out))
}
