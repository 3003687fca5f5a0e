// The lobby wire codec, mirroring the Go package protocol.
export * from './errors';
export * from './limits';
export * from './messages';
export { bodyOf, decodeFrame, encodeFrame } from './envelope';
export { checkMsgpack } from './check';
