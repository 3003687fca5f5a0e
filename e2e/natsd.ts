import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A running bin/hostrelay-natsd: one NATS server with JetStream on loopback, for a cluster of hostrelay nodes. */
export interface RunningNatsd {
  /** nats://127.0.0.1:PORT */
  url: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 20_000;

export function natsdBinary(): string {
  const bin = process.env['HOSTRELAY_NATSD_BIN'];
  if (!bin) throw new Error('set HOSTRELAY_NATSD_BIN to the hostrelay-natsd binary (make e2e does: bin/hostrelay-natsd)');
  return bin;
}

/**
 * Starts the NATS server and resolves with the URL it prints first. Its
 * stdin is a pipe: if this process dies, the pipe closes and it stops too.
 */
export function startNatsd(bin: string): Promise<RunningNatsd> {
  const proc = spawn(bin, ['-stdin'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const logs: string[] = [];
  proc.stderr?.on('data', (d: Buffer) => logs.push(d.toString()));
  return new Promise((resolve, reject) => {
    const fail = (err: Error): void => {
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(new Error(`${err.message}\n--- hostrelay-natsd log ---\n${logs.join('')}`));
    };
    const timer = setTimeout(() => fail(new Error(`hostrelay-natsd printed no URL within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    proc.once('error', fail);
    proc.once('exit', (code, signal) => fail(new Error(`hostrelay-natsd exited early (code ${code}, signal ${signal})`)));
    const lines = createInterface({ input: proc.stdout! });
    lines.once('line', (line) => {
      if (!line.startsWith('nats://')) {
        fail(new Error(`hostrelay-natsd's first line is not a nats:// URL: ${line}`));
        return;
      }
      clearTimeout(timer);
      proc.removeAllListeners('exit');
      proc.removeAllListeners('error');
      resolve({ url: line.trim(), stop: () => stopNatsd(proc) });
    });
  });
}

/** SIGTERM by PID, SIGKILL if it hangs. */
function stopNatsd(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.stdin?.end();
    proc.kill('SIGTERM');
  });
}
