// Bandwidth of the demo arena per client, with and without delta
// compression, for 2, 4 and 8 players. A benchmark, not a test: it prints
// figures. Every player is a bot (the game's autopilot) on simulated time,
// so a run is deterministic and takes seconds.
//
//   npm run bench:netcode            (SECONDS=60 for a longer match)
import { arenaMatch } from '../src/bots.test-util';
import type { Conditions } from '@hostrelay/netcode';

const SECONDS = Number(process.env['SECONDS'] ?? 30);
const WARMUP_MS = 3000;
/**
 * What each game packet costs on the wire beyond its payload, roughly:
 * IPv4 20 + UDP 8 + TURN ChannelData 4 + DTLS 1.2 record with AES-GCM 29 +
 * SCTP common header 12 + DATA chunk 16.
 */
const PER_PACKET_OVERHEAD = 89;

interface Row {
  players: number;
  network: string;
  delta: boolean;
  downPayload: number;
  downWire: number;
  downPackets: number;
  upPayload: number;
  upWire: number;
  upPackets: number;
  snapshotBytes: number;
}

function measure(players: number, delta: boolean, network: string, conditions: Partial<Conditions>): Row {
  const m = arenaMatch({ clients: players - 1, deltaCompression: delta, conditions, seed: players });
  m.run(WARMUP_MS);
  const ids = m.clients.map((c) => c.id);
  const before = { host: m.net.wire('host'), clients: ids.map((id) => m.net.wire(id)) };
  m.run(SECONDS * 1000);
  const after = { host: m.net.wire('host'), clients: ids.map((id) => m.net.wire(id)) };
  const n = ids.length;
  const downBytes = (after.host.bytesOut - before.host.bytesOut) / n / SECONDS;
  const downPackets = (after.host.packetsOut - before.host.packetsOut) / n / SECONDS;
  let upBytes = 0;
  let upPackets = 0;
  ids.forEach((_, i) => {
    upBytes += (after.clients[i]!.bytesOut - before.clients[i]!.bytesOut) / n / SECONDS;
    upPackets += (after.clients[i]!.packetsOut - before.clients[i]!.packetsOut) / n / SECONDS;
  });
  for (const c of m.clients) {
    if (c.game.net.stats().desyncs > 0) throw new Error(`bench: ${c.id} saw a desync`);
  }
  return {
    players,
    network,
    delta,
    downPayload: downBytes,
    downWire: downBytes + downPackets * PER_PACKET_OVERHEAD,
    downPackets,
    upPayload: upBytes,
    upWire: upBytes + upPackets * PER_PACKET_OVERHEAD,
    upPackets,
    snapshotBytes: downPackets > 0 ? downBytes / downPackets : 0,
  };
}

const kb = (b: number): string => (b / 1024).toFixed(2).padStart(6);
const rows: Row[] = [];
const started = Date.now();
for (const [network, conditions] of [
  ['clean', {}],
  ['10% loss', { latencyMs: 50, jitterMs: 20, loss: 0.1 }],
] as const) {
  for (const players of [2, 4, 8]) {
    for (const delta of [false, true]) rows.push(measure(players, delta, network, conditions));
  }
}

console.log(`\nDemo arena, 60 Hz ticks, 30 Hz snapshots, ${SECONDS} s of bot play per row (simulated time).`);
console.log('Per client. "payload" is the game bytes; "wire" adds ~89 B of IP/UDP/TURN/DTLS/SCTP headers per packet.');
console.log('Down = host to one client (snapshots); up = one client to the host (60 input packets/s, never delta-coded).');
console.log('"10% loss" = 100 ms RTT, ±20 ms jitter, 10 % loss each way: baselines are older, so deltas are bigger.\n');
console.log('| network  | players | delta | down payload KB/s | down wire KB/s | B/snapshot | up payload KB/s | up wire KB/s | saving (payload) |');
console.log('|----------|--------:|:-----:|------------------:|---------------:|-----------:|----------------:|-------------:|-----------------:|');
for (const r of rows) {
  const full = rows.find((x) => x.players === r.players && x.network === r.network && !x.delta)!;
  const saving = r.delta ? `${((1 - r.downPayload / full.downPayload) * 100).toFixed(0)} %` : '';
  // The simulated wire counts a client's packets after its own conditioner
  // dropped some, so upstream is only shown for the clean network.
  const up = (v: number): string => (r.network === 'clean' ? kb(v) : '—');
  console.log(
    `| ${r.network.padEnd(8)} | ${String(r.players).padStart(7)} | ${r.delta ? ' on  ' : ' off '} | ${kb(r.downPayload).padStart(17)} | ` +
      `${kb(r.downWire).padStart(14)} | ${r.snapshotBytes.toFixed(0).padStart(10)} | ${up(r.upPayload).padStart(15)} | ` +
      `${up(r.upWire).padStart(12)} | ${saving.padStart(16)} |`,
  );
}
console.log(`\n(${((Date.now() - started) / 1000).toFixed(1)} s of real time)`);
