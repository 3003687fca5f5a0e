import {
  ErrorCode,
  Reason,
  SPECTATOR_FRAMES_PER_SECOND,
  type CloseReason,
  type ChatMessage,
  type GameStarted,
  type HostChanged,
  type HostReplaced,
  type Ice,
  type Player,
  type RoomInfo,
  type RoomJoined,
  type Signal,
} from '@hostrelay/protocol';
import type { ChannelName } from './channels.js';
import { Emitter, type Unsubscribe } from './emitter.js';
import { ClientErrorCode, LobbyError, type PeerError } from './errors.js';
import type { CreateRoomOptions, KickOptions, LobbyClient, QuickPlayOptions, RoomSettings } from './lobby-client.js';
import { PeerLink, type ChannelData } from './peer-link.js';
import { backoff, type ReconnectPolicy } from './reconnect.js';
import { HostSilenceWatch } from './silence-watch.js';
import type { SelectedPair } from './stats.js';

export type Role = 'host' | 'client';

/**
 * Why a room session ended: a server close reason (Reason: 'host_left',
 * 'kicked', 'operator_closed', 'room_lost' when the room's node left the
 * cluster, 'disconnected' when the lobby connection is gone), 'left'
 * (leave()), 'pagehide', or 'closed' (close() with no reason). A newer
 * server may send one not listed here.
 */
export type RoomEndReason = CloseReason | 'pagehide' | 'closed' | (string & {});

export interface RoomSessionOptions {
  /** Game packets are dropped while a channel has more than this many bytes queued. */
  maxBufferedGame?: number;
  /** Close every peer connection on `pagehide` (default true): TURN allocations of a closed page otherwise linger. */
  closeOnPageHide?: boolean;
  /** Fail a peer whose channels are not open this long after it was made (ms; default 20 s). */
  connectTimeoutMs?: number;
  /** Makes each RTCPeerConnection; tests plug in a fake. */
  createPeerConnection?: (config: RTCConfiguration) => RTCPeerConnection;
  /**
   * A client whose open connection to the host drops while both are still
   * in the room offers again on this schedule (default 1 s, 2 s, 4 s, then
   * gives up; null: never). A host that does not take an ICE restart on the
   * same connection (one that answers every offer with a new connection)
   * drops ours at a credential refresh; this brings it back.
   */
  hostLinkPolicy?: ReconnectPolicy | null;
  /**
   * Chat lines kept in `chat`, newest last (default 200, DEFAULT_MAX_CHAT_LINES);
   * older ones are dropped. 0 keeps none: the `chat` event still fires.
   */
  maxChatLines?: number;
  /**
   * Spectator frames the host sends per second at most, in a bucket of as
   * many (default SPECTATOR_FRAMES_PER_SECOND, the server's default): past
   * it sendSpectatorFrame refuses rather than have the server refuse.
   */
  spectatorFramesPerSecond?: number;
  /**
   * join() makes its offer to the host before the join's reply, with the
   * TURN credentials of the lobby's Welcome, so relay candidates are
   * gathered during the round trip and go out with the offer the moment
   * the reply names the host (default true; used only while those
   * credentials are fresh, and not after a move to another node).
   */
  earlyOffer?: boolean;
  /**
   * A host keeps one peer connection made ahead of the next joiner's offer,
   * its relay candidate already gathered, and answers that offer with it
   * (default true). While nobody joins it holds one TURN allocation per
   * TURN URL (two or three), within the per-session quota.
   */
  spareAnswerer?: boolean;
  /**
   * A client that heard from its host on the data channels (once the game
   * started) and then hears nothing for this long (ms) reports the host
   * silent to the server, and
   * again as often while the silence lasts (default HOST_SILENCE_MS; null:
   * never). Rooms made with `migrate` only: when most of the room reports,
   * the server asks the host for a sign of life and, without one, replaces
   * it (docs/protocol.md, Frozen hosts).
   */
  hostSilenceMs?: number | null;
}

/**
 * How long a client waits on a silent host before reporting it: a game
 * sends 20–60 packets a second and a hidden host tab still sends on every
 * input it gets, so 3 s of nothing is a page that stopped, not loss.
 */
