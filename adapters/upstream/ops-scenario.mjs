// scenario.run on the published agent loop (capability scenario, docs/scenario.md).
//
// One fresh ReactLoopAgent runs the whole script in the release's own schedule.  The adapter
// only observes through what a host has: its model adapter (requests, held replies), its
// tools' execute, the session's append feed (`session/event`) and whenIdle().  The release
// has no SendOptions.contexts, no inject meta and no agent/prompt-submit (D-149): such
// steps fail with DSH_UNSUPPORTED_OPTION as their outcome, such listeners and `submit`
// triggers reject the script.  Nothing of them is emulated.  The log is read back in the
// seed vocabulary (D-158, translate.mjs `toSeedLog`).

import { op, resetIds, errorReply } from './core.mjs'
import { SR } from './ops-uri.mjs'
import { appendTranslated, atTime, headerMeta, toSeedLog } from './translate.mjs'

const { Context } = await import('@deepseek-ai/cordis')
const { default: SessionStore } = await import('@deepseek-ai/dsh-session')
const { default: SessionQueryEngine } = await import('@deepseek-ai/dsh-session-query')
const { default: AgentRegistry } = await import('@deepseek-ai/dsh-agent')
const { default: AgentLoop } = await import('@deepseek-ai/dsh-agent-loop')
const { default: LlmRuntime, LlmAdapter, LlmError, createUserMessage } = await import('@deepseek-ai/dsh-llm')
const { default: SystemPrompt } = await import('@deepseek-ai/dsh-system-prompt')
const { default: ToolRuntime, defineContentToolFixture } = await import('@deepseek-ai/dsh-tools')

class ExactReadQueryEngine extends SessionQueryEngine {
  searchSessions() { return Promise.resolve({ items: [] }) }
  searchEvents(request) { return this.readSurface(request.sessionId).then(s => ({ session: s.session, items: [] })) }
}

class ScenarioError extends Error {
  constructor(code, pointer, message) {
    super(`${pointer}: ${message}`)
    this.name = 'ScenarioError'
    this.code = code
  }
}

const invalid = (pointer, message) => new ScenarioError('DSH_SCENARIO_INVALID', pointer, message)
const unsupported = (pointer, message) => new ScenarioError('DSH_UNSUPPORTED_OPTION', pointer, message)

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

const ACTIONS = new Set(['send', 'steer', 'inject', 'cancel', 'dispose', 'prepare'])
const TRIGGERS = ['submit', 'request', 'toolCall', 'turnEnd', 'idle']

/** The trigger key of a step: 'start' or e.g. 'request:2'. Throws for a malformed one. */
function triggerKey(on, pointer) {
  if (on === undefined || on === 'start') return 'start'
  if (!isObject(on) || Object.keys(on).length !== 1 || !TRIGGERS.includes(Object.keys(on)[0])) {
    throw invalid(pointer, `unknown trigger ${JSON.stringify(on)}`)
  }
  const [name] = Object.keys(on)
  const value = on[name]
  if (name === 'toolCall' ? typeof value !== 'string' : !(Number.isSafeInteger(value) && value >= 1)) {
    throw invalid(pointer, `bad ${name} trigger ${JSON.stringify(value)}`)
  }
  if (name === 'submit') {
    throw unsupported(pointer, 'the release has no agent/prompt-submit, so a {submit: k} trigger cannot fire (D-149)')
  }
  return `${name}:${value}`
}

