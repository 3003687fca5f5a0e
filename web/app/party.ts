import { LobbyError, type LobbyClient, type Party } from '@hostrelay/sdk';
import { normalizeRoomCode } from '@hostrelay/protocol';
import { fieldError, ui } from './dom';
import { GAMES } from './games';
import { describe } from './messages';

/**
 * The "Play now" card's party: start one, join one from a link (/?party=CODE),
 * see who is in it, leave it. Only the leader may press Play now; the server
 * brings every member along (LobbyClient's 'roomJoined'). A party lives on the
 * lobby session: a fresh session after a lost connection has none.
 */
export class PartyPanel {
  private party: Party | null = null;
  private you = '';
  /** A party code from the page's link, joined once a connection and a name allow. */
  private pending: string | null;

  constructor(
    private readonly client: () => LobbyClient | null,
    /** Commits the lobby's name field; null when it is not valid (it shows why). */
    private readonly commitName: () => Promise<string | null>,
  ) {
    ui.quickMode.replaceChildren(...GAMES.map((g) => new Option(g.mode)));
    const code = new URLSearchParams(location.search).get('party');
    this.pending = code === null ? null : normalizeRoomCode(code);
    if (code !== null && this.pending === null) fieldError(ui.partyError, 'This party link has no valid party code.');
    ui.partyCreate.addEventListener('click', () => void this.run(async (c) => this.set(await c.createParty())));
    ui.partyJoin.addEventListener('click', () => void this.joinPending());
    ui.partyLeave.addEventListener('click', () => void this.run(async (c) => {
      await c.leaveParty();
      this.clear();
    }));
    this.render();
  }

  /** A new lobby session: its party is whatever the server says (none yet). */
  onConnected(client: LobbyClient, nameSet: boolean): void {
    this.clear();
    client.on('partyUpdated', (p) => {
      this.party = p;
      this.render();
    });
    if (this.pending !== null && nameSet) void this.joinPending();
  }

  /** Whether we are in a party (it lives on this node's session: a move to another node would leave it). */
  get active(): boolean {
    return this.party !== null;
  }

  /** The SDK moved the session to another node (a room there): a new session, in no party. */
  onMoved(): void {
    this.clear();
  }

  private async joinPending(): Promise<void> {
    const code = this.pending;
    if (code === null) return;
    await this.run(async (c) => {
      this.set(await c.joinParty(code));
      this.pending = null;
      history.replaceState(null, '', '/');
    });
  }

  private set(joined: { party: Party; you: string }): void {
    this.party = joined.party;
    this.you = joined.you;
    this.render();
  }

  private clear(): void {
    this.party = null;
    this.you = '';
    this.render();
  }

  private async run(action: (client: LobbyClient) => Promise<void>): Promise<void> {
    fieldError(ui.partyError, null);
    const client = this.client();
    if (!client || (await this.commitName()) === null) return;
    try {
      await action(client);
    } catch (err) {
      fieldError(ui.partyError, err instanceof LobbyError ? describe(err.code, err.message) : String(err));
    }
  }

  private render(): void {
    const p = this.party;
    ui.partyCreate.hidden = p !== null || this.pending !== null;
    ui.partyJoin.hidden = p !== null || this.pending === null;
    ui.partyJoin.textContent = `Join party ${this.pending ?? ''}`;
    ui.partyLive.hidden = p === null;
    const leader = p?.members.find((m) => m.id === p.leader);
    const leading = p === null || p.leader === this.you;
    ui.quickButton.disabled = !leading;
    ui.quickHint.textContent = leading
      ? p !== null && p.members.length > 1
        ? `Your party of ${p.members.length} plays together in one room.`
        : 'Joins the fullest open room of this game, or starts one.'
      : `${leader?.name ?? 'The leader'} leads the party and presses Play now for everyone.`;
    if (p === null) return;
    ui.partyCode.textContent = p.code;
    ui.partyLink.value = `${location.origin}/?party=${p.code}`;
    ui.partyMembers.replaceChildren(
      ...p.members.map((m) => {
        const li = document.createElement('li');
        li.textContent = m.id === p.leader ? `${m.name} ★` : m.name;
        if (m.id === this.you) li.setAttribute('aria-current', 'true');
        return li;
      }),
    );
  }
}
