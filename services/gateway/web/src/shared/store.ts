// A tiny observable value and the hook that re-renders a component when it changes.
import { useEffect, useState } from "preact/hooks";

export class Store<T> {
  private listeners = new Set<(value: T) => void>();
  constructor(private current: T) {}

  get value(): T {
    return this.current;
  }

  set(next: T): void {
    if (Object.is(next, this.current)) return;
    this.current = next;
    for (const listener of [...this.listeners]) listener(next);
  }

  update(change: (value: T) => T): void {
    this.set(change(this.current));
  }

  subscribe(listener: (value: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export function useStore<T>(store: Store<T>): T {
  const [value, setValue] = useState(store.value);
  useEffect(() => {
    setValue(store.value);
    return store.subscribe(setValue);
  }, [store]);
  return value;
}

/** A value kept in localStorage (never a secret: the session is an HttpOnly cookie). */
export function stored<T>(key: string, fallback: T): Store<T> {
  let initial = fallback;
  try {
    const raw = localStorage.getItem(key);
    if (raw !== null) initial = JSON.parse(raw) as T;
  } catch {
    // unreadable or blocked storage: start from the fallback
  }
  const store = new Store<T>(initial);
  store.subscribe((value) => {
    try {
      if (value === null || value === undefined) localStorage.removeItem(key);
      else localStorage.setItem(key, JSON.stringify(value));
    } catch {
      // storage full or blocked: the value lives for this page only
    }
  });
  return store;
}