/** Validate the whole script before anything runs (docs/scenario.md "Bad scripts"). */
function validate(script) {
  if (!isObject(script)) throw invalid('', 'a script must be an object')
  const agent = script.agent
  if (!isObject(agent) || typeof agent.id !== 'string') throw invalid('/agent', 'an agent needs a string id')
  if (Array.isArray(agent.seed) && agent.seed.length > 0) {
    throw unsupported('/agent/seed', 'the upstream adapter builds only fresh agents (no seeded session)')
  }
  const options = isObject(agent.options) ? agent.options : {}
  for (const key of ['persona', 'sections']) {
    if (options[key] !== undefined) throw unsupported(`/agent/options/${key}`, `the release's agent has no ${key} option`)
  }
  const tools = new Map()
  for (const [i, tool] of (Array.isArray(options.tools) ? options.tools : []).entries()) {
    if (!isObject(tool) || typeof tool.name !== 'string') throw invalid(`/agent/options/tools/${i}`, 'a tool needs a name')
    tools.set(tool.name, tool)
  }
  for (const [i, listener] of (Array.isArray(script.listeners) ? script.listeners : []).entries()) {
    const event = listener?.event ?? 'prompt-submit'
    if (event === 'turn-stop' && listener?.kind === 'none') continue
    if (event === 'prompt-submit' && listener?.kind === 'pass') continue
    throw unsupported(`/listeners/${i}`, event === 'prompt-submit'
      ? 'the release has no agent/prompt-submit (agent/pre-step runs on every step, steering included), so a prompt-submit decision has no faithful equivalent (D-149)'
      : 'a terminal turn-stop decision has no faithful equivalent in the release (agent/turn-stopping cannot end a turn with queued input discarded)')
  }
  const replies = Array.isArray(script.replies) ? script.replies : []
  const callIds = new Set()
  for (const [i, reply] of replies.entries()) {
    if (!isObject(reply)) throw invalid(`/replies/${i}`, 'a reply must be an object')
    const kinds = ['text', 'toolCalls', 'error', 'hang'].filter(k => reply[k] !== undefined)
    if (kinds.length === 0 || (reply.hang !== undefined && (reply.hang !== true || kinds.length > 1))
      || (reply.error !== undefined && kinds.length > 1)) {
      throw invalid(`/replies/${i}`, 'a reply is text, toolCalls, error or hang')
    }
    if (reply.partial !== undefined && (typeof reply.partial !== 'string' || (reply.hang === undefined && reply.error === undefined))) {
      throw invalid(`/replies/${i}/partial`, 'partial is a string beside hang or error')
    }
    if (reply.toolCalls !== undefined) {
      if (!Array.isArray(reply.toolCalls) || reply.toolCalls.length === 0) throw invalid(`/replies/${i}/toolCalls`, 'tool calls must be a non-empty array')
      for (const [j, call] of reply.toolCalls.entries()) {
        const pointer = `/replies/${i}/toolCalls/${j}`
        if (!isObject(call) || typeof call.id !== 'string' || typeof call.name !== 'string') throw invalid(pointer, 'a tool call needs a string id and name')
        if (callIds.has(call.id)) throw invalid(pointer, `duplicate tool call id ${JSON.stringify(call.id)}`)
        callIds.add(call.id)
        if (!tools.has(call.name)) throw new ScenarioError('DSH_SCENARIO_UNKNOWN_TOOL', pointer, `no tool ${JSON.stringify(call.name)} in agent.options.tools`)
      }
    }
  }
  if (!Array.isArray(script.steps)) throw invalid('/steps', 'steps must be an array')
  const keys = []
  let messages = 0
  for (const [i, step] of script.steps.entries()) {
    const pointer = `/steps/${i}`
    if (!isObject(step) || !ACTIONS.has(step.do)) throw invalid(pointer, `unknown action ${JSON.stringify(step?.do)}`)
    if (step.prepared !== undefined) {
      const k = step.prepared
      if (!['send', 'steer'].includes(step.do) || !Number.isSafeInteger(k) || k < 0 || k >= i || script.steps[k]?.do !== 'prepare') {
        throw invalid(`${pointer}/prepared`, 'no earlier prepare step')
      }
    }
    if (step.do === 'prepare') {
      if (!Array.isArray(step.references)) throw invalid(pointer, 'prepare needs references')
      if (step.content === undefined && typeof step.text !== 'string') throw invalid(pointer, 'prepare needs content or text')
      const on = step.on ?? 'start'
      if (on !== 'start' && !(isObject(on) && on.idle !== undefined)) throw invalid(`${pointer}/on`, 'prepare runs on start or idle')
    }
    if (['send', 'steer', 'inject'].includes(step.do)) {
      messages += 1
      if (step.content === undefined && typeof step.text !== 'string' && step.prepared === undefined) throw invalid(pointer, `${step.do} needs content or text`)
      if (step.do === 'inject' && step.contexts !== undefined) throw invalid(`${pointer}/contexts`, 'an inject takes no contexts')
    }
    keys.push(triggerKey(step.on, `${pointer}/on`))
  }
  for (const [i, key] of keys.entries()) {
    const [name, raw] = key.split(/:(.*)/s)
    const pointer = `/steps/${i}/on`
    if (name === 'request' && Number(raw) > replies.length) throw new ScenarioError('DSH_SCENARIO_UNREACHABLE', pointer, `no reply ${raw}`)
    if (name === 'toolCall' && !callIds.has(raw)) throw new ScenarioError('DSH_SCENARIO_UNREACHABLE', pointer, `no tool call ${JSON.stringify(raw)} in the replies`)
    if (name === 'turnEnd' && Number(raw) > messages) throw new ScenarioError('DSH_SCENARIO_UNREACHABLE', pointer, `turn ${raw} cannot happen`)
  }
  for (const [i, reply] of replies.entries()) {
    if (reply.hang !== true) continue
    const ended = script.steps.some((s, k) => keys[k] === `request:${i + 1}` && (s.do === 'cancel' || s.do === 'dispose'))
    if (!ended) throw new ScenarioError('DSH_SCENARIO_UNREACHABLE', `/replies/${i}`, 'a hanging reply needs a cancel or dispose step on its request')
  }
  return { keys, tools, replies }
}

