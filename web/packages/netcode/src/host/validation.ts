/** Why a player's behaviour looked wrong. */
export type ViolationKind = 'speed' | 'teleport' | 'input' | 'flood' | (string & {});

export interface Violation {
  playerId: string;
  kind: ViolationKind;
  /** The player's decayed violation score after this one. */
  score: number;
  tick: number;
  detail: string;
}

export interface ValidationRules {
  /** Fastest legitimate speed, units per second. A tick's move may exceed it by `tolerance`. */
  maxSpeed?: number;
  /** A one-tick move longer than this is a teleport, whatever the speed rule says. */
  maxTeleport?: number;
  /** Slack on maxSpeed for collisions and rounding (default 0.25 = 25 %). */
  tolerance?: number;
  /** The score halves every this many ms (default 5000): honest players hit edge cases, cheaters keep at it. */
  halfLifeMs?: number;
  /** Points per kind (default speed 1, teleport 5, input 2, flood 1, anything else 1). */
  weights?: Partial<Record<string, number>>;
  /** Score at or above which the verdict is asked for (default 10). */
  threshold?: number;
}

/** What to do about a player over the threshold. */
export type Verdict = 'kick' | 'ignore';

export interface Position {
  x: number;
  y: number;
}

const DEFAULT_WEIGHTS: Record<string, number> = { speed: 1, teleport: 5, input: 2, flood: 1 };

/**
 * Host-side checks on what players do: movement against a speed limit and a
 * teleport distance, plus whatever the game reports. Violations add to a
 * per-player score that decays, so one odd collision is forgiven but a
 * steady stream is not.
 */
export class Validator {
  private readonly maxSpeed: number;
  private readonly maxTeleport: number;
  private readonly tolerance: number;
  private readonly halfLifeMs: number;
  private readonly threshold: number;
  private readonly weights: Record<string, number>;
  private readonly scores = new Map<string, { score: number; at: number }>();
  private readonly lastPos = new Map<string, Position>();

  constructor(rules: ValidationRules = {}) {
    this.maxSpeed = rules.maxSpeed ?? Infinity;
    this.maxTeleport = rules.maxTeleport ?? Infinity;
    this.tolerance = rules.tolerance ?? 0.25;
    this.halfLifeMs = rules.halfLifeMs ?? 5000;
    this.threshold = rules.threshold ?? 10;
    const w: Record<string, number> = { ...DEFAULT_WEIGHTS };
    for (const [k, v] of Object.entries(rules.weights ?? {})) if (v !== undefined) w[k] = v;
    this.weights = w;
  }

  /**
   * Checks one tick's move. Returns the violation, if any (already scored).
   * @param dt seconds per tick
   */
  checkMove(playerId: string, pos: Position, dt: number, tick: number, nowMs: number): Violation | null {
    const prev = this.lastPos.get(playerId);
    this.lastPos.set(playerId, { x: pos.x, y: pos.y });
    if (!prev) return null;
    const d = Math.hypot(pos.x - prev.x, pos.y - prev.y);
    if (d > this.maxTeleport) {
      return this.report(playerId, 'teleport', tick, nowMs, `moved ${d.toFixed(1)} in one tick (max ${this.maxTeleport})`);
    }
    const limit = this.maxSpeed * dt * (1 + this.tolerance);
    if (d > limit) {
      return this.report(playerId, 'speed', tick, nowMs, `moved ${d.toFixed(1)} in one tick (max ${limit.toFixed(1)})`);
    }
    return null;
  }

  /** Forgets the last position, so a legitimate jump (respawn, goal reset) is not a teleport. */
  allowTeleport(playerId: string): void {
    this.lastPos.delete(playerId);
  }

  /** Adds a violation of any kind; returns it with the new score. */
  report(playerId: string, kind: ViolationKind, tick: number, nowMs: number, detail: string): Violation {
    const score = this.score(playerId, nowMs) + (this.weights[kind] ?? 1);
    this.scores.set(playerId, { score, at: nowMs });
    return { playerId, kind, score, tick, detail };
  }

  /** The player's score now, after decay. */
  score(playerId: string, nowMs: number): number {
    const s = this.scores.get(playerId);
    if (!s) return 0;
    return s.score * Math.pow(0.5, (nowMs - s.at) / this.halfLifeMs);
  }

  overThreshold(v: Violation): boolean {
    return v.score >= this.threshold;
  }

  forget(playerId: string): void {
    this.scores.delete(playerId);
    this.lastPos.delete(playerId);
  }
}
