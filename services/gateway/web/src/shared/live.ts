// One live match as a game's page follows it (docs/client.md): the stores the page draws from,
// the game's pushes of this match (their types generated from docs/asyncapi.yaml), and the
// socket attached with `watch_match` (a seat if the player holds one, else a spectator or an
// observer), again on every new socket. Each game's live class extends it.
import type * as W from "../gen/wire";
import type { PushOf, Socket } from "./socket";
import { WireError } from "./socket";
import { Store } from "./store";

type PushType = Exclude<W.ServerMessage, W.Ack | W.Error>["type"];

export abstract class LiveMatch {
  readonly error = new Store<string>("");
  private off: (() => void)[] = [];

  constructor(
    protected socket: Socket,
    readonly matchId: string,
  ) {}

  /** The handlers of the game's pushes (`this.on`), unsubscribed by `stop()`. */
  protected abstract subscribe(): (() => void)[];

  start(): void {
    this.off = [...this.subscribe(), this.socket.onOpen(() => void this.attach())];
  }

  stop(): void {
    for (const off of this.off) off();
  }

  /** Whether a push is of this match. */
  protected mine(message: { match_id?: string }): boolean {
    return message.match_id === this.matchId;
  }

  /** `handler` for the pushes of `type` that are this match's (`mine`). */
  protected on<T extends PushType>(type: T, handler: (message: PushOf<T>) => void): () => void {
    return this.socket.on(type, (m) => {
      if (this.mine(m as { match_id?: string })) handler(m);
    });
  }

  /** Once watching: what the game does next with the ack's result (e.g. join its seat). */
  protected async attached(_watched: W.WatchMatchAck): Promise<void> {}

  private async attach(): Promise<void> {
    try {
      await this.attached(await this.socket.request("watch_match", { match_id: this.matchId }));
    } catch (error) {
      this.error.set(error instanceof WireError ? `${error.message} (${error.code})` : String(error));
    }
  }
}