/** A keyless model adapter: records each request, runs the request's steps, then answers. */
class ScenarioModel extends LlmAdapter {
  constructor(replies, onRequest) {
    super()
    this.replies = replies
    this.onRequest = onRequest
    this.count = 0
  }

  resolveModel(provider, model) {
    return Promise.resolve({ provider, id: model, name: model })
  }

  async * stream(options) {
    const { signal } = options
    this.count += 1
    const n = this.count
    const reply = this.replies[n - 1]
    if (typeof reply?.partial === 'string') {
      // An unfinished stream: a text block opened and streamed, never ended.  The request's
      // steps run once the loop has pulled the partial text (a cancel lands mid-stream).
      yield { type: 'block-start', index: 0, blockType: 'text' }
      yield { type: 'text-delta', index: 0, text: reply.partial }
    }
    await this.onRequest(n, options)
    if (reply === undefined) {
      throw new LlmError(`model request ${n} has no scripted reply`, 'DSH_AGENT_SCRIPT_EXHAUSTED')
    }
    if (reply.hang === true) {
      await new Promise(resolve => {
        if (signal?.aborted) resolve()
        else signal?.addEventListener('abort', resolve, { once: true })
      })
      throw signal?.reason ?? new Error('aborted')
    }
    if (reply.error !== undefined) {
      // A provider failure is the release's LlmError (its code reaches turn/end); without a
      // code it is a plain adapter failure, which the release records as code UNKNOWN.
      throw reply.code === undefined ? new Error(reply.error) : new LlmError(reply.error, String(reply.code))
    }
    let index = 0
    if (typeof reply.text === 'string') {
      yield { type: 'block-start', index, blockType: 'text' }
      yield { type: 'text-delta', index, text: reply.text }
      yield { type: 'block-end', index, block: { type: 'text', text: reply.text } }
      index += 1
    }
    for (const call of reply.toolCalls ?? []) {
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {})
      yield { type: 'block-start', index, blockType: 'tool-call' }
      yield { type: 'tool-call-delta', index, id: call.id, name: call.name, argumentsDelta: args }
      yield { type: 'block-end', index, block: { type: 'tool-call', id: call.id, name: call.name, arguments: args } }
      index += 1
    }
    yield { type: 'finish', reason: { kind: reply.toolCalls ? 'tool-calls' : 'stop' } }
  }
}

/** {"$hostile": KIND} markers as the native values JSON cannot carry (D-68). */
function hostile(kind) {
  switch (kind) {
    case 'NaN': return NaN
    case 'Infinity': return Infinity
    case '-Infinity': return -Infinity
    case '-0': return -0
    case 'undefined': return undefined
    case 'cycle': { const loop = []; loop.push(loop); return loop }
    case 'non-string-key': return new Map([[1, 'one']])
    case 'bigint': return 2n ** 64n
    case 'function': return () => undefined
    default: throw invalid('', `unknown hostile value ${JSON.stringify(kind)}`)
  }
}

