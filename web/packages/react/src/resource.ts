import { useEffect, useSyncExternalStore } from 'react';

/**
 * Something a hook opens in an effect, with a snapshot React reads through
 * useSyncExternalStore.
 *
 * StrictMode runs every effect twice in development (effect, cleanup,
 * effect) on the same component: closing on the cleanup would open a second
 * connection a moment later. So release() only schedules the close, on a
 * task of its own, and a retain() before that task runs keeps the same thing
 * open: one connection, not two. A real unmount closes it one task later.
 * A resource closed and then retained again (React may hide a component and
 * show it later, keeping its state) opens afresh.
 *
 * Nothing happens in the constructor: a hook makes its resource during
 * render, which React may repeat or throw away.
 */
export abstract class Resource<S> {
  private users = 0;
  private opened = false;
  private closeTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly listeners = new Set<() => void>();

  protected constructor(private snapshot: S) {}

  /** For useSyncExternalStore: call `listener` whenever the snapshot changes. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** For useSyncExternalStore: the snapshot now (the same object until it changes). */
  readonly getSnapshot = (): S => this.snapshot;

  /** A user (an effect) starts: opens the resource unless it is open or about to close. */
  retain(): void {
    this.users++;
    if (this.closeTimer !== null) {
      clearTimeout(this.closeTimer);
      this.closeTimer = null;
    }
    if (!this.opened) {
      this.opened = true;
      this.open();
    }
  }

  /** A user (an effect's cleanup) is done: the last one closes the resource, one task later. */
  release(): void {
    this.users = Math.max(0, this.users - 1);
    if (this.users > 0 || !this.opened || this.closeTimer !== null) return;
    this.closeTimer = setTimeout(() => {
      this.closeTimer = null;
      if (this.users > 0 || !this.opened) return;
      this.opened = false;
      this.close();
    }, 0);
  }

  /** True between open() and close(). */
  protected get isOpen(): boolean {
    return this.opened;
  }

  protected abstract open(): void;
  protected abstract close(): void;

  /** Replaces the snapshot and tells React, unless it is the same object. */
  protected publish(next: S): void {
    if (next === this.snapshot) return;
    this.snapshot = next;
    for (const listener of [...this.listeners]) listener();
  }
}

const noSubscribe = (): (() => void) => () => undefined;

/**
 * Retains `resource` while the component is mounted and returns its
 * snapshot: `idle` without one, `initial` on a server render (which runs no
 * effect, so opens nothing).
 */
export function useResource<S>(resource: Resource<S> | null, idle: S, initial: S): S {
  useEffect(() => {
    if (resource === null) return undefined;
    resource.retain();
    return () => resource.release();
  }, [resource]);
  return useSyncExternalStore(
    resource?.subscribe ?? noSubscribe,
    resource?.getSnapshot ?? (() => idle),
    () => (resource === null ? idle : initial),
  );
}
