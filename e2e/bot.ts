import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** One JSON line printed by hostrelay-bot. */
export interface BotEvent {
  event: string;
  [key: string]: unknown;
}

/** A running hostrelay-bot (the Go client SDK's command). */
export interface RunningBot {
  /** Every event so far. */
  events: BotEvent[];
  /** Resolves with the first event of this kind (already seen or future). */
  next(kind: string, timeoutMs?: number): Promise<BotEvent>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stderr: string[];
  stop(): Promise<void>;
}

export function botBinary(): string {
  const bin = process.env['HOSTRELAY_BOT_BIN'];
  if (!bin) throw new Error('set HOSTRELAY_BOT_BIN to the hostrelay-bot binary (make e2e does: bin/hostrelay-bot)');
  return bin;
}

export function startBot(bin: string, args: string[]): RunningBot {
  const proc: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const events: BotEvent[] = [];
  const stderr: string[] = [];
  const waiters: { kind: string; resolve: (e: BotEvent) => void }[] = [];
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    let e: BotEvent;
    try {
      e = JSON.parse(line) as BotEvent;
    } catch {
      stderr.push(`(stdout) ${line}`);
      return;
    }
    events.push(e);
    for (const w of waiters.filter((w) => w.kind === e.event)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(e);
    }
  });
  createInterface({ input: proc.stderr! }).on('line', (line) => stderr.push(line));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));

  const next = (kind: string, timeoutMs = 30_000): Promise<BotEvent> => {
    const seen = events.find((e) => e.event === kind);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`bot printed no "${kind}" within ${timeoutMs} ms; events ${JSON.stringify(events)}; stderr ${stderr.join('\n')}`)),
        timeoutMs,
      );
      waiters.push({ kind, resolve: (e) => { clearTimeout(timer); resolve(e); } });
    });
  };
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  };
  return { events, next, exited, stderr, stop };
}