function decode(value) {
  if (Array.isArray(value)) return value.map(decode)
  if (isObject(value)) {
    const keys = Object.keys(value)
    if (keys.length === 1 && keys[0] === '$hostile') return hostile(value.$hostile)
    return Object.fromEntries(keys.map(k => [k, decode(value[k])]))
  }
  return value
}

function content(step) {
  return step.content !== undefined ? decode(step.content) : [{ type: 'text', text: step.text }]
}

/**
 * args: a scenario script (spec/schemas/ops/scenario.json).
 * Returns {requests, log (seed vocabulary, D-158), steps, status}.
 */
op('scenario.run', 'scenario', async script => {
  const { keys, tools, replies } = validate(script)
  resetIds()
  const options = isObject(script.agent.options) ? script.agent.options : {}
  const provider = typeof options.provider === 'string' ? options.provider : 'mock'
  const modelName = typeof options.model === 'string' ? options.model : 'scripted'
  const ctx = new Context()
  await ctx.plugin(SessionStore)
  await ctx.plugin(ExactReadQueryEngine)
  for (const plugin of [LlmRuntime, SystemPrompt, ToolRuntime, AgentRegistry]) await ctx.plugin(plugin)
  await ctx.plugin(AgentLoop, { agents: [] })
  const store = ctx.get('sessions')
  for (const [id, log] of Object.entries(isObject(script.sessions) ? script.sessions : {})) {
    // other sessions the host's store holds, readable by prepare steps
    const header = isObject(log?.header) ? log.header : {}
    const session = atTime(0, () => store.create(id, { meta: headerMeta(header) }))
    appendTranslated(session, id, log?.events)
  }

  const byKey = new Map()
  for (const [i, key] of keys.entries()) {
    if (!byKey.has(key)) byKey.set(key, [])
    byKey.get(key).push(i)
  }
  const outcomes = script.steps.map(() => ({ fired: false }))
  const requests = []
  const pending = []
  let agent
  let handle
  let disposed = false
  let disposal

  const logLength = () => toSeedLog(agent.session.events, script.agent.id).length
  const act = (given) => {
    let step = given
    switch (step.do) {
      case 'send':
      case 'steer': {
        if (step.prepared !== undefined) {
          const earlier = outcomes[step.prepared]
          if (earlier.prepared === undefined) {
            throw new ScenarioError('DSH_SCENARIO_UNREACHABLE', `/steps/${script.steps.indexOf(step)}/prepared`, 'that preparation gave no result')
          }
          step = { ...step, content: earlier.prepared.content }
          if (earlier.prepared.contexts.length > 0) step.contexts = earlier.prepared.contexts
        }
        if (step.contexts !== undefined) {
          throw unsupported(`/steps/${script.steps.indexOf(step)}/contexts`, 'the release has no SendOptions.contexts (D-149)')
        }
        const message = createUserMessage({ content: content(step), source: step.source === undefined ? { kind: 'user' } : decode(step.source) })
        acting = step.do === 'steer' && agent.status === 'running' ? 'steering' : 'queued'
        try {
          if (step.do === 'send') agent.followup(message)
          else agent.steer(message)
        } finally {
          acting = undefined
        }
        return
      }
      case 'inject': {
        if (step.meta !== undefined) {
          throw unsupported(`/steps/${script.steps.indexOf(step)}/meta`, 'the release\'s inject takes a UserMessage only; it has no model-hidden meta (D-149)')
        }
        agent.inject(createUserMessage({ content: content(step), source: step.source === undefined ? { kind: 'user' } : decode(step.source) }))
        return
      }
      case 'cancel':
        agent.cancel(step.cause === undefined ? { kind: 'user' } : decode(step.cause))
        return
      case 'dispose':
        if (disposal === undefined) {
          disposed = true
          disposal = handle.dispose()
          pending.push(disposal.catch(() => undefined))
        }
        return
    }
  }
  /** The host's prepare(): the release's resolver on the live store (agent's session included). */
  const prepare = async (step) => {
    // The host's resolver, on its own Context over the same store: the agent's loop is
    // left without the session-reference plugin, so it sees only what the host sends.
    const hostCtx = new Context()
    hostCtx.provide('sessionQuery', ctx.get('sessionQuery'))
    await hostCtx.plugin(SR.SessionReferenceResolver, {})
    const resolver = hostCtx.get('sessionReferenceResolver')
    const target = typeof step.target === 'string' ? step.target : script.agent.id
    const result = await resolver.prepare({ id: target, session: { id: target, header: {} } }, content(step), step.references)
    const contexts = result.additionalContext === undefined
      ? []
      : [{ source: result.additionalContext.source, content: result.additionalContext.content }]
    return JSON.parse(JSON.stringify({ content: result.content, contexts }))
  }
  /** Run the steps bound to `key` in script order; prepare steps (start and idle only) are awaited. */
  const fire = (key) => {
    const indexes = byKey.get(key) ?? []
    byKey.delete(key)
    let chain
    for (const i of indexes) {
      const run = () => {
        const outcome = { fired: true, status: disposed ? 'disposed' : agent.status, logLength: logLength() }
        outcomes[i] = outcome
        const fail = (error) => {
          const { code, message } = errorReply(error, {})
          outcome.error = { code, message }
        }
        if (script.steps[i].do === 'prepare') {
          return prepare(script.steps[i]).then(prepared => { outcome.prepared = prepared }, fail)
        }
        try {
          act(script.steps[i])
        } catch (error) {
          fail(error)
        }
        return undefined
      }
      if (chain !== undefined) chain = chain.then(run)
      else chain = run()
    }
    return chain
  }

  const model = new ScenarioModel(replies, async (n, request) => {
    const captured = { provider: request.provider, model: request.model, messages: JSON.parse(JSON.stringify(request.messages)) }
    if (request.system !== undefined) captured.system = request.system
    if (request.tools !== undefined) captured.tools = JSON.parse(JSON.stringify(request.tools))
    captured.sessionId = request.sessionId ?? script.agent.id
    requests.push(captured)
    fire(`request:${n}`)
  })
  ctx.get('llm').registerAdapter([provider], model)
  for (const tool of tools.values()) {
    const result = tool.result ?? [{ type: 'text', text: 'ok' }]
    ctx.get('tools').register(defineContentToolFixture({
      name: tool.name,
      description: typeof tool.description === 'string' ? tool.description : tool.name,
      parameters: {},
      async execute(_args, exec) {
        fire(`toolCall:${exec.callId}`)
        return JSON.parse(JSON.stringify(result))
      },
    }))
  }
  // agent/queued has no release counterpart; agent/inbox/inserted is what a host observes of
  // an inbox insertion (the release's inject goes through the inbox too). Its records carry
  // no contexts: the release has none (D-149).
  const queued = []
  let acting
  ctx.on('agent/inbox/inserted', (...args) => {
    const payload = args.find(a => isObject(a) && isObject(a.message)) ?? {}
    const message = payload.message ?? {}
    queued.push(JSON.parse(JSON.stringify({
      content: message.content, source: message.source, contexts: [], steering: acting === 'steering',
    })))
  })
  ctx.on('session/event', (session, event) => {
    // The feed runs inside the append's publication boundary, where the release refuses a
    // nested append (every host action appends); the steps run on the next microtask.
    if (session.id === script.agent.id && event.type === 'turn/end') {
      const key = `turnEnd:${event.data?.turn}`
      queueMicrotask(() => fire(key))
    }
  })

  handle = await ctx.get('agentLoop').createAgent(ctx, { sessionId: script.agent.id, agentOptions: { provider, model: modelName } })
  agent = handle.agent
  const settle = async () => {
    if (!disposed) await agent.whenIdle()
    await Promise.all(pending)
  }
  await fire('start')
  const idles = keys.filter(k => k.startsWith('idle:')).map(k => Number(k.slice(5)))
  const last = idles.length > 0 ? Math.max(...idles) : 0
  for (let k = 1; k <= last; k += 1) {
    await settle()
    await fire(`idle:${k}`)
  }
  await settle()
  const events = agent.session.events
  const header = { id: script.agent.id, createdAt: 0 }
  if (!disposed) await handle.dispose().catch(() => undefined)
  return {
    requests,
    log: { header, events: toSeedLog(events, script.agent.id) },
    steps: outcomes,
    status: disposed ? 'disposed' : 'idle',
    queued,
  }
})
