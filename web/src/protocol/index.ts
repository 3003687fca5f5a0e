// The lobby wire codec, mirroring the Go package protocol.
export * from './errors';
export * from './limits';
export * from './messages';
export { bodyOf, decodeFrame, encodeFrame } from './envelope';
export { checkMsgpack } from './check';
export { nameSkeleton, normalizeName, normalizeText, playerNameProblem, sameName, textProblem } from './names';
export type { NameSkeleton } from './names';
