import {
  LobbyError,
  PeerError,
  RoomSession,
  type CreateRoomOptions,
  type Game,
  type LobbyClient,
  type RoomJoined,
  type RoomSessionOptions,
  type RunningGame,
  type Unsubscribe,
} from '@hostrelay/sdk';
import { MAX_CHAT_TEXT, Reason } from '@hostrelay/protocol';
import { fieldError, ui } from './dom';
import { gameOf } from './games';
import { mark, markOnce } from './marks';
import { describe } from './messages';
import { armKick, kickArmed } from './room-view';
import { MAX_CHAT_LINES, type PlayerView, type Store } from './state';

/** Told of each room session the page enters, and of null once it closed (the e2e build's test hooks listen). */
export type SessionObserver = (session: RoomSession | null) => void;

/** One room from join to close: its session, its listeners, the game once started. */
interface ActiveRoom {
  session: RoomSession;
  /** Game-channel packets received, of any kind. */
  received: number;
  /** Set when the game starts, before its code has loaded; the game is mounted once it has. */
  starting: boolean;
  game: RunningGame | null;
  offs: Unsubscribe[];
  timer: number;
  /** Who took the room over when this tab, its host, stopped answering (hostReplaced). */
  replacedBy: string | null;
}

/** The page shows as many chat lines as the session keeps. */
const sessionOptions: RoomSessionOptions = { maxChatLines: MAX_CHAT_LINES };

/**
 * Everything the page does inside a room: players with ready and ping, kick,
 * start, chat, the share link and QR code, the game, following a host
 * change, and rejoining after the lobby session is lost (a client; or a
 * host whose room migrates, which comes back as a client: its seat and its
 * host role went to someone else).
 */
export class RoomController {
  private active: ActiveRoom | null = null;
  /** Where a client goes back to after a reconnect. */
  private rejoin: { code: string; password: string } | null = null;
  /** The lobby connection the room was entered on: a replaced host walks back in on it. */
  private lobby: LobbyClient | null = null;

