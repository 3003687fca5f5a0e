// hostrelay netcode: a host-authoritative game loop over a RoomSession.
// The host runs the simulation at a fixed tick and sends delta-compressed
// snapshots; clients send inputs, predict themselves and interpolate the
// rest. For deterministic games, LockstepSession runs rollback or
// host-clocked lockstep instead. See docs/netcode.md.
export { DEFAULT_HANDOVER_GRACE_MS, NetHost, type HostTick, type HostValidation, type NetHostEvents, type NetHostOptions } from './host/host.js';
export type { HostPeerStats } from './host/peer.js';
export { NetClient, type ClientView, type NetClientEvents, type NetClientOptions } from './client/client.js';
export type { Correction, PredictStep } from './client/prediction.js';
export type { EntityCorrection, PredictedEntities, PredictedTick } from './client/entity-prediction.js';
export type { PlayoutOptions } from './client/interpolation.js';
export { DEFAULT_SNAPSHOT_RATE, DEFAULT_TICK_RATE, type Handover, type NetGame, type NetPlayer, type NetView } from './game.js';
export {
  DEFAULT_MAX_ENTITIES,
  Schema,
  lerpEntity,
  type Entity,
  type FieldSpec,
  type FieldsOf,
  type Interpolation,
  type ReadonlyEntityMap,
  type SchemaOptions,
  type SchemaSpec,
} from './wire/schema.js';
export { buttonsCodec, type Buttons, type InputCodec } from './wire/input-codec.js';
export { hashBytes, hashEntities, HashLog, firstDivergentTick } from './wire/state-hash.js';
export type { DeterministicGame } from './lockstep/game.js';
export {
  DEFAULT_INPUT_DELAY,
  DEFAULT_LOCKSTEP_BUFFER,
  DEFAULT_MAX_ROLLBACK,
  DEFAULT_MAX_STATE_BYTES,
  DEFAULT_STALL_TIMEOUT_MS,
  LockstepSession,
  RESYNC_INTERVAL_MS,
  type Desync,
  type LockstepEvents,
  type LockstepOptions,
  type LockstepPhase,
  type LockstepStats,
  type Resync,
} from './lockstep/session.js';
export {
  MAX_FRAMES_PER_PACKET,
  MAX_LOCKSTEP_PLAYERS,
  MAX_LOCKSTEP_WINDOW,
  MAX_STATE_BYTES,
  STATE_CHUNK_BYTES,
  type LockstepMode,
  type RefusedCode,
  type ResyncReason,
} from './wire/lockstep-packets.js';
export { WireError } from './wire/bytes.js';
export { LagCompensator, MAX_REWIND_MS, type LagCompensationOptions } from './host/lag-compensation.js';
export { Validator, type Position, type ValidationRules, type Verdict, type Violation, type ViolationKind } from './host/validation.js';
export type { ClientStats, NetStats } from './stats.js';
export { FixedTicker } from './ticker.js';
export { browserScheduler, type NetChannel, type NetTransport, type NetTransportEvents, type Scheduler } from './transport/transport.js';
export { sessionTransport } from './transport/session-transport.js';
export { ConditionedTransport, NO_CONDITIONS, type ConditionerOptions, type ConditionerStats, type Conditions } from './transport/conditioner.js';
export { seededRandom, type Random } from './transport/rng.js';
export { SimClock } from './testing/sim-clock.js';
export { SimNetwork, type WireCount } from './testing/sim-network.js';
