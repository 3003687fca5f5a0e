import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A running bin/hostrelay on loopback, ports chosen by the kernel. */
export interface RunningServer {
  /** host:port of the HTTP listener, e.g. "127.0.0.1:41234". */
  http: string;
  turnUdp: string;
  turnTcp: string;
  /** host:port of TURN over TLS, when the server was given a certificate. */
  turnTls?: string;
  /** The node's id and region, in a cluster (-nats). */
  node?: string;
  region?: string;
  /** Every log line so far (JSON), for failure reports. */
  logs: string[];
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;

export function serverBinary(): string {
  const bin = process.env['HOSTRELAY_BIN'];
  if (!bin) throw new Error('set HOSTRELAY_BIN to the hostrelay binary (make e2e does: bin/hostrelay)');
  return bin;
}

/** Starts the server and resolves once it logs "listening" with its addresses; `extraArgs` add flags (e.g. -turn-ttl). */
export function startServer(bin: string, extraArgs: readonly string[] = []): Promise<RunningServer> {
  const args = [
    '-http', '127.0.0.1:0',
    '-turn-udp', '127.0.0.1:0',
    '-turn-tcp', '127.0.0.1:0',
    '-public-ip', '127.0.0.1',
    '-log-format', 'json',
    '-log-level', 'debug',
    ...extraArgs,
  ];
  const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  proc.stdout?.on('data', (d: Buffer) => logs.push(d.toString()));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      fail(new Error(`hostrelay did not log "listening" within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(new Error(`${err.message}\n--- server log ---\n${logs.join('\n')}`));
    };
    proc.once('error', fail);
    proc.once('exit', (code, signal) => fail(new Error(`hostrelay exited early (code ${code}, signal ${signal})`)));

    const lines = createInterface({ input: proc.stderr! });
    lines.on('line', (line) => {
      logs.push(line);
      const entry = parseLog(line);
      // Components log their own "listening" lines; the server's carries "http".
      if (entry?.['msg'] !== 'listening' || !('http' in entry)) return;
      const { http, turn_udp: turnUdp, turn_tcp: turnTcp, turn_tls: turnTls, node, region } = entry;
      if (typeof http !== 'string' || typeof turnUdp !== 'string' || typeof turnTcp !== 'string') {
        fail(new Error(`"listening" log line lacks http/turn_udp/turn_tcp: ${line}`));
        return;
      }
      clearTimeout(timer);
      proc.removeAllListeners('exit');
      proc.removeAllListeners('error');
      resolve({
        http,
        turnUdp,
        turnTcp,
        ...(typeof turnTls === 'string' ? { turnTls } : {}),
        ...(typeof node === 'string' ? { node } : {}),
        ...(typeof region === 'string' ? { region } : {}),
        logs,
        stop: () => stopServer(proc),
      });
    });
  });
}

function parseLog(line: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** SIGTERM by PID (the server shuts down cleanly), SIGKILL if it hangs. */
function stopServer(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}
