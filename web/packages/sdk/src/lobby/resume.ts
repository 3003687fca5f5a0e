import { ErrorCode, VERSION } from '@hostrelay/protocol';
import { LobbyError, RoomElsewhereError } from '../errors.js';
import type { ReconnectPolicy } from '../reconnect.js';
import { transportOf, type LobbyCore } from './core.js';

/**
 * Taking the seat back after the connection drops (the client's `resume`
 * option): a hello with the last Welcome's resume token and the count of
 * frames received, retried by the policy until the server's grace runs out.
 * The resumed Welcome itself is handled where frames come in (LobbyCore),
 * before any frame the server replays.
 */
export class Resume {
  constructor(
    private readonly core: LobbyCore,
    private readonly enabled: boolean,
    private readonly policy: ReconnectPolicy,
    /** Fetches a fresh identity token for the resume's hello (null: send none, the server keeps ours). */
    private readonly freshToken: (() => Promise<string>) | null = null,
  ) {}

  /** Our connection dropped (LobbyCore.onDrop): resume if we can, else the session is over. */
  dropped(code: number, reason: string): void {
    const core = this.core;
    if (core.state.kind === 'open') {
      if (!this.enabled || core.resumeToken === '' || core.graceMs <= 0) {
        core.finish(code, reason);
        return;
      }
      core.state = { kind: 'resuming', transport: null, url: core.url, attempt: 0, deadline: Date.now() + core.graceMs, timer: null };
    }
    this.schedule(code, reason);
  }

  private schedule(code: number, reason: string): void {
    const s = this.core.state;
    if (s.kind !== 'resuming') return;
    s.attempt++;
    const delay = this.policy.nextRetryDelayMs(s.attempt);
    if (delay === null || Date.now() + delay > s.deadline) {
      this.core.finish(code, reason || 'could not resume the session');
      return;
    }
    this.core.events.emit('reconnecting', { attempt: s.attempt, code, reason });
    s.timer = setTimeout(() => {
      s.timer = null;
      void this.attempt(code, reason);
    }, delay);
  }

  private async attempt(code: number, reason: string): Promise<void> {
    const core = this.core;
    if (!(await this.dial())) {
      this.schedule(code, reason);
      return;
    }
    const attempt = transportOf(core.state);
    if (core.state.kind !== 'resuming' || attempt === null) return;
    try {
      // LobbyCore completes the resume as the Welcome arrives, before any replayed frame.
      const token = this.freshToken ? await this.freshToken() : undefined;
      await core.connection.request(attempt, 'hello', { v: VERSION, resume: core.resumeToken, received: core.received, token }, 'welcome');
    } catch (err) {
      // A later attempt may own the connection by now; leave it alone.
      const s = core.state;
      if (s.kind !== 'resuming' || s.transport !== attempt) return;
      if (err instanceof RoomElsewhereError) {
        // The first node says our seat's node is alive, only slow: keep trying that one.
        s.transport = null;
        attempt.close(1000, 'seat held elsewhere');
        this.schedule(code, reason);
      } else if (err instanceof LobbyError && (err.code === ErrorCode.AuthInvalid || err.code === ErrorCode.AuthRequired)) {
        // A token the server refuses will not pass on the next try either.
        s.transport = null;
        attempt.close(1000, 'resume refused');
        core.finish(code, err.message, err);
      } else if (err instanceof LobbyError && (err.code === ErrorCode.ResumeFailed || err.code === ErrorCode.RoomLost)) {
        s.transport = null;
        attempt.close(1000, 'resume failed');
        const lost = err.code === ErrorCode.RoomLost;
        core.finish(code, lost ? err.message : 'the server no longer holds our seat', lost ? err : null);
      } else {
        // No answer: drop this connection; its close schedules the next try.
        attempt.close(4000, 'resume hello failed');
      }
    }
  }

  /**
   * Dials for a resume: the node we are on or, if it does not answer and we
   * moved there, the node we started on, which knows whether the other is
   * gone (room_lost) or only slow (room_elsewhere). False if neither answered.
   */
  private async dial(): Promise<boolean> {
    const core = this.core;
    try {
      await core.dial(core.url, 'current');
      return true;
    } catch {
      if (core.homeUrl === core.url || core.state.kind === 'closed') return false;
    }
    try {
      await core.dial(core.homeUrl, 'current');
      return true;
    } catch {
      return false;
    }
  }
}
