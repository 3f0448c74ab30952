// The published agent loop with a scripted keyless model (capability agent.release-placement).
//
// The seed's agent ops (spec/schemas/ops/agent.json) drive a seed-era inbox in micro-steps
// with SendOptions.contexts and agent/prompt-submit; the release has none of these, so the
// adapter does not declare `agent` (decision D-149).  `release.run` instead runs one scripted
// scenario on the real loop and returns what the release profile (REL-*) checks: every
// captured model request and the target's durable log.

import { ArgumentError, arg, op, resetIds } from './core.mjs'
import { SR } from './ops-uri.mjs'
import { appendTranslated, atTime, headerMeta } from './translate.mjs'

const { Context } = await import('@deepseek-ai/cordis')
const { default: SessionStore } = await import('@deepseek-ai/dsh-session')
const { default: SessionQueryEngine } = await import('@deepseek-ai/dsh-session-query')
const { default: AgentRegistry } = await import('@deepseek-ai/dsh-agent')
const { default: AgentLoop } = await import('@deepseek-ai/dsh-agent-loop')
const { default: LlmRuntime, LlmAdapter, createUserMessage } = await import('@deepseek-ai/dsh-llm')
const { default: SystemPrompt } = await import('@deepseek-ai/dsh-system-prompt')
const { default: ToolRuntime } = await import('@deepseek-ai/dsh-tools')

class ExactReadQueryEngine extends SessionQueryEngine {
  searchSessions() { return Promise.resolve({ items: [] }) }
  searchEvents(request) { return this.readSurface(request.sessionId).then(s => ({ session: s.session, items: [] })) }
}

/** A keyless model: records each request, answers from the script (default `reply N`). */
class ScriptedModel extends LlmAdapter {
  constructor(replies) {
    super()
    this.replies = [...replies]
    this.requests = []
    this.holds = new Map()
  }

  resolveModel(provider, model) {
    return Promise.resolve({ provider, id: model, name: model })
  }

  async * stream(options) {
    const { signal, ...rest } = options
    void signal
    const request = JSON.parse(JSON.stringify(rest))
    this.requests.push(request)
    this.onRequest?.(request)
    const reply = this.replies.shift() ?? `reply ${this.requests.length}`
    const hold = this.holds.get(this.requests.length)
    if (hold !== undefined) await hold
    yield { type: 'block-start', index: 0, blockType: 'text' }
    yield { type: 'text-delta', index: 0, text: reply }
    yield { type: 'block-end', index: 0, block: { type: 'text', text: reply } }
    yield { type: 'finish', reason: { kind: 'stop' } }
  }
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function userMessage(action) {
  let content = action.content
  if (content === undefined) {
    if (typeof action.text !== 'string') throw new ArgumentError('an action needs content or text')
    content = [{ type: 'text', text: action.text }]
  }
  return createUserMessage({ content, source: action.source ?? { kind: 'user' } })
}

const flush = () => new Promise(resolve => setImmediate(resolve))

/**
 * args: {target: {id, cwd?} | agents: [{id, cwd?}], sources: {id: seed session}, config?,
 *        replies?: string[],
 *        actions: [{do: followup|steer|inject|send|whenIdle|waitForRequest, agent?, text?|content?,
 *                   source?, n?}]}
 * Every agent lives in the same store, so one agent may reference another's session.
 * `waitForRequest n` holds the model's n-th request (counted over all agents) open until the
 * next whenIdle, so the following actions happen while that model call is in flight.
 * Returns {requests, log, replay, status} of the first agent plus `agents` keyed by id.
 */
op('release.run', 'agent.release-placement', async args => {
  const specs = Array.isArray(args.agents) ? args.agents : [arg(args, 'target')]
  if (specs.length === 0 || !specs.every(t => isObject(t) && typeof t.id === 'string')) {
    throw new ArgumentError('target (or every agents entry) must be an object with a string id')
  }
  resetIds() // every scenario numbers its message ids from 1 (decision D-144)
  const ctx = new Context()
  await ctx.plugin(SessionStore)
  await ctx.plugin(ExactReadQueryEngine)
  const store = ctx.get('sessions')
  for (const [key, log] of Object.entries(isObject(args.sources) ? args.sources : {})) {
    const header = isObject(log?.header) ? log.header : {}
    const id = typeof header.id === 'string' ? header.id : key
    const session = atTime(0, () => store.create(id, { meta: headerMeta(header) }))
    appendTranslated(session, id, log?.events)
  }
  for (const plugin of [LlmRuntime, SystemPrompt, ToolRuntime, AgentRegistry]) await ctx.plugin(plugin)
  await ctx.plugin(AgentLoop, { agents: [] })
  await ctx.plugin(SR.SessionReferenceResolver, args.config ?? {})
  const model = new ScriptedModel(Array.isArray(args.replies) ? args.replies : [])
  ctx.get('llm').registerAdapter(['mock'], model)
  const agents = new Map()
  for (const spec of specs) {
    const agent = ctx.get('agentLoop').create(spec.id, { provider: 'mock', model: 'mock' },
      typeof spec.cwd === 'string' ? { cwd: spec.cwd } : undefined)
    agents.set(spec.id, { agent, requests: [] })
  }
  model.onRequest = request => {
    const entry = agents.get(request.sessionId)
    if (entry !== undefined) entry.requests.push({ messages: request.messages })
  }
  const opened = []
  const settle = async () => {
    for (const release of opened.splice(0)) release()
    for (const { agent } of agents.values()) await agent.whenIdle()
  }
  for (const action of arg(args, 'actions')) {
    const entry = agents.get(action?.agent ?? specs[0].id)
    if (entry === undefined) throw new ArgumentError(`unknown agent ${JSON.stringify(action?.agent)}`)
    const agent = entry.agent
    switch (action?.do) {
      case 'followup': agent.followup(userMessage(action)); break
      case 'steer': agent.steer(userMessage(action)); break
      case 'inject': agent.inject(userMessage(action)); break
      case 'send': agent.send(userMessage(action), action.target ?? 'next-turn', action.wakeup ?? true); break
      case 'whenIdle': await settle(); break
      case 'waitForRequest': {
        const n = Number.isSafeInteger(action.n) ? action.n : 1
        if (model.requests.length >= n) throw new ArgumentError(`model request ${n} was already made`)
        const { promise, resolve } = Promise.withResolvers()
        model.holds.set(n, promise)
        opened.push(resolve)
        for (let i = 0; i < 200 && model.requests.length < n; i += 1) await flush()
        if (model.requests.length < n) throw new ArgumentError(`model request ${n} never came`)
        break
      }
      default:
        throw new ArgumentError(`unknown action ${JSON.stringify(action?.do)}`)
    }
  }
  await settle()
  const report = ({ agent, requests }) => ({
    requests,
    log: agent.session.events.map(event => {
      const out = { type: event.type, seq: event.seq, data: event.data }
      if (event.surfaceOp !== undefined) out.surfaceOp = event.surfaceOp
      return out
    }),
    replay: agent.session.deriveMessages(),
    status: agent.status,
  })
  const all = Object.fromEntries([...agents].map(([id, entry]) => [id, report(entry)]))
  return { ...all[specs[0].id], agents: all }
})