export const HOST_SILENCE_MS = 3000;

/** A client's offer made before its join's reply, and the lobby session it was made on. */
interface EarlyOffer {
  link: PeerLink;
  url: string;
  session: string;
}

/** Chat lines a session keeps unless told otherwise: a long evening's worth, a few tens of KB. */
export const DEFAULT_MAX_CHAT_LINES = 200;

export interface RoomSessionEvents {
  /** Both data channels to this peer are open. */
  peerOpen: [peerId: string];
  peerClose: [peerId: string];
  message: [peerId: string, data: ArrayBuffer | string, channel: ChannelName];
  playerJoined: [player: Player];
  playerLeft: [player: Player, reason: string];
  /**
   * A member's name, ready state, ping or away flag changed (ours included);
   * `players` already holds `player`, `previous` is what it replaced. Pings
   * come only to a LobbyClient made with `pings: true`.
   */
  playerUpdated: [player: Player, previous: Player];
  /**
   * The room's settings or its spectator count changed; `room` already
   * holds them.
   */
  roomUpdated: [room: RoomInfo];
  /**
   * How many watch the room changed (after roomUpdated); `spectators`
   * already holds it. The server tells at most every
   * SPECTATOR_COUNT_INTERVAL_MS, so a host can stop its spectator stream
   * while nobody watches and start it again when someone does.
   */
  spectatorsChanged: [spectators: number, previous: number];
  /**
   * The host started the game; `started` is true from now on. A session
   * made for a room that had already started does not hear this: check
   * `started` once, then listen.
   */
  gameStarted: [event: GameStarted];
  /** A chat line of this room (ours come back too); `chat` already holds it. Plain text: render it as text. */
  chat: [message: ChatMessage];
  /**
   * The host left a room made with `migrate` and the server promoted
   * `host`. `role` is this tab's role from now on: 'host' means the game's
   * authority is now here, and clients are about to offer to us.
   */
  hostChanged: [change: { host: string; previous: string; role: Role }];
  /**
   * (Client) The host has sent nothing for `silentMs` and this tab reported
   * it (hostSilenceMs). The game may be about to move to another host.
   */
  hostSilent: [info: { host: string; silentMs: number }];
  /**
   * (The old host) This tab was the host, stopped answering (it was frozen:
   * a locked phone, a discarded tab, a debugger) and the server gave the
   * room to `host`. 'closed' with reason 'unresponsive' follows; join the
   * room again to play on as a client.
   */
  hostReplaced: [event: HostReplaced];
  /**
   * Fresh TURN credentials were applied to every peer connection (clients
   * restart ICE on them); `count` is how many refreshes this session has had.
   */
  iceRefreshed: [count: number];
  /** A peer connection failed (PeerError) or the server sent a notice (LobbyError). */
  error: [error: PeerError | LobbyError];
  /** The session is over; switch on the reason (Reason.RoomLost: the room's node is gone, and the room with it). */
  closed: [reason: RoomEndReason];
}

/** A link to the host that stayed open this long (ms) resets the count of attempts to bring it back. */
const STABLE_LINK_MS = 10_000;

export interface PeerPairTypes extends SelectedPair {
  peerId: string;
}

/** Where a peer connection's ICE stands after credential refreshes. */
export interface PeerIceState {
  peerId: string;
  /** ICE restarts offered (client) or answered (host) on this connection. */
  restarts: number;
  /** The current ICE username fragment of this end. */
  ufrag: string | null;
  /** The username fragment of the selected pair's local candidate: equal to `ufrag` once a restart has completed. */
  selectedUfrag: string | null;
}

/**
 * A room from this tab's point of view. The host keeps one peer connection
 * per client (a star); a client has one, to the host, and makes its offer.
 */
