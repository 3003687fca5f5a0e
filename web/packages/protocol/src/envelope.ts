import { Decoder, Encoder } from '@msgpack/msgpack';
import { checkMsgpack } from './check.js';
import { ProtocolError } from './errors.js';
import { MAX_DEPTH, MAX_FRAME } from './limits.js';
import type { Frame, MessageMap, MessageTypeName } from './messages.js';
import { bodies, isMessageType } from './schemas.js';

// One frame is a MessagePack map {t, id?, b?}, as protocol/envelope.go
// writes it: integers in their shortest form (the msgpack library's default),
// id omitted when 0, b omitted when there is no body.

const MAX_ID = 0xffff_ffff;

const encoder = new Encoder({ ignoreUndefined: true });

// checkMsgpack already bounds every length by the frame size; the decoder's
// own limits are a second fence.
const decoder = new Decoder({
  maxStrLength: MAX_FRAME,
  maxBinLength: MAX_FRAME,
  maxArrayLength: MAX_FRAME,
  maxMapLength: MAX_FRAME,
  maxExtLength: 0,
});

/**
 * Encodes one frame. Fields left out of `body` (or undefined) count as zero
 * and are omitted like Go's omitempty; `body` undefined means no body at all.
 */
export function encodeFrame<T extends MessageTypeName>(
  t: T,
  id: number,
  body?: Partial<MessageMap[T]>,
): Uint8Array {
  if (!Number.isInteger(id) || id < 0 || id > MAX_ID) throw new ProtocolError('malformed', `id ${id} is not a uint32`);
  const env: Record<string, unknown> = { t };
  if (id !== 0) env['id'] = id;
  if (body !== undefined) env['b'] = bodies[t].toWire(body as MessageMap[T]);
  const frame = encoder.encode(env);
  if (frame.length > MAX_FRAME) throw new ProtocolError('too_large', `frame too large: ${t} is ${frame.length} bytes`);
  return frame;
}

/**
 * Decodes one frame from an untrusted peer: size, structure and depth are
 * checked before decoding, then every body field is validated. Throws a
 * ProtocolError; kind 'unknown_type' is a well-formed frame of a type this
 * codec does not know, which a client may ignore.
 */
export function decodeFrame(data: Uint8Array | ArrayBuffer): Frame {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  if (bytes.length > MAX_FRAME) throw new ProtocolError('too_large', `frame too large: ${bytes.length} bytes`);
  checkMsgpack(bytes, MAX_DEPTH);
  let raw: unknown;
  try {
    raw = decoder.decode(bytes);
  } catch (err) {
    throw new ProtocolError('malformed', `malformed msgpack: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || raw instanceof Uint8Array) {
    throw new ProtocolError('malformed', 'envelope is not a map');
  }
  const env = raw as Record<string, unknown>;
  const t = env['t'] ?? '';
  if (typeof t !== 'string') throw new ProtocolError('malformed', 'envelope t is not a string');
  if (t === '') throw new ProtocolError('no_type', 'envelope has no type');
  const id = env['id'] ?? 0;
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_ID) {
    throw new ProtocolError('malformed', 'envelope id is not a uint32');
  }
  if (!isMessageType(t)) throw new ProtocolError('unknown_type', `unknown message type ${JSON.stringify(t)}`);
  // Go keeps a present body even if it is nil, and decodes it to zero values.
  if (!Object.hasOwn(env, 'b')) return { t, id } as Frame;
  return { t, id, b: bodies[t].fromWire(env['b'], t) } as Frame;
}

/** A frame's body, or the type's zero body if the frame had none. */
export function bodyOf<T extends MessageTypeName>(frame: { t: T; b?: MessageMap[T] }): MessageMap[T] {
  return frame.b ?? bodies[frame.t].zero();
}
