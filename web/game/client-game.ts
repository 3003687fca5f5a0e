// A joining tab's side: predicts its own player, interpolates the rest.
import { NetClient, type ClientView, type NetTransport, type Scheduler } from '../src/netcode';
import { movePlayer } from './physics';
import { arenaGame, type ArenaInput, type Field } from './schema';

export class ClientGame {
  readonly net: NetClient<ArenaInput, Field>;

  constructor(transport: NetTransport, readInput: () => ArenaInput, scheduler?: Scheduler) {
    this.net = new NetClient<ArenaInput, Field>({
      transport,
      game: arenaGame,
      scheduler,
      readInput,
      predict: movePlayer,
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
    return this.net.view();
  }
}
