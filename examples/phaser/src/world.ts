// The host's world: one Phaser arcade body per player, stepped by NetHost's
// ticks instead of Phaser's frames. Arcade physics moves the bodies, keeps
// them in the field and pushes players apart; its collider callback is
// where a tag happens. Only the host's tab has this world: it is the
// authority, and clients see it only through snapshots.
import type { Entity } from '@hostrelay/netcode';
import type * as Phaser from 'phaser';
import { H, nextIt, R, schema, spawnPoint, steer, touch, W, type Field, type Seat, type TagInput } from './rules';

type Body = Phaser.Physics.Arcade.Body;

interface Player extends Seat {
  readonly body: Body;
}

export class TagWorld {
  private readonly players = new Map<string, Player>();
  private readonly bodies: Body[] = [];
  private readonly byBody = new Map<Body, Player>();

  constructor(private readonly physics: Phaser.Physics.Arcade.ArcadePhysics) {
    // NetHost's fixed ticks step the world (step() below), whatever the frame
    // rate and even while the tab is hidden and Phaser draws nothing; paused,
    // Phaser's own frame update leaves the bodies alone.
    physics.world.pause();
    physics.world.setBounds(0, 0, W, H);
  }

  /** The number of arcade bodies in the world: one per player. */
  get bodyCount(): number {
    return this.physics.world.bodies.size;
  }

  join(id: string, slot: number): void {
    const { x, y } = spawnPoint(slot);
    const body = this.physics.add.body(x - R, y - R);
    body.setCircle(R);
    body.setCollideWorldBounds(true);
    const player: Player = { slot, body, entity: { ...schema.blank(), x, y } };
    this.players.set(id, player);
    this.bodies.push(body);
    this.byBody.set(body, player);
    this.chooseIt();
  }

  leave(id: string): void {
    const p = this.players.get(id);
    if (!p) return;
    this.players.delete(id);
    this.bodies.splice(this.bodies.indexOf(p.body), 1);
    this.byBody.delete(p.body);
    this.physics.world.remove(p.body);
    p.body.destroy();
    // A newcomer may get this slot: nobody is barred from tagging them.
    for (const q of this.players.values()) if (q.entity.tagger === p.slot + 1) q.entity.tagger = 0;
    this.chooseIt();
  }

  /** One tick: each player's input becomes its body's velocity, then arcade physics moves and separates them. */
  step(inputs: ReadonlyMap<string, TagInput>, dt: number): void {
    for (const [id, p] of this.players) {
      steer(p.entity, inputs.get(id) ?? { x: 0, y: 0 });
      p.body.resetFlags(); // what Phaser's own frame update does before a step
      p.body.setVelocity(p.entity.vx, p.entity.vy);
    }
    this.physics.world.step(dt);
    // Every pair of bodies (the array against itself): pushed apart, and touching is tagging.
    this.physics.world.collide(this.bodies, undefined, (a, b) => {
      const pa = this.byBody.get(a as Body);
      const pb = this.byBody.get(b as Body);
      if (pa && pb) touch(pa, pb);
    });
    for (const p of this.players.values()) {
      p.entity.x = p.body.center.x;
      p.entity.y = p.body.center.y;
      // Round like the wire does, and put the body there, so the next tick
      // starts from exactly what the clients got (and what they predict from).
      schema.quantize(p.entity);
      p.body.reset(p.entity.x - R, p.entity.y - R);
    }
  }

  /** Every player's entity, its slot as its id (what a client predicts is the entity of its own slot). */
  entities(): [number, Entity<Field>][] {
    return [...this.players.values()].map((p) => [p.slot, p.entity]);
  }

  /** Someone is "it" whenever anyone plays: when "it" left (or the first player came), the lowest slot. */
  private chooseIt(): void {
    const all = [...this.players.values()];
    if (all.some((p) => p.entity.it)) return;
    const slot = nextIt(all.map((p) => p.slot));
    const it = all.find((p) => p.slot === slot);
    if (it) it.entity.it = 1;
  }
}
