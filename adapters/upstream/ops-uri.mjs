// URI, mention and tag-safe serialization ops (mirrors adapters/reference/uri_ops.py).

import { arg, op } from './core.mjs'

const SR = await import('@deepseek-ai/dsh-session-reference')
// The per-module build under lib/types/ is shipped but not exported; reach it by file URL.
const packageUrl = import.meta.resolve('@deepseek-ai/dsh-session-reference/package.json')
export const serialization = await import(new URL('./lib/types/serialization.js', packageUrl).href)
export const projection = await import(new URL('./lib/types/projection.js', packageUrl).href)
export { SR }

op('uri.encode', 'uri', args => SR.encodeSessionReferenceUri(arg(args, 'sessionId')))
op('uri.decode', 'uri', args => SR.decodeSessionReferenceUri(arg(args, 'uri')))
op('mention.format', 'uri', args => {
  const reference = { sessionId: arg(args, 'sessionId') }
  if (Object.hasOwn(args, 'label')) reference.label = args.label
  return SR.formatSessionReferenceMention(reference)
})
op('mention.parse', 'mention', args => SR.parseSessionReferenceText(arg(args, 'text')))
// stringifyTagSafeJson throws a plain TypeError for a value JSON.stringify drops.
op('json.tagSafe', 'serialization',
  args => serialization.stringifyTagSafeJson(Object.hasOwn(args, 'value') ? args.value : undefined),
  { TypeError: 'DSH_JSON_NOT_SERIALIZABLE' })
