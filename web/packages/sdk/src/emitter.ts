/** Event name → listener arguments, e.g. `{ close: [reason: string] }`. */
export type EventMap<E> = { [K in keyof E]: unknown[] };

type Listener = (...args: unknown[]) => void;

/** Returned by `on`: call it to stop listening. */
export type Unsubscribe = () => void;

/**
 * A typed event emitter with no dependency. A listener that throws does not
 * stop the others; its error is rethrown on its own so it still gets reported.
 */
export class Emitter<E extends EventMap<E>> {
  // Listeners are stored untyped; on() and emit() keep each event's types paired.
  private readonly listeners = new Map<keyof E, Set<Listener>>();

  on<K extends keyof E>(event: K, listener: (...args: E[K]) => void): Unsubscribe {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    const entry = listener as unknown as Listener;
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  }

  once<K extends keyof E>(event: K, listener: (...args: E[K]) => void): Unsubscribe {
    const off = this.on(event, (...args) => {
      off();
      listener(...args);
    });
    return off;
  }

  emit<K extends keyof E>(event: K, ...args: E[K]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(...args);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }

  /** Drops every listener. */
  clear(): void {
    this.listeners.clear();
  }
}
