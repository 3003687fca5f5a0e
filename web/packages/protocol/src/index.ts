// The lobby wire codec, mirroring the Go package protocol.
export * from './errors.js';
export * from './limits.js';
export * from './messages.js';
export { bodyOf, decodeFrame, encodeFrame } from './envelope.js';
export { checkMsgpack } from './check.js';
export { nameSkeleton, normalizeName, normalizeText, playerNameProblem, sameName, textProblem } from './names.js';
export type { NameSkeleton } from './names.js';
