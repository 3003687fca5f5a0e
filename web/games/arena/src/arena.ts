// The host's world: players, the ball and the score, stepped once per tick.
import type { Entity, Handover, HostTick } from '@hostrelay/netcode';
import { KICK_COOLDOWN_TICKS, kickBall, movePlayer, rollBall, separatePlayers, type Goal } from './physics';
import { ARENA_H, ARENA_W, BALL_ID, Kind, SCORE_ID, schema, teamOf, type ArenaInput, type Field } from './schema';

interface Body {
  slot: number;
  e: Entity<Field>;
  cooldown: number;
}

export class Arena {
  readonly ball: Entity<Field>;
  readonly score: Entity<Field>;
  private readonly bodies = new Map<string, Body>();

  constructor() {
    this.ball = schema.blank();
    this.ball.kind = Kind.Ball;
    this.score = schema.blank();
    this.score.kind = Kind.Score;
    this.resetBall();
  }

  /**
   * The world a new host continues from when the old one went away: the
   * ball, the score and every handed-over player where the last snapshot
   * had them. The old host's player is not in `players`, so it is gone.
   */
  static fromHandover(h: Handover<Field>): Arena {
    const a = new Arena();
    const ball = h.entities.get(BALL_ID);
    if (ball) Object.assign(a.ball, ball);
    const score = h.entities.get(SCORE_ID);
    if (score) Object.assign(a.score, score);
    for (const p of h.players) {
      const e = h.entities.get(p.slot);
      if (e?.kind === Kind.Player) a.bodies.set(p.id, { slot: p.slot, e: schema.copy(e), cooldown: 0 });
    }
    return a;
  }

  /** A player enters; one already here (handed over from the old host) stays where it is. */
  join(id: string, slot: number): void {
    if (this.bodies.get(id)?.slot === slot) return;
    const e = schema.blank();
    e.kind = Kind.Player;
    e.team = teamOf(slot);
    this.bodies.set(id, { slot, e, cooldown: 0 });
    this.spawn(id);
  }

  leave(id: string): void {
    this.bodies.delete(id);
  }

  player(id: string): Readonly<Entity<Field>> | null {
    return this.bodies.get(id)?.e ?? null;
  }

  /** One tick. Returns the ids of players moved by a goal reset (legitimate teleports). */
  step(t: HostTick<ArenaInput>): string[] {
    for (const [id, b] of this.bodies) {
      const input = t.inputs.get(id);
      if (input) movePlayer(b.e, input, t.dt);
      // Round now, exactly as the client's prediction does after the same step.
      schema.quantize(b.e);
    }
    const list = [...this.bodies.values()];
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) separatePlayers(list[i]!.e, list[j]!.e);
    }
    // A kick is judged against the ball as it is now: that is where a
    // client near the ball saw it, because it predicts the ball (ClientGame).
    for (const [id, b] of this.bodies) {
      if (b.cooldown > 0) b.cooldown--;
      if (b.cooldown === 0 && t.inputs.get(id)?.kick && kickBall(this.ball, b.e)) b.cooldown = KICK_COOLDOWN_TICKS;
    }
    const goal = rollBall(this.ball, t.dt, [...this.bodies.values()].map((b) => b.e));
    for (const b of this.bodies.values()) schema.quantize(b.e);
    schema.quantize(this.ball);
    return goal ? this.scoreGoal(goal) : [];
  }

  *entities(): Iterable<readonly [number, Entity<Field>]> {
    for (const b of this.bodies.values()) yield [b.slot, b.e];
    yield [BALL_ID, this.ball];
    yield [SCORE_ID, this.score];
  }

  private scoreGoal(goal: Goal): string[] {
    // The ball in the left goal is a point for the right team, and the other way round.
    if (goal === 'left') this.score.scoreR++;
    else this.score.scoreL++;
    this.resetBall();
    for (const id of this.bodies.keys()) this.spawn(id);
    return [...this.bodies.keys()];
  }

  private resetBall(): void {
    Object.assign(this.ball, { x: ARENA_W / 2, y: ARENA_H / 2, vx: 0, vy: 0 });
  }

  private spawn(id: string): void {
    const b = this.bodies.get(id);
    if (!b) return;
    const team = teamOf(b.slot);
    const mates = [...this.bodies.values()].filter((o) => teamOf(o.slot) === team).sort((p, q) => p.slot - q.slot);
    const k = mates.indexOf(b);
    const rows = Math.max(1, mates.length);
    Object.assign(b.e, {
      x: team === 0 ? ARENA_W * 0.25 : ARENA_W * 0.75,
      y: (ARENA_H * (k + 1)) / (rows + 1),
      vx: 0,
      vy: 0,
    });
    schema.quantize(b.e);
  }
}