export class RoomSession {
  readonly you: string;
  private info: RoomInfo;
  private ice: Ice;
  private refreshes = 0;
  private readonly events = new Emitter<RoomSessionEvents>();
  private readonly peers = new Map<string, PeerLink>();
  // Replaced, never changed in place, so an array handed out by `players`
  // or `chat` stays as it was (a UI can compare it with the last one).
  private members: readonly Player[];
  private chatLog: readonly ChatMessage[] = [];
  private readonly maxChatLines: number;
  private readonly offs: Unsubscribe[] = [];
  private closedReason: RoomEndReason | null = null;
  private droppedByClosedPeers = 0;
  private relinkAttempts = 0;
  private relinkTimer: ReturnType<typeof setTimeout> | null = null;
  // The host's spectator stream: a token bucket at the server's rate, and
  // whether a refused frame left spectators needing a keyframe.
  private readonly spectatorRate: number;
  private spectatorTokens: number;
  private spectatorRefill = 0;
  private spectatorNeedsKey = false;
  private refusedSpectatorFrames = 0;
  /** join()'s early offer, until the first link to the host takes it. */
  private early: EarlyOffer | null = null;
  /** The host's answerer for the next offer, made ahead (spareAnswerer). */
  private spare: PeerLink | null = null;
  private spareTimer: ReturnType<typeof setTimeout> | null = null;
  /** Watches the host for silence (a client in a migrate room); null when off or refused for good. */
  private watch: HostSilenceWatch | null = null;

  /** Creates a room and becomes its host. */
  static async create(lobby: LobbyClient, room: CreateRoomOptions, options?: RoomSessionOptions): Promise<RoomSession> {
    return new RoomSession(lobby, await lobby.createRoom(room), options);
  }

  /** Joins a room by code and connects to its host. */
  static async join(lobby: LobbyClient, code: string, password?: string, options?: RoomSessionOptions): Promise<RoomSession> {
    // The join goes out first: making the peer connection takes the main
    // thread a few ms (more for a page's first), better spent while the
    // join is on the way than before it leaves.
    const reply = lobby.joinRoom(code, password);
    let early: EarlyOffer | null = null;
    try {
      early = RoomSession.offerEarly(lobby, options);
    } catch {
      // The join is out; the link to the host is made after its reply, as
      // without credentials, and reports its own failure there.
    }
    let joined: RoomJoined;
    try {
      joined = await reply;
    } catch (err) {
      early?.link.close();
      throw err;
    }
    const session = new RoomSession(lobby, joined, options);
    // Before connectToHost's microtask runs: the first link to the host takes it.
    session.early = early;
    // Resolve once the offer is on its way to the host (at once if it
    // already is): a page that draws the room when this resolves then
    // draws it while the host answers, instead of holding the tab's main
    // thread, which the offer's last steps need, before the offer leaves.
    if (early) await early.link.whenDescribed();
    if (session.closed) throw new LobbyError(ClientErrorCode.Closed, `join ${code}: the room session ended as it began (${session.closedReason})`);
    return session;
  }

  /**
   * Starts a client's link to a host not yet known: the offer is made and
   * relay candidates gathered now, with the Welcome's TURN credentials, and
   * held until bind() names the host.
   */
  private static offerEarly(lobby: LobbyClient, options: RoomSessionOptions = {}): EarlyOffer | null {
    const ice = lobby.welcomeIceServers;
    if (ice === null || options.earlyOffer === false) return null;
    const link = new PeerLink({
      peerId: '',
      offerer: true,
      iceServers: ice.servers.map((s) => ({ urls: s.urls, username: s.username, credential: s.credential })),
      signal: (s) => lobby.sendSignal(s),
      maxBufferedGame: options.maxBufferedGame,
      connectTimeoutMs: options.connectTimeoutMs,
      createPeerConnection: options.createPeerConnection,
    });
    link.start();
    return { link, url: lobby.url, session: lobby.session };
  }

  /** Play now: joins (or makes) a public room of `mode`, with our party if we lead one. */
  static async quickPlay(
    lobby: LobbyClient,
    mode: string,
    quick?: QuickPlayOptions,
    options?: RoomSessionOptions,
  ): Promise<RoomSession> {
    return new RoomSession(lobby, await lobby.quickPlay(mode, quick), options);
  }