  constructor(
    private readonly store: Store,
    /** The base URL of the server holding our room, for its share link. */
    private readonly shareBase: () => string,
    private readonly observe: SessionObserver = () => undefined,
  ) {
    ui.copyButton.addEventListener('click', () => void this.copyLink());
    ui.leaveButton.addEventListener('click', () => void this.leave());
    ui.readyButton.addEventListener('click', () => void this.toggleReady());
    ui.startButton.addEventListener('click', () => void this.start());
    ui.chatForm.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.sendChat();
    });
    ui.chatInput.maxLength = MAX_CHAT_TEXT;
    ui.players.addEventListener('click', (e) => {
      const b = e.target instanceof Element ? e.target.closest<HTMLButtonElement>('button[data-kick]') : null;
      const id = b?.dataset['kick'];
      if (id) void this.kick(id);
    });
    ui.retryButton.addEventListener('click', () => location.reload());
  }

  async create(client: LobbyClient, settings: CreateRoomOptions): Promise<void> {
    this.lobby = client;
    this.enter(await RoomSession.create(client, settings, sessionOptions), '');
  }

  /** Play now: the fullest open room of the mode, or a new one we host. */
  async quickPlay(client: LobbyClient, mode: string): Promise<void> {
    // A game that seats fewer than the server's default room (the duel) asks for rooms its size.
    const maxPlayers = gameOf(mode).maxPlayers;
    this.lobby = client;
    this.enter(await RoomSession.quickPlay(client, mode, { migrate: true, ...(maxPlayers ? { maxPlayers } : {}) }, sessionOptions), '');
  }

  /** Our party's leader pressed Play now: the server already put us in this room. */
  placed(client: LobbyClient, joined: RoomJoined): void {
    if (this.active) return; // cannot happen: the server places only members outside a room
    this.lobby = client;
    this.enter(new RoomSession(client, joined, sessionOptions), '');
  }

  /** `createPeerConnection`: a share link's warm peer connection (WarmPeer), for the join's early offer. */
  async join(
    client: LobbyClient,
    code: string,
    password: string,
    createPeerConnection?: RoomSessionOptions['createPeerConnection'],
  ): Promise<void> {
    const options = createPeerConnection ? { ...sessionOptions, createPeerConnection } : sessionOptions;
    this.lobby = client;
    this.enter(await RoomSession.join(client, code, password, options), password);
  }

  /** A new lobby connection: a client that lost its room walks back in. */
  onReconnected(client: LobbyClient): void {
    const back = this.rejoin;
    if (!back || this.active) return;
    this.lobby = client;
    RoomSession.join(client, back.code, back.password, sessionOptions).then(
      (s) => this.enter(s, back.password),
      (err: unknown) => {
        this.rejoin = null;
        const code = err instanceof LobbyError ? err.code : 'disconnected';
        const message = err instanceof Error ? err.message : String(err);
        this.store.update({ phase: 'error', error: { code, message } });
      },
    );
  }

  private enter(session: RoomSession, password: string): void {
    markOnce('room-joined');
    const room: ActiveRoom = {
      session,
      received: 0,
      starting: false,
      game: null,
      offs: [],
      timer: 0,
      replacedBy: null,
    };
    this.active = room;
    this.rejoin = session.role === 'client' || session.room.migrate ? { code: session.room.code, password } : null;
    const refresh = (): void => this.store.update({ players: this.views(room) });

    room.offs.push(
      session.on('playerJoined', refresh),
      session.on('playerLeft', refresh),
      session.on('playerUpdated', refresh),
      session.on('roomUpdated', (info) => this.store.update({ room: info, role: session.role })),
      session.on('gameStarted', () => this.startGame(room)),
      session.on('chat', () => this.store.update({ chat: [...session.chat] })),
      session.on('message', (_peer, _data, channel) => {
        if (channel === 'game') room.received++;
      }),
      session.on('peerOpen', () => {
        markOnce('channel-open');
        this.store.update({ openPeers: session.openPeers });
      }),
      // The host marker moves; a promoted player gets the host's controls (kick, start).
      session.on('hostChanged', ({ role }) => {
        mark('host-changed');
        this.store.update({ role, room: session.room, players: this.views(room), openPeers: session.openPeers });
      }),
      session.on('peerClose', () => this.store.update({ openPeers: session.openPeers })),
      session.on('hostReplaced', (e) => {
        room.replacedBy = session.players.find((p) => p.id === e.host)?.name ?? null;
      }),
      session.on('error', (err: PeerError | LobbyError) =>
        this.store.update({ error: { code: err.code, message: err.message } }),
      ),
      session.on('closed', (reason) => this.onClosed(room, reason)),
    );
    room.timer = window.setInterval(() => {
      const rttMs = room.game?.stats().rttMs ?? null;
      const packetsReceived = room.received;
      if (rttMs !== this.store.state.rttMs || packetsReceived !== this.store.state.packetsReceived) {
        this.store.update({ rttMs, packetsReceived });
      }
    }, 200);
    this.observe(session);

    // The room's own server: in a cluster another node's link works too (it
    // redirects here), but not once that node is gone.
    const link = `${this.shareBase()}/r/${session.room.code}`;
    // A share link is already at the room's path: a same-document
    // navigation to it would cost the join's busiest moment ≈ 15 ms for nothing.
    if (location.pathname !== `/r/${session.room.code}` || location.search !== '') history.replaceState(null, '', `/r/${session.room.code}`);
    ui.shareLink.value = link;
    // A joining client draws the QR code a second later: drawn now (or as
    // the link opens), its milliseconds sit between the host's answer, the
    // link opening and the first packets, on a main thread they all need.
    // A host shares at once.
    // (The encoder is a chunk of its own: a joining page needs it a second in, not at start.)
    const drawQr = (): void => {
      void import('./qr').then(({ qrDataUrl }) => {
        if (this.active === room) ui.shareQr.src = qrDataUrl(link);
      });
    };
    ui.shareQr.removeAttribute('src');
    if (session.role === 'host') drawQr();
    else {
      const later = window.setTimeout(drawQr, 1000);
      room.offs.push(() => clearTimeout(later));
    }
    fieldError(ui.readyError, null);
    fieldError(ui.chatError, null);
    this.store.update({
      phase: 'room',
      role: session.role,
      roomCode: session.room.code,
      room: session.room,
      you: session.you,
      players: this.views(room),
      openPeers: session.openPeers,
      started: false,
      chat: [...session.chat],
      rttMs: null,
      packetsReceived: 0,
      error: null,
    });
    // Fetch the room's game now (a chunk of its own): it is ready by the
    // time the host starts, or, in a game under way, before the channel opens.
    void gameOf(session.room.mode).load().catch(() => undefined);
    if (session.started) this.startGame(room);
  }

  private views(room: ActiveRoom): PlayerView[] {
    const s = room.session;
    return s.players.map((p) => ({
      id: p.id,
      name: p.name,
      host: p.id === s.hostId,
      ready: p.ready,
      ping: p.ping,
      away: p.away,
      verified: p.verified,
      userId: p.userId,
    }));
  }

  private startGame(room: ActiveRoom): void {
    if (room.starting || this.active !== room) return;
    room.starting = true;
    this.store.update({ started: true });
    void this.mountGame(room);
  }

  /** Mounts the room's game once its code is loaded, unless the room ended meanwhile. */
  private async mountGame(room: ActiveRoom): Promise<void> {
    let game: Game;
    try {
      game = await gameOf(room.session.room.mode).load();
    } catch (err) {
      // A fetch that failed (the server restarted with a new build, the
      // network dropped): nothing to play, and a reload fetches it again.
      if (this.active === room) this.store.update({ error: { code: 'internal', message: `the game could not be loaded (${String(err)}): reload the page` } });
      return;
    }
    if (this.active !== room || room.game) return;
    room.game = game.mount({ session: room.session, container: ui.game });
    ui.game.querySelector<HTMLElement>('canvas, [tabindex]')?.focus({ preventScroll: true });
  }

  private onClosed(room: ActiveRoom, reason: string): void {
    for (const off of room.offs) off();
    clearInterval(room.timer);
    room.game?.stop();
    room.game = null;
    if (this.active === room) this.active = null;
    this.observe(null);
    switch (reason) {
      case 'left':
      case 'pagehide':
        return;
      case Reason.Unresponsive: {
        // This tab hosted the room and stopped answering (frozen: a locked
        // phone, a debugger); the server gave the room to another player.
        // The room goes on: walk back in as one of its players.
        const by = room.replacedBy ?? 'another player';
        this.store.update({
          openPeers: [],
          notice: `Your tab stopped responding (it was frozen or asleep), so ${by} took over as host. You are back in the room as a player.`,
        });
        if (this.lobby && this.rejoin) this.onReconnected(this.lobby);
        return;
      }
      case 'disconnected':
        if (this.rejoin) {
          // Stay on the room page under the reconnecting banner; onReconnected takes us back in.
          this.store.update({ openPeers: [] });
          return;
        }
        this.store.update({ phase: 'error', openPeers: [], error: { code: 'disconnected', message: reason } });
        return;
      default: // kicked, host_left, operator_kicked, operator_closed
        this.rejoin = null;
        this.store.update({ phase: 'error', openPeers: [], error: { code: reason, message: reason } });
    }
  }

  private async toggleReady(): Promise<void> {
    const room = this.active;
    if (!room) return;
    const ready = room.session.me?.ready ?? false;
    await this.roomRequest(ui.readyButton, ui.readyError, () => room.session.setReady(!ready));
  }

  private async start(): Promise<void> {
    const room = this.active;
    if (!room) return;
    await this.roomRequest(ui.startButton, ui.readyError, () => room.session.startGame());
  }

  /**
   * A kick takes two presses: the first arms the button ("Sure?") for a few
   * seconds. key is the player id, or "ban:" and the id for a kick with ban.
   */
  private async kick(key: string): Promise<void> {
    const room = this.active;
    if (!room) return;
    if (kickArmed() !== key) {
      armKick(key);
      this.store.update({});
      setTimeout(() => {
        if (kickArmed() === key) {
          armKick(null);
          this.store.update({});
        }
      }, 4000);
      return;
    }
    armKick(null);
    const ban = key.startsWith('ban:');
    try {
      await room.session.kick(ban ? key.slice('ban:'.length) : key, { ban });
    } catch (err) {
      fieldError(ui.readyError, describe(err instanceof LobbyError ? err.code : 'internal', String(err)));
    }
    this.store.update({});
  }

  private async sendChat(): Promise<void> {
    const room = this.active;
    const text = ui.chatInput.value.trim();
    if (!room || text === '') return;
    if ([...text].length > MAX_CHAT_TEXT) {
      fieldError(ui.chatError, `Messages are at most ${MAX_CHAT_TEXT} characters.`, ui.chatInput);
      return;
    }
    fieldError(ui.chatError, null, ui.chatInput);
    try {
      await room.session.sendChat(text);
      ui.chatInput.value = '';
    } catch (err) {
      const code = err instanceof LobbyError ? err.code : 'internal';
      fieldError(
        ui.chatError,
        code === 'rate_limited' ? 'You’re sending messages too fast. Wait a moment.' : describe(code, String(err)),
        ui.chatInput,
      );
    }
  }

  private async roomRequest(button: HTMLButtonElement, error: HTMLParagraphElement, run: () => Promise<void>): Promise<void> {
    fieldError(error, null);
    button.setAttribute('aria-busy', 'true');
    try {
      await run();
    } catch (err) {
      fieldError(error, err instanceof LobbyError ? describe(err.code, err.message) : String(err));
    } finally {
      button.removeAttribute('aria-busy');
    }
  }

  private async copyLink(): Promise<void> {
    const link = ui.shareLink.value;
    try {
      await navigator.clipboard.writeText(link);
    } catch {
      // Clipboard access can be refused; leave the link selected to copy by hand.
      ui.shareLink.select();
      ui.copyStatus.textContent = 'Press Ctrl+C (or ⌘C) to copy the selected link.';
      return;
    }
    ui.copyButton.textContent = 'Copied';
    ui.copyStatus.textContent = 'Link copied. Send it to your friends.';
    setTimeout(() => {
      ui.copyButton.textContent = 'Copy';
    }, 1500);
  }

  private async leave(): Promise<void> {
    ui.leaveButton.disabled = true;
    this.rejoin = null;
    try {
      await this.active?.session.leave();
    } catch {
      // Leaving a connection that is already gone is still leaving.
    }
    location.assign('/');
  }
}
