// The kickball duel: two players, a ball and two goals in integer physics,
// played over LockstepSession from @hostrelay/netcode — only inputs go over
// the wire, and every peer runs the same frames. Two of the SDK's Games, one
// per mode: a room made with "Duel (rollback)" runs ahead on predicted
// inputs and rolls back on a correction; "Duel (lockstep)" runs the frames
// the host clocks. The room's mode picks the mode the match starts in; the
// host's Mode menu switches it mid-match (every tab restarts from the host's
// state at a frame boundary), so both can be compared in one room. The
// netgraph under the pitch shows what each mode costs under the conditioner.
// The duel seats two: a player who leaves empties their seat (their player
// stands still), and whoever joins the room next takes it with the host's
// state; a tab cut off for 3 s asks for that state again and plays on.
import './duel.css';
import {
  ConditionedTransport,
  LockstepSession,
  NO_CONDITIONS,
  sessionTransport,
  type Conditions,
  type Desync,
  type LockstepMode,
  type DeterministicGame,
} from '@hostrelay/netcode';
import type { Game, GameContext, RunningGame } from '@hostrelay/sdk';
import { autopilot } from './autopilot';
import { Keyboard } from './keyboard';
import { DuelNetgraph } from './netgraph';
import { drawDuel } from './render';
import { BALL, duelGame, scores, type DuelInput, type DuelState } from './sim';
import { publishDuelHooks } from './test-hooks';
import { mergeInputs, TouchControls } from './touch';

export { duelGame, initialDuel, stepDuel, type DuelInput, type DuelState } from './sim';
export type { HostrelayDuelHooks } from './test-hooks';

/** The conditioner presets the bar offers (each way: the round trip grows by twice the latency). */
const PRESETS: Readonly<Record<string, Partial<Conditions>>> = {
  off: NO_CONDITIONS,
  '50 ms': { ...NO_CONDITIONS, latencyMs: 50 },
  '100 ms, 20 ms jitter, 10 % loss': { latencyMs: 100, jitterMs: 20, loss: 0.1, duplicate: 0, reorder: 0 },
};

export interface DuelOptions extends GameContext {
  mode: LockstepMode;
  /** Start with the conditioner set (default off); the bar's menu changes it live. */
  conditions?: Partial<Conditions>;
  autopilot?: boolean;
}

/** The duel in rollback: every peer runs ahead on predicted inputs and re-simulates when one was wrong. */
export const duelRollback: Game = { mode: 'Duel (rollback)', maxPlayers: 2, mount: (ctx) => mountDuel({ ...ctx, mode: 'rollback' }) };
/** The duel in host-clocked lockstep: the host confirms each frame as it runs it; clients never predict. */
export const duelLockstep: Game = { mode: 'Duel (lockstep)', maxPlayers: 2, mount: (ctx) => mountDuel({ ...ctx, mode: 'lockstep' }) };