  /** Starts a session from a RoomJoined reply the caller got itself. */
  constructor(
    private readonly lobby: LobbyClient,
    joined: RoomJoined,
    private readonly options: RoomSessionOptions = {},
  ) {
    this.info = joined.room;
    this.you = joined.you;
    this.ice = joined.ice;
    this.members = [...joined.players];
    this.maxChatLines = options.maxChatLines ?? DEFAULT_MAX_CHAT_LINES;
    if (!Number.isInteger(this.maxChatLines) || this.maxChatLines < 0) {
      throw new RangeError(`RoomSession: maxChatLines must be a whole number ≥ 0, not ${this.maxChatLines}`);
    }

    this.spectatorRate = options.spectatorFramesPerSecond ?? SPECTATOR_FRAMES_PER_SECOND;
    if (!(this.spectatorRate > 0)) {
      throw new RangeError(`RoomSession: spectatorFramesPerSecond must be above 0, not ${this.spectatorRate}`);
    }
    this.spectatorTokens = this.spectatorRate;
    const silence = options.hostSilenceMs === undefined ? HOST_SILENCE_MS : options.hostSilenceMs;
    if (silence !== null && !(silence > 0)) throw new RangeError(`RoomSession: hostSilenceMs must be above 0 or null, not ${silence}`);
    if (silence !== null && joined.room.migrate) this.watch = new HostSilenceWatch(silence, (ms) => this.reportSilence(ms));

    this.offs.push(
      lobby.on('signal', (s) => this.onSignal(s)),
      lobby.on('playerJoined', (p) => this.onPlayerJoined(p)),
      lobby.on('playerLeft', (e) => this.onPlayerLeft(e.id, e.reason)),
      lobby.on('roomClosed', (e) => this.close(e.reason || 'host_left')),
      lobby.on('playerUpdated', (p) => this.onPlayerUpdated(p)),
      lobby.on('roomUpdated', (info) => this.onRoomUpdated(info)),
      lobby.on('gameStarted', (e) => this.onGameStarted(e)),
      lobby.on('chatMessage', (m) => this.onChat(m)),
      lobby.on('hostChanged', (e) => this.onHostChanged(e)),
      lobby.on('iceRefresh', (ice) => this.onIceRefresh(ice)),
      lobby.on('hostReplaced', (e) => this.onHostReplaced(e)),
      lobby.on('close', ({ error }) => this.close(error?.code === ErrorCode.RoomLost ? Reason.RoomLost : Reason.Disconnect)),
      lobby.on('error', (err) => this.events.emit('error', err)),
    );
    if ((options.closeOnPageHide ?? true) && typeof globalThis.addEventListener === 'function') {
      const onPageHide = (): void => this.close('pagehide');
      globalThis.addEventListener('pagehide', onPageHide);
      this.offs.push(() => globalThis.removeEventListener('pagehide', onPageHide));
    }
    // Let the caller subscribe before the first event.
    if (this.role === 'client') queueMicrotask(() => this.connectToHost());
    else this.prepareSpare();
  }

  on<K extends keyof RoomSessionEvents>(event: K, listener: (...args: RoomSessionEvents[K]) => void): Unsubscribe {
    return this.events.on(event, listener);
  }

  /** The room as last heard: its host changes on migration, its settings on roomUpdated. */
  get room(): RoomInfo {
    return this.info;
  }

  /** How many watch the room now (as last heard): a host need not send spectator frames while it is 0. */
  get spectators(): number {
    return this.info.spectators;
  }

  get hostId(): string {
    return this.info.host;
  }

  /** 'host' while this tab is the room's authority; changes when the server migrates the host. */
  get role(): Role {
    return this.info.host === this.you ? 'host' : 'client';
  }

  /** TURN credential refreshes applied so far. */
  get iceRefreshes(): number {
    return this.refreshes;
  }

  /** ICE restarts each peer has gone through (a client offers one per refresh). */
  get iceRestarts(): { peerId: string; restarts: number }[] {
    return [...this.peers.values()].map((p) => ({ peerId: p.peerId, restarts: p.iceRestarts }));
  }

