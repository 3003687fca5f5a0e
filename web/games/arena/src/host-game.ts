// The host tab's side: owns the arena and the authoritative loop.
import {
  type Handover,
  NetHost,
  type HostPeerStats,
  type NetTransport,
  type ReadonlyEntityMap,
  type Scheduler,
} from '@hostrelay/netcode';
import { Arena } from './arena';
import { PLAYER_MAX_SPEED } from './physics';
import { arenaGame, BALL_ID, SNAPSHOT_RATE, type ArenaInput, type Field } from './schema';

/** Ball positions by tick, kept this long for tests. */
const BALL_HISTORY_TICKS = 60 * 30;

export class HostGame {
  readonly net: NetHost<ArenaInput, Field>;
  readonly arena: Arena;
  private readonly ballByTick = new Map<number, [number, number]>();

  /** With a handover, the game goes on from the world the old host last sent (host migration). */
  constructor(
    transport: NetTransport,
    readInput: () => ArenaInput,
    scheduler?: Scheduler,
    deltaCompression = true,
    handover?: Handover<Field>,
  ) {
    this.arena = handover ? Arena.fromHandover(handover) : new Arena();
    this.net = new NetHost<ArenaInput, Field>({
      transport,
      game: arenaGame,
      snapshotRate: SNAPSHOT_RATE,
      deltaCompression,
      scheduler,
      localInput: readInput,
      step: (t) => {
        const moved = this.arena.step(t);
        for (const id of moved) this.net.allowTeleport(id);
      },
      capture: () => this.arena.entities(),
      handover,
      validation: {
        // Collisions can shove a player faster than they run; 60 % slack covers a shove, not a speed hack.
        rules: { maxSpeed: PLAYER_MAX_SPEED, tolerance: 0.6, maxTeleport: 40 },
        position: (id) => this.arena.player(id),
      },
    });
    this.net.on('playerJoin', (p) => this.arena.join(p.id, p.slot));
    this.net.on('playerLeave', (p) => this.arena.leave(p.id));
    this.net.on('tick', (tick, entities) => {
      const ball = entities.get(BALL_ID);
      if (ball) this.ballByTick.set(tick, [ball.x, ball.y]);
      for (const t of this.ballByTick.keys()) {
        if (t > tick - BALL_HISTORY_TICKS) break;
        this.ballByTick.delete(t);
      }
    });
  }

  start(): void {
    this.net.start();
  }

  stop(): void {
    this.net.stop();
  }

  view(): ReadonlyEntityMap<Field> {
    this.net.update();
    return this.net.view();
  }

  /** [tick, x, y] of the ball after each recent tick. */
  ballHistory(): [number, number, number][] {
    return [...this.ballByTick].map(([t, [x, y]]) => [t, x, y]);
  }

  peerStats(): { id: string; stats: HostPeerStats }[] {
    const out: { id: string; stats: HostPeerStats }[] = [];
    for (const p of this.net.players) {
      const stats = this.net.stats(p.id);
      if (stats) out.push({ id: p.id, stats });
    }
    return out;
  }
}
