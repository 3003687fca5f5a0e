// hostrelay netcode: a host-authoritative game loop over a RoomSession.
// The host runs the simulation at a fixed tick and sends delta-compressed
// snapshots; clients send inputs, predict themselves and interpolate the
// rest. See docs/netcode.md.
export { DEFAULT_HANDOVER_GRACE_MS, NetHost, type HostTick, type HostValidation, type NetHostEvents, type NetHostOptions } from './host/host';
export type { HostPeerStats } from './host/peer';
export { NetClient, type ClientView, type NetClientEvents, type NetClientOptions } from './client/client';
export type { Correction, PredictStep } from './client/prediction';
export type { PlayoutOptions } from './client/interpolation';
export { DEFAULT_SNAPSHOT_RATE, DEFAULT_TICK_RATE, type Handover, type NetGame, type NetPlayer } from './game';
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
} from './wire/schema';
export { buttonsCodec, type Buttons, type InputCodec } from './wire/input-codec';
export { hashEntities, HashLog, firstDivergentTick } from './wire/state-hash';
export { WireError } from './wire/bytes';
export { LagCompensator, MAX_REWIND_MS, type LagCompensationOptions } from './host/lag-compensation';
export { Validator, type Position, type ValidationRules, type Verdict, type Violation, type ViolationKind } from './host/validation';
export type { ClientStats, NetStats } from './stats';
export { FixedTicker } from './ticker';
export { browserScheduler, type NetChannel, type NetTransport, type NetTransportEvents, type Scheduler } from './transport/transport';
export { sessionTransport } from './transport/session-transport';
export { ConditionedTransport, NO_CONDITIONS, type ConditionerOptions, type ConditionerStats, type Conditions } from './transport/conditioner';
export { seededRandom, type Random } from './transport/rng';
export { SimClock } from './testing/sim-clock';
export { SimNetwork, type WireCount } from './testing/sim-network';
