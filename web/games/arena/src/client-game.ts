// A joining tab's side: predicts its own player, and the ball while it is
// near it; interpolates the rest.
import { NetClient, type ClientView, type Entity, type NetTransport, type PredictedEntities, type Scheduler } from '@hostrelay/netcode';
import { KICK_COOLDOWN_TICKS, kickBall, movePlayer, rollBall, separatePlayers } from './physics';
import { ARENA_H, ARENA_W, arenaGame, BALL_ID, Kind, PLAYER_R, schema, type ArenaInput, type Field } from './schema';

/** The ball is predicted from when it comes this close to our player (centre to centre, px)… */
export const BALL_CATCH = 120;
/** …until it is this far again: the gap keeps it from flapping between the two. */
export const BALL_RELEASE = 200;
/** Kick cooldowns predicted this many inputs back are kept (2 s: longer than any replay). */
const COOLDOWN_MEMORY = 120;
/**
 * Others are carried at most this far ahead (s) to where we predict: past
 * a round trip plus the interpolation delay at 200 ms RTT a straight line
 * is more guess than help.
 */
const MAX_LEAD_S = 0.3;
/**
 * How much of the way from renderTick to predictedTick the others are
 * carried. A snapshot replays the inputs of about a round trip up to the
 * present, so the obstacles that matter are earlier than the present; and
 * the further they are carried, the more our player is drawn sunk into
 * others drawn in their past. At 100 ms RTT, player corrections shown as
 * jumps in ten seeded 60 s matches (sum of 30 clients), and frames drawing
 * our player over half a radius into another (seeds 3–5): 0 → 762, 1.4 %;
 * 0.3 → 190, 1.8 %; 0.6 → 136, 15 %; 1 → 416 (docs/netcode.md).
 */
const LEAD_SHARE = 0.3;
const TICK_RATE = arenaGame.tickRate ?? 60;

export interface ClientGameOptions {
  /** Predict the ball near our player (default true); false draws it interpolated, as before issue 29. */
  predictBall?: boolean;
}

export class ClientGame {
  readonly net: NetClient<ArenaInput, Field>;
  /** Players as last drawn, by entity id, the others carried to our present (see view): obstacles for our prediction (all but our own, see predict). */
  private drawnPlayers: [number, Entity<Field>][] = [];
  /**
   * Our kick cooldown after each input, as predicted. The host keeps it
   * outside the snapshots, so a replay after a snapshot continues from what
   * we predicted for the confirmed input.
   */
  private readonly cooldowns = new Map<number, number>();

  constructor(transport: NetTransport, readInput: () => ArenaInput, scheduler?: Scheduler, options: ClientGameOptions = {}) {
    this.net = new NetClient<ArenaInput, Field>({
      transport,
      game: arenaGame,
      scheduler,
      readInput,
      // Our own movement is exactly the host's. Bumping into others is a
      // guess (we see them in the past), but a far better one than walking
      // through them: a shoving match stays a small correction, not a big one.
      // Our own entity is left out by the id we predict now, not the one of the
      // frame: between a host change and the new host's welcome we have no slot,
      // a frame drawn then lists our entity among the others, and the first
      // ticks under the new host can run (on the netcode's timer) before the
      // next frame. Separated from a copy of itself, our player was pushed
      // PLAYER_R sideways at every host migration where that happened.
      predict: (e, input, dt) => {
        movePlayer(e, input, dt);
        const self = this.net.localEntityId;
        for (const [id, o] of this.drawnPlayers) if (id !== self) separatePlayers(e, schema.copy(o));
      },
      smoothFields: ['x', 'y'],
      smoothingMs: 100,
      // A goal puts everyone back on their spawn: that jump is real, show it as one.
      snapDistance: 60,
      // Bumping into another player is mispredicted (we draw them in the past):
      // ease the fix in at no more than 150 px/s, about half a player's top speed.
      maxCorrectionSpeed: 150,
      predictEntities: options.predictBall === false ? undefined : this.ballPrediction(),
    });
  }

  /**
   * The ball, near us, runs on our input as on the host: our push or kick
   * moves it in the frame we make it. Others push it where we draw them (in
   * the past), so their pushes are corrected when the host's state arrives.
   */
  private ballPrediction(): PredictedEntities<ArenaInput, Field> {
    return {
      select: (me, drawn, predicted) => {
        const ball = drawn.get(BALL_ID);
        if (!ball) return [];
        const reach = predicted.has(BALL_ID) ? BALL_RELEASE : BALL_CATCH;
        return Math.hypot(ball.x - me.x, ball.y - me.y) < reach ? [BALL_ID] : [];
      },
      step: ({ local, entities, input, seq, dt }) => {
        const ball = entities.get(BALL_ID);
        if (!ball) return;
        // The host's order: players move, then kick, then the ball rolls and bounces.
        let cooldown = this.cooldowns.get(seq - 1) ?? 0;
        if (cooldown > 0) cooldown--;
        if (cooldown === 0 && input.kick && kickBall(ball, local)) cooldown = KICK_COOLDOWN_TICKS;
        this.cooldowns.set(seq, cooldown);
        this.cooldowns.delete(seq - COOLDOWN_MEMORY);
        const self = this.net.localEntityId;
        const others = this.drawnPlayers.filter(([id]) => id !== self).map(([, e]) => e);
        // A goal: the host puts the ball back on the spot, and the snapshot will say so; until then it stays in the net.
        if (rollBall(ball, dt, [local, ...others])) Object.assign(ball, { vx: 0, vy: 0 });
      },
      smoothFields: ['x', 'y'],
      smoothingMs: 100,
      // A goal reset moves the ball 450 px or more: show it as a jump.
      snapDistance: 240,
      // Fast enough that a ball caught from its interpolated past joins its
      // predicted present within about half a second; at most 5 px a frame.
      maxCorrectionSpeed: 300,
      // Left behind, the ball goes back to interpolation once its past is
      // within 80 px of its present (a slide of at most a quarter second);
      // a fast ball stays predicted until it slows. Smaller waits longer, and
      // the ball far away, predicted, gets bigger corrections from others'
      // pushes (at 16 px, 9–10 shown as jumps a minute in the seeded match).
      releaseGap: 80,
    };
  }

  start(): void {
    this.net.start();
  }

  stop(): void {
    this.net.stop();
  }

  view(): ClientView<Field> {
    const v = this.net.view();
    this.drawnPlayers = [];
    // Others are drawn at renderTick, our prediction runs at predictedTick.
    // Against their past we bumped into players who had moved on and missed
    // those who had come: shoves the host corrected by 60–100 px, shown as
    // jumps (issue 29, docs/netcode.md). Carried along their velocity
    // LEAD_SHARE of the way to our present, they are nearer where the host
    // has them during the inputs a snapshot makes us replay.
    const lead = Math.min(MAX_LEAD_S, Math.max(0, (LEAD_SHARE * (v.predictedTick - v.renderTick)) / TICK_RATE));
    for (const [id, e] of v.entities) {
      if (e.kind !== Kind.Player) continue;
      if (id === v.localId) {
        this.drawnPlayers.push([id, e]);
        continue;
      }
      const o = schema.copy(e);
      o.x = Math.min(ARENA_W - PLAYER_R, Math.max(PLAYER_R, o.x + o.vx * lead));
      o.y = Math.min(ARENA_H - PLAYER_R, Math.max(PLAYER_R, o.y + o.vy * lead));
      this.drawnPlayers.push([id, o]);
    }
    return v;
  }
}