  /** Each peer's ICE session now and the one its traffic uses (from getStats). */
  async iceStates(): Promise<PeerIceState[]> {
    const out: PeerIceState[] = [];
    for (const p of this.peers.values()) {
      const pair = await p.selectedCandidatePair();
      out.push({ peerId: p.peerId, restarts: p.iceRestarts, ufrag: p.localUfrag, selectedUfrag: pair?.localUfrag ?? null });
    }
    return out;
  }

  /**
   * Everyone in the room, oldest first, this tab included, with their latest
   * name, ready state, ping and away flag. A new array on every change.
   */
  get players(): readonly Player[] {
    return this.members;
  }

  /** This tab's own player as the room last described it. */
  get me(): Player | undefined {
    return this.members.find((m) => m.id === this.you);
  }

  /** The host started the game (before this session was made, or since). */
  get started(): boolean {
    return this.info.started;
  }

  /** The room's last chat lines, oldest first, at most `maxChatLines`. A new array on every line. */
  get chat(): readonly ChatMessage[] {
    return this.chatLog;
  }

  /** Peers whose channels are open: clients for the host, the host for a client. */
  get openPeers(): string[] {
    return [...this.peers.values()].filter((p) => p.isOpen).map((p) => p.peerId);
  }

  /** Game packets dropped by pacing, over the session's life. */
  get droppedPackets(): number {
    let n = this.droppedByClosedPeers;
    for (const p of this.peers.values()) n += p.dropped;
    return n;
  }

  get closed(): boolean {
    return this.closedReason !== null;
  }

  /** Sends to one peer; false if it is not connected or the packet was dropped by pacing. */
  send(peerId: string, data: ChannelData, channel: ChannelName = 'game'): boolean {
    return this.peers.get(peerId)?.send(data, channel) ?? false;
  }

  /** Sends to every open peer (for a client, the host); returns how many took it. */
  broadcast(data: ChannelData, channel: ChannelName = 'game'): number {
    let n = 0;
    for (const p of this.peers.values()) if (p.send(data, channel)) n++;
    return n;
  }

  /**
   * Sends one frame of the room's spectator stream (host only): the server
   * holds it for its spectator delay and fans it out to every spectator, so
   * the host's upload is one stream however many watch. `keyframe` marks a
   * complete state a spectator who joins mid-game can start from; send one
   * at least every second. `data` is at most `lobby.maxSpectatorData` bytes
   * (a LobbyError 'invalid_argument' otherwise).
   *
   * Returns false when the frame was refused for the rate
   * (`spectatorFramesPerSecond`, the server's default 20): and after a
   * refusal deltas are refused too until the next keyframe, since no
   * spectator could apply them.
   */
  sendSpectatorFrame(data: Uint8Array, options: { keyframe?: boolean } = {}): boolean {
    if (this.closed) throw new LobbyError(ClientErrorCode.Closed, `sendSpectatorFrame: the room session is over (${this.closedReason})`);
    if (this.role !== 'host') throw new LobbyError(ErrorCode.Forbidden, 'sendSpectatorFrame: only the host sends the spectator stream');
    const key = options.keyframe === true;
    const now = Date.now();
    this.spectatorTokens = Math.min(this.spectatorRate, this.spectatorTokens + ((now - this.spectatorRefill) / 1000) * this.spectatorRate);
    this.spectatorRefill = now;
    if (this.spectatorTokens < 1 || (this.spectatorNeedsKey && !key)) {
      this.spectatorNeedsKey = true;
      this.refusedSpectatorFrames++;
      return false;
    }
    this.lobby.sendSpectatorFrame(data, key); // throws for the size before a token is spent
    this.spectatorTokens--;
    this.spectatorNeedsKey = false;
    return true;
  }

  /** Spectator frames sendSpectatorFrame refused for the rate, over the session's life. */
  get refusedSpectatorFrameCount(): number {
    return this.refusedSpectatorFrames;
  }

