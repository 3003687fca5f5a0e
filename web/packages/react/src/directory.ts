import { RoomDirectory, type LobbyClient, type RoomSummary } from '@hostrelay/sdk';
import { useMemo } from 'react';
import { useLobbyContext } from './lobby.js';
import { Resource, useResource } from './resource.js';

/** What useRoomDirectory returns: 'loading' until the first list is in. */
export interface RoomDirectoryState {
  readonly status: 'idle' | 'loading' | 'open' | 'closed';
  /** The public rooms, as the server lists them; a new array on every change. */
  readonly rooms: readonly RoomSummary[];
  readonly error: Error | null;
}

const IDLE: RoomDirectoryState = { status: 'idle', rooms: [], error: null };
const LOADING: RoomDirectoryState = { status: 'loading', rooms: [], error: null };

/** One watch of the room list on one lobby connection. */
class DirectoryStore extends Resource<RoomDirectoryState> {
  private generation = 0;
  private directory: RoomDirectory | null = null;

  constructor(private readonly lobby: LobbyClient) {
    super(LOADING);
  }

  protected open(): void {
    const generation = ++this.generation;
    this.publish(LOADING);
    RoomDirectory.watch(this.lobby).then(
      (directory) => {
        if (generation !== this.generation) {
          void directory.close();
          return;
        }
        this.directory = directory;
        directory.on('change', (rooms) => this.publish({ status: 'open', rooms, error: null }));
        this.publish({ status: 'open', rooms: directory.rooms, error: null });
      },
      (err: unknown) => {
        if (generation === this.generation) this.publish({ status: 'closed', rooms: [], error: err instanceof Error ? err : new Error(String(err)) });
      },
    );
  }

  protected close(): void {
    this.generation++;
    void this.directory?.close();
    this.directory = null;
  }
}

/**
 * The live list of public rooms on `lobby` (by default the LobbyProvider's
 * client), watched while the component is mounted. The server ends a watch
 * when its session creates or joins a room: unmount the list then.
 */
export function useRoomDirectory(lobby?: LobbyClient | null): RoomDirectoryState {
  const fromContext = useLobbyContext().client;
  const client = lobby === undefined ? fromContext : lobby;
  const store = useMemo(() => (client === null ? null : new DirectoryStore(client)), [client]);
  return useResource(store, IDLE, LOADING);
}