export function mountDuel(opts: DuelOptions): RunningGame {
  const { session: room, container } = opts;
  const transport = new ConditionedTransport(sessionTransport(room), { conditions: { ...NO_CONDITIONS, ...opts.conditions } });
  const keyboard = new Keyboard();
  let pilot = opts.autopilot ?? false;
  // The autopilot steers from the newest state this peer has: predicted in rollback, confirmed in lockstep.
  const readInput = (): DuelInput => {
    const held = mergeInputs(keyboard.read(), touch.read());
    const s = session.state;
    return pilot && s && session.slot >= 0 ? autopilot(s, session.slot) : held;
  };
  // The end-to-end tests' forced desync: the ball 1/256 px off on this tab at one frame (every run of it), nowhere else.
  let nudgeFrame = -1;
  const game: DeterministicGame<DuelState, DuelInput> = {
    ...duelGame,
    step: (s, inputs, frame) => {
      const next = duelGame.step(s, inputs, frame);
      if (frame !== nudgeFrame) return next;
      const v = next.v.slice();
      v[BALL + 1] = v[BALL + 1]! + 1;
      return { v };
    },
  };
  const session = new LockstepSession<DuelState, DuelInput>({ transport, game, mode: opts.mode, readInput, players: 2 });
  const desyncs: Desync[] = [];
  let modeSwitches = 0;
  let failure: string | null = null;
  let ended: string | null = null;

  const root = document.createElement('section');
  root.className = 'hr-duel';
  root.setAttribute('aria-label', 'game');
  const canvas = document.createElement('canvas');
  canvas.className = 'hr-duel-canvas';
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', 'the duel');
  const netgraph = new DuelNetgraph();
  const help = document.createElement('span');
  help.className = 'hr-duel-help';
  const touchLook = (on: boolean): void => {
    help.textContent = on ? 'Drag to move, tap Kick.' : 'Move with arrows or WASD, kick with space.';
    root.classList.toggle('hr-duel-touch-on', on);
  };
  const touch = new TouchControls(touchLook);
  touchLook(touch.active);
  const status = document.createElement('span');
  status.className = 'hr-duel-status';
  status.setAttribute('role', 'status');
  const pilotLabel = document.createElement('label');
  const pilotBox = document.createElement('input');
  pilotBox.type = 'checkbox';
  pilotBox.id = 'hr-duel-autopilot';
  pilotBox.checked = pilot;
  pilotBox.addEventListener('change', () => (pilot = pilotBox.checked));
  pilotLabel.append(pilotBox, ' Autopilot');
  const netLabel = document.createElement('label');
  const netSelect = document.createElement('select');
  netSelect.id = 'hr-duel-net';
  for (const name of Object.keys(PRESETS)) netSelect.append(new Option(name, name));
  netSelect.addEventListener('change', () => transport.setConditions(PRESETS[netSelect.value] ?? NO_CONDITIONS));
  netLabel.append('Network ', netSelect);
  // The host switches the match's mode live; a client's menu shows it and is disabled.
  const modeLabel = document.createElement('label');
  const modeSelect = document.createElement('select');
  modeSelect.id = 'hr-duel-mode';
  modeSelect.append(new Option('rollback', 'rollback'), new Option('lockstep', 'lockstep'));
  modeSelect.value = opts.mode;
  modeSelect.disabled = !session.isHost;
  modeSelect.title = session.isHost ? 'Switch the match between rollback and lockstep at the next frame boundary' : 'The host picks the mode';
  modeSelect.addEventListener('change', () => {
    try {
      session.switchMode(modeSelect.value as LockstepMode);
    } catch (err) {
      console.warn(`duel: ${(err as Error).message}`);
      modeSelect.value = session.mode;
    }
  });
  modeLabel.append('Mode ', modeSelect);
  const bar = document.createElement('div');
  bar.className = 'hr-duel-bar';
  bar.append(status, help, pilotLabel, netLabel, modeLabel);
  root.append(canvas, touch.el, netgraph.el, bar);
  container.append(root);

  const modeName = opts.mode === 'rollback' ? 'Rollback' : 'Host-clocked lockstep';
  let seatNote = '';
  const setStatus = (): void => {
    const slot = session.slot;
    const side = slot === 0 ? 'blue, attacking right' : 'red, attacking left';
    status.textContent =
      ended ??
      (failure
        ? `The match stopped: ${failure}`
        : slot < 0
          ? `${modeName}: waiting for both players…`
          : `${session.mode === 'rollback' ? 'Rollback' : 'Host-clocked lockstep'}. You play ${side}.${seatNote}`);
  };
  const names = (): string[] => {
    // Slot 0 is the host; slot 1 the other player (two-player rooms).
    const host = room.players.find((p) => p.id === transport.hostId)?.name ?? 'host';
    const other = room.players.find((p) => p.id !== transport.hostId)?.name ?? 'guest';
    return [host, other];
  };

  session.on('desync', (d) => {
    desyncs.push(d);
    console.warn(`duel: slot ${d.slot} diverged from the host at frame ${d.frame}`);
  });
  session.on('failed', (reason) => {
    console.info(`duel: the match stopped at frame ${session.frame}: ${reason}`);
    failure = reason;
    setStatus();
  });
  session.on('start', () => setStatus());
  session.on('resync', (r) => {
    // On a client failure is over once the host's state is in.
    if (!session.isHost) failure = null;
    if (!session.isHost) console.info(`duel: playing on from the host's state at frame ${r.frame} (${r.reason})`);
    else console.info(`duel: sent slot ${r.slot} our state at frame ${r.frame} (${r.reason})`);
    setStatus();
  });
  session.on('mode', (mode) => {
    modeSwitches++;
    modeSelect.value = mode;
    setStatus();
  });
  session.on('seat', (slot, taken) => {
    if (slot === session.slot) return;
    seatNote = taken ? '' : ' The other seat is empty: share the link to fill it.';
    setStatus();
  });

  let raf = 0;
  const draw = (): void => {
    const s = session.state;
    if (s) drawDuel(canvas, s, session.slot, names());
    raf = requestAnimationFrame(draw);
  };
  const statsTimer = window.setInterval(() => netgraph.show(session.stats(), session.isHost, desyncs, modeSwitches), 250);
  const offClosed = room.on('closed', (reason) => {
    ended = reason === 'host_left' ? 'The host left: the game is over.' : `The game ended (${reason}).`;
    setStatus();
    session.stop();
  });

  let unpublish: (() => void) | null = null;
  if (import.meta.env.MODE === 'e2e') {
    unpublish = publishDuelHooks({
      mode: () => session.mode,
      phase: () => session.phase,
      failure: () => failure,
      slot: () => session.slot,
      stats: () => session.stats(),
      hashAt: (f) => session.hashLog?.get(f) ?? null,
      scores: () => (session.state ? scores(session.state) : [0, 0]),
      desyncs: () => [...desyncs],
      setAutopilot: (on) => {
        pilot = on;
        pilotBox.checked = on;
      },
      setConditions: (c) => transport.setConditions(c),
      roster: () => [...session.roster],
      switchMode: (mode) => session.switchMode(mode),
      forceDesync: () => {
        nudgeFrame = session.frame + 20;
      },
    });
  }

  session.start();
  setStatus();
  netgraph.show(session.stats(), session.isHost, desyncs, modeSwitches);
  raf = requestAnimationFrame(draw);

  let stopped = false;
  return {
    stats: () => ({ rttMs: session.isHost || session.stats().rttMs === 0 ? null : session.stats().rttMs }),
    stop() {
      if (stopped) return;
      stopped = true;
      cancelAnimationFrame(raf);
      clearInterval(statsTimer);
      offClosed();
      session.stop();
      transport.dispose();
      keyboard.dispose();
      touch.dispose();
      root.remove();
      unpublish?.();
    },
  };
}