  /** The candidate types of each open peer's selected pair (relay/relay when all is well). */
  async selectedCandidatePairs(): Promise<PeerPairTypes[]> {
    const out: PeerPairTypes[] = [];
    for (const p of this.peers.values()) {
      const pair = await p.selectedCandidatePair();
      if (pair) out.push({ peerId: p.peerId, ...pair });
    }
    return out;
  }

  /** Marks this player ready (or not); everyone, us included, then hears `playerUpdated`. */
  setReady(ready: boolean): Promise<void> {
    return this.request('setReady', () => this.lobby.setReady(ready));
  }

  /** Starts the game once every other player is ready (host only: 'forbidden'; 'not_ready' otherwise). */
  startGame(): Promise<void> {
    return this.request('startGame', () => this.lobby.startGame());
  }

  /** Sends a chat line to the room; it comes back as a `chat` event ('rate_limited' when sent too fast). */
  sendChat(text: string): Promise<void> {
    return this.request('sendChat', () => this.lobby.sendChat(text));
  }

  /**
   * Removes a player and bans its session and device from the room (host
   * only); `{ ban: true }` bans its verified user id too (see KickOptions).
   */
  kick(playerId: string, options: KickOptions = {}): Promise<void> {
    return this.request('kick', () => this.lobby.kick(playerId, options));
  }

  /** Replaces the room's settings (host only); everyone then hears `roomUpdated`. */
  updateRoom(settings: RoomSettings): Promise<void> {
    return this.request('updateRoom', () => this.lobby.updateRoom(settings));
  }

  /** Leaves the room (closing it if we host) and ends the session. */
  async leave(): Promise<void> {
    if (this.closed) return;
    this.close('left');
    await this.lobby.leaveRoom();
  }

