// The one WebSocket of the page (docs/protocol.md). Every message gets an id and exactly one
// answer; a message still unanswered when the socket drops is sent again, with the same id, on
// the next socket (the gateway answers a repeated id without applying it twice). The session
// cookie authenticates the handshake, so no token is ever handled here.
import type * as W from "../gen/wire";
import { Store } from "./store";

type Outgoing<T extends W.ClientType> = Omit<Extract<W.ClientMessage, { type: T }>, "id">;
type Push = Exclude<W.ServerMessage, W.Ack | W.Error>;
export type PushOf<T extends Push["type"]> = Extract<Push, { type: T }>;
export type Status = "connecting" | "open" | "offline";

export class WireError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Pending {
  text: string;
  resend: boolean;
  resolve: (result: unknown) => void;
  reject: (error: WireError) => void;
  /** Times the gateway's rate limit dropped it (it is sent again after a pause). */
  limited?: number;
}

/** A message the rate limit dropped is sent again, after 0.3 s, 0.6 s, …, this many times: a
 * player's quick clicks are slowed down, never lost (the gateway dropped it unread, so the same
 * id is safe to send again). */
const RATE_LIMITED_RETRIES = 5;

/** Close codes of the gateway: 4001 the session ended (reason says how), 1008 refused. */
const SESSION_ENDED = 4001;
const POLICY = 1008;

export class Socket {
  readonly status = new Store<Status>("connecting");
  private ws: WebSocket | null = null;
  private pending = new Map<string, Pending>();
  private handlers = new Map<string, Set<(message: never) => void>>();
  private openHandlers = new Set<() => void>();
  private retries = 0;
  private stopped = false;

  /** Called when the gateway ended or refused the session: get a live one, then we reconnect. */
  constructor(private renewSession: (reason: string) => Promise<void>) {}

  start(): void {
    this.stopped = false;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.ws?.close(1000);
  }

  private open(): void {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/v1/ws`);
    this.ws = ws;
    this.status.set("connecting");
    ws.onopen = () => {
      // The handshake carried the cookie; a pong confirms the socket is authenticated.
      this.request("pong", {}).then(
        () => {
          this.retries = 0;
          const unanswered = [...this.pending.values()].filter((p) => p.resend);
          this.status.set("open");
          // Re-enter the game first: the gateway reads one socket's messages in order.
          for (const handler of [...this.openHandlers]) handler();
          for (const p of unanswered) ws.send(p.text);
        },
        () => undefined, // refused: onclose renews the session
      );
    };
    ws.onmessage = (frame) => this.receive(String(frame.data));
    ws.onclose = (event) => this.closed(ws, event);
  }

  private async closed(ws: WebSocket, event: CloseEvent): Promise<void> {
    if (this.ws !== ws) return;
    this.status.set("offline");
    for (const [id, p] of this.pending) {
      if (p.resend) continue;
      this.pending.delete(id);
      p.reject(new WireError("offline", "the connection closed"));
    }
    if (this.stopped) return;
    if (event.code === SESSION_ENDED || event.code === POLICY) {
      try {
        await this.renewSession(event.reason || "refused");
      } catch {
        // the gateway is unreachable: the retry below tries again
      }
      if (this.ws !== ws || this.stopped) return; // the page opened a new socket meanwhile
    }
    const delay = Math.min(5000, 250 * 2 ** this.retries++);
    setTimeout(() => {
      if (!this.stopped && this.ws === ws) this.open();
    }, this.retries === 1 ? 0 : delay);
  }

  private receive(text: string): void {
    let message: W.ServerMessage;
    try {
      message = JSON.parse(text) as W.ServerMessage;
    } catch {
      return;
    }
    if (message.type === "ack" || message.type === "error") {
      const pending = message.id ? this.pending.get(message.id) : undefined;
      if (!pending || !message.id) return;
      const limited = pending.limited ?? 0;
      if (message.type === "error" && message.code === "rate_limited" && pending.resend && limited < RATE_LIMITED_RETRIES) {
        pending.limited = limited + 1;
        setTimeout(() => {
          if (this.pending.get(message.id as string) === pending) this.sendText(pending.text);
        }, 300 * 2 ** limited);
        return;
      }
      this.pending.delete(message.id);
      if (message.type === "ack") pending.resolve(message.result ?? {});
      else pending.reject(new WireError(message.code ?? "error", message.message ?? "refused"));
      return;
    }
    if (message.type === "ping") {
      this.send({ type: "pong", id: newId() });
      return;
    }
    for (const handler of [...(this.handlers.get(message.type) ?? [])]) {
      (handler as (m: W.ServerMessage) => void)(message);
    }
  }

  private send(message: object): void {
    this.sendText(JSON.stringify(message));
  }

  private sendText(text: string): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(text);
  }

  /** Send one message; resolves with its ack's result, rejects with the error's code. */
  request<T extends W.ClientType>(type: T, fields: Omit<Outgoing<T>, "type">): Promise<W.AckResults[T]> {
    const id = newId();
    const text = JSON.stringify({ type, id, ...fields });
    // A pong (the probe of a new socket) goes out at once and is never resent; anything else
    // waits for a confirmed socket and is resent on the next one until answered.
    const resend = type !== "pong";
    return new Promise((resolve, reject) => {
      this.pending.set(id, { text, resend, resolve: resolve as (r: unknown) => void, reject });
      if (!resend || this.status.value === "open") this.sendText(text);
    });
  }

  /** A game's push by its type (its views' messages: `state`, `maze_view`, `digits_game`…),
   * whose fields docs/protocol.md lists (the AsyncAPI document names them only). */
  onGame(type: string, handler: (message: Record<string, unknown>) => void): () => void {
    return this.on(type as Push["type"], handler as never);
  }

  on<T extends Push["type"]>(type: T, handler: (message: PushOf<T>) => void): () => void {
    const set = this.handlers.get(type) ?? new Set();
    set.add(handler as (message: never) => void);
    this.handlers.set(type, set);
    return () => set.delete(handler as (message: never) => void);
  }

  /** Run on every (re)opened, authenticated socket: re-enter a game, a room, a queue. */
  onOpen(handler: () => void): () => void {
    this.openHandlers.add(handler);
    if (this.status.value === "open") handler();
    return () => this.openHandlers.delete(handler);
  }
}

function newId(): string {
  // Unique per session across reloads: a repeated id would be answered as the earlier message.
  return crypto.randomUUID();
}
