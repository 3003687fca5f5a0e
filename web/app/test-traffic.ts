import type { RoomSession } from '@hostrelay/sdk';
import { PacketKind, decodePacket, encodePacket } from '@hostrelay/game-pointer';

/**
 * Numbered test packets on the game channel. They run from the moment the
 * room is joined, game or no game, so end-to-end tests can check the relay
 * before anyone presses Start. In the e2e build only (test-hooks.ts).
 */
export class TestTraffic {
  private seq = 0;
  private tests = 0;
  private readonly off: () => void;

  constructor(private readonly session: RoomSession) {
    this.off = session.on('message', (_peer, data, channel) => {
      if (channel === 'game' && decodePacket(data)?.kind === PacketKind.Test) this.tests++;
    });
  }

  get testsReceived(): number {
    return this.tests;
  }

  /** Sends n test packets to every open peer; returns how many the channels accepted. */
  send(n: number): number {
    let sent = 0;
    for (let i = 0; i < n; i++) sent += this.session.broadcast(encodePacket({ kind: PacketKind.Test, seq: this.seq++ }));
    return sent;
  }

  stop(): void {
    this.off();
  }
}