  /** Ends the session locally: closes every peer connection. Idempotent. */
  close(reason: RoomEndReason = 'closed'): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    this.cancelRelink();
    this.watch?.stop();
    this.early?.link.close();
    this.early = null;
    this.dropSpare();
    for (const off of this.offs) off();
    for (const p of [...this.peers.values()]) p.close();
    this.peers.clear();
    this.events.emit('closed', reason);
    this.events.clear();
  }

  private connectToHost(): void {
    if (this.closed) return;
    const early = this.early;
    this.early = null;
    // Credentials of another node's session (the join moved us) relay nothing here.
    if (early && !early.link.isClosed && early.url === this.lobby.url && early.session === this.lobby.session) {
      this.addPeer(this.hostId, true, early.link);
      return;
    }
    early?.link.close();
    this.addPeer(this.hostId, true).start();
  }

  private onSignal(s: Signal): void {
    if (this.role === 'client') {
      if (s.from === this.hostId) this.peers.get(s.from)?.handleSignal(s);
      return;
    }
    if (!this.members.some((m) => m.id === s.from)) return;
    let peer = this.peers.get(s.from);
    // An offer from the connection we already have is a renegotiation (an
    // ICE restart on fresh credentials): answer it in place, channels stay.
    // Any other offer is a new connection and replaces the old one.
    if (s.kind === 'offer' && !peer?.isRenegotiation(s.sdp)) {
      peer?.close();
      peer = this.addPeer(s.from, false, this.takeSpare());
    }
    peer?.handleSignal(s);
  }

  /**
   * Re-forms the star around the new host. The old host's playerLeft came
   * first and closed our link to it; whatever else no longer fits is closed
   * here. A client offers to the new host exactly as on joining; the new
   * host just starts answering offers.
   */
  private onHostChanged(e: HostChanged): void {
    if (this.closed || e.host === this.info.host) return;
    this.info = { ...this.info, host: e.host };
    this.cancelRelink();
    this.relinkAttempts = 0;
    const role = this.role;
    for (const p of [...this.peers.values()]) {
      if (role === 'host' || p.peerId !== e.host) p.close();
    }
    if (role === 'host') this.prepareSpare();
    else this.dropSpare();
    // A game that was flowing is watched under the new host too, from now.
    if (role === 'host') this.watch?.stop();
    else this.watch?.hostChanged();
    this.events.emit('hostChanged', { host: e.host, previous: e.prev, role });
    if (role === 'client' && !this.peers.has(e.host)) this.connectToHost();
  }

  /** The server gave our room to another member: this tab had stopped answering as its host. */
  private onHostReplaced(e: HostReplaced): void {
    if (this.closed || e.room !== this.info.code) return;
    this.events.emit('hostReplaced', e);
    this.close(Reason.Unresponsive);
  }

  /** The watch found the host silent: tell the server (it counts one report per player). */
  private reportSilence(silentMs: number): void {
    const host = this.hostId;
    this.events.emit('hostSilent', { host, silentMs });
    this.lobby.reportHostSilent(host).catch((err: unknown) => {
      // Refused for good (a room without migrate, not a member any more): stop watching.
      if (err instanceof LobbyError && err.code !== ErrorCode.RateLimited && err.code !== ClientErrorCode.Timeout) {
        this.watch?.stop();
        this.watch = null;
      }
    });
  }

  /** New credentials: kept for peers made from now on, and handed to every open one. */
  private onIceRefresh(ice: Ice): void {
    if (this.closed) return;
    this.ice = ice;
    const servers = this.iceServers();
    for (const p of this.peers.values()) p.refreshIce(servers);
    // Made with the old credentials, the spare would gather with them.
    if (this.spare !== null) {
      this.dropSpare();
      this.prepareSpare();
    }
    this.refreshes++;
    this.events.emit('iceRefreshed', this.refreshes);
  }

  private iceServers(): RTCIceServer[] {
    return this.ice.servers.map((s) => ({ urls: s.urls, username: s.username, credential: s.credential }));
  }

  /**
   * Makes the host's spare answerer soon (not in the middle of answering),
   * unless there is one or the session does not want one.
   */
  private prepareSpare(): void {
    if (this.options.spareAnswerer === false || this.spare !== null || this.spareTimer !== null) return;
    this.spareTimer = setTimeout(() => {
      this.spareTimer = null;
      if (this.closed || this.role !== 'host' || this.spare !== null) return;
      try {
        this.spare = new PeerLink({
          peerId: '',
          offerer: false,
          iceServers: this.iceServers(),
          signal: (s) => this.lobby.sendSignal(s),
          maxBufferedGame: this.options.maxBufferedGame,
          connectTimeoutMs: this.options.connectTimeoutMs,
          createPeerConnection: this.options.createPeerConnection,
        });
      } catch {
        // Only a head start: the offer is answered with a new connection,
        // whose failure (no WebRTC here) is reported then.
      }
    }, 0);
  }

  /** The spare answerer for an offer that just came, if it is still good; a new one is made after. */
  private takeSpare(): PeerLink | undefined {
    const spare = this.spare;
    this.spare = null;
    this.prepareSpare();
    return spare !== null && !spare.isClosed ? spare : undefined;
  }

  private dropSpare(): void {
    if (this.spareTimer !== null) clearTimeout(this.spareTimer);
    this.spareTimer = null;
    this.spare?.close();
    this.spare = null;
  }

  /** A link to peerId: `early` (an unbound offer, bound here) or a new one. */
  private addPeer(peerId: string, offerer: boolean, early?: PeerLink): PeerLink {
    const peer =
      early ??
      new PeerLink({
        peerId,
        offerer,
        iceServers: this.iceServers(),
        signal: (s) => this.lobby.sendSignal(s),
        maxBufferedGame: this.options.maxBufferedGame,
        connectTimeoutMs: this.options.connectTimeoutMs,
        createPeerConnection: this.options.createPeerConnection,
      });
    this.peers.set(peerId, peer);
    let opened = false;
    // A link made to replace a dropped one: if it fails too, the policy says whether to go on.
    const relink = offerer && this.relinkAttempts > 0;
    let openedAt = 0;
    peer.on('open', () => {
      opened = true;
      openedAt = Date.now();
      this.events.emit('peerOpen', peerId);
    });
    peer.on('message', (data, channel) => {
      // Only a started game's traffic: before it, a quiet host is no news.
      if (peerId === this.hostId && this.role === 'client' && this.info.started) this.watch?.heard();
      this.events.emit('message', peerId, data, channel);
    });
    peer.on('error', (err) => this.events.emit('error', err));
    peer.on('close', () => {
      this.droppedByClosedPeers += peer.dropped;
      if (this.peers.get(peerId) === peer) this.peers.delete(peerId);
      if (opened) this.events.emit('peerClose', peerId);
      // Our link to the host dropped although the room says both of us are
      // still here (we close it ourselves before a playerLeft or a host
      // change lands): offer again, as on joining.
      if ((opened || relink) && offerer && this.shouldRelink(peerId)) {
        // A link that had been up a while starts a new series of attempts.
        if (opened && Date.now() - openedAt > STABLE_LINK_MS) this.relinkAttempts = 0;
        this.scheduleRelink();
      }
    });
    if (early) early.bind(peerId);
    return peer;
  }

  private shouldRelink(peerId: string): boolean {
    return (
      !this.closed &&
      this.role === 'client' &&
      peerId === this.hostId &&
      !this.peers.has(peerId) &&
      this.members.some((m) => m.id === peerId)
    );
  }

  private scheduleRelink(): void {
    const policy = this.options.hostLinkPolicy === undefined ? backoff({ initialMs: 1000, maxMs: 4000, maxAttempts: 3 }) : this.options.hostLinkPolicy;
    if (policy === null || this.relinkTimer !== null) return;
    const delay = policy.nextRetryDelayMs(++this.relinkAttempts);
    if (delay === null) return;
    const host = this.hostId;
    this.relinkTimer = setTimeout(() => {
      this.relinkTimer = null;
      if (host === this.hostId && this.shouldRelink(host)) this.connectToHost();
    }, delay);
  }

  private cancelRelink(): void {
    if (this.relinkTimer !== null) clearTimeout(this.relinkTimer);
    this.relinkTimer = null;
  }

  /**
   * A room request through the lobby connection. Once the session is over
   * the lobby may be in another room (or none), so nothing is sent.
   */
  private async request(what: string, send: () => Promise<void>): Promise<void> {
    if (this.closed) throw new LobbyError(ClientErrorCode.Closed, `${what}: the room session is over (${this.closedReason})`);
    await send();
  }

  private onPlayerJoined(p: Player): void {
    if (this.members.some((m) => m.id === p.id)) return;
    this.members = [...this.members, p];
    this.events.emit('playerJoined', p);
  }

  private onPlayerLeft(id: string, reason: string): void {
    const player = this.members.find((m) => m.id === id);
    if (!player) return;
    this.members = this.members.filter((m) => m !== player);
    this.peers.get(id)?.close();
    this.events.emit('playerLeft', player, reason);
  }

  /** Only members of this room: an update for anyone else is not ours to keep. */
  private onPlayerUpdated(p: Player): void {
    const previous = this.members.find((m) => m.id === p.id);
    if (!previous) return;
    this.members = this.members.map((m) => (m === previous ? p : m));
    this.events.emit('playerUpdated', p, previous);
  }

  private onRoomUpdated(info: RoomInfo): void {
    if (info.code !== this.info.code) return;
    // The host moves only through hostChanged, which re-forms the star (it
    // compares against info.host); the frames come in order, so the two
    // agree anyway. A room never un-starts.
    const previous = this.info.spectators;
    this.info = { ...info, host: this.info.host, started: info.started || this.info.started };
    this.events.emit('roomUpdated', this.info);
    if (this.info.spectators !== previous) this.events.emit('spectatorsChanged', this.info.spectators, previous);
  }

  /** At most once: a room starts once, and one that had started before we joined never says so again. */
  private onGameStarted(e: GameStarted): void {
    if (this.info.started) return;
    this.info = { ...this.info, started: true };
    this.events.emit('gameStarted', e);
  }

  private onChat(m: ChatMessage): void {
    if (!this.members.some((p) => p.id === m.from)) return;
    const log = [...this.chatLog, m];
    this.chatLog = log.length > this.maxChatLines ? log.slice(log.length - this.maxChatLines) : log;
    this.events.emit('chat', m);
  }
}
