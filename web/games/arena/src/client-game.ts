// A joining tab's side: predicts its own player, interpolates the rest.
import { NetClient, type ClientView, type Entity, type NetTransport, type Scheduler } from '@hostrelay/netcode';
import { movePlayer, separatePlayers } from './physics';
import { arenaGame, Kind, schema, type ArenaInput, type Field } from './schema';

export class ClientGame {
  readonly net: NetClient<ArenaInput, Field>;
  /** Players as last drawn, by entity id: obstacles for our prediction (all but our own, see predict). */
  private drawnPlayers: [number, Entity<Field>][] = [];

  constructor(transport: NetTransport, readInput: () => ArenaInput, scheduler?: Scheduler) {
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
    });
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
    for (const [id, e] of v.entities) if (e.kind === Kind.Player) this.drawnPlayers.push([id, e]);
    return v;
  }
}
