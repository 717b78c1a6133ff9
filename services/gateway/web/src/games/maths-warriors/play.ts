// One player's Maths Warriors session over the shared socket: lobby requests (room, code, quick
// match, AI), the match in progress, rematches, and the way back into a game after a reload or a
// dropped connection (the match id is kept in localStorage: a reopened tab reconnects to it).
import type * as W from "../../gen/wire";
import { localWins, me } from "../../shared/session";
import type { Socket } from "../../shared/socket";
import { WireError } from "../../shared/socket";
import { Store, stored } from "../../shared/store";
import { type MatchPush, type MatchState, apply, fromSnapshot } from "./match";

export const GAME = "maths-warriors";

export type Phase =
  | { kind: "lobby" }
  | { kind: "room"; code: string; settings: W.RoomSettings }
  | { kind: "queue"; mode: "casual" | "ranked" }
  | { kind: "starting" }
  | { kind: "match" };

export interface Rematch {
  available: boolean;
  askedBy: string | null;
  declined: boolean;
}

export interface OpponentPreview {
  target: string | null;
  tokens: W.Token[];
  value: number | null;
}

interface Current {
  matchId: string;
  roomCode: string;
}

export class MathsWarriors {
  readonly phase = new Store<Phase>({ kind: "lobby" });
  readonly match = new Store<MatchState | null>(null);
  readonly rematch = new Store<Rematch>({ available: false, askedBy: null, declined: false });
  readonly opponentPreview = new Store<OpponentPreview | null>(null);
  /** Polite announcements for screen readers and the status line. */
  readonly notice = new Store<string>("");
  readonly error = new Store<string>("");
  private readonly current = stored<Current | null>("arena.mw.current", null);
  private counted = stored<string[]>("arena.mw.counted", []);
  private off: (() => void)[] = [];

  /** The socket is open and authenticated: lobby requests can go. */
  readonly online = new Store<boolean>(false);

  constructor(private socket: Socket) {}

  start(): void {
    const s = this.socket;
    this.off = [
      s.on("snapshot", (m) => this.snapshot(m)),
      ...(["strength_attacked", "mind_attacked", "turn_skipped", "game_over", "opponent_disconnected", "opponent_reconnected", "time_sync"] as const).map(
        (type) => s.on(type, (m) => this.push(m)),
      ),
      s.on("preview", (m) => this.opponentPreview.set({ target: m.target ?? null, tokens: m.tokens ?? [], value: m.value ?? null })),
      s.on("lobby", (m) => this.lobby(m)),
      s.onOpen(() => void this.resume()),
      s.status.subscribe((status) => this.online.set(status === "open")),
    ];
    this.online.set(s.status.value === "open");
  }

  stop(): void {
    for (const off of this.off) off();
  }

  private async resume(): Promise<void> {
    const current = this.current.value;
    const who = me.value;
    if (!current || !who) return;
    try {
      await this.socket.request("reconnect", { match_id: current.matchId, player_id: who.player_id });
    } catch (error) {
      if (error instanceof WireError && (error.code === "not_in_match" || error.code === "auth_failed")) {
        this.current.set(null);
        if (this.phase.value.kind === "match" && this.match.value?.status === "playing") this.toLobby();
      }
    }
  }

  private snapshot(s: W.Snapshot): void {
    const state = fromSnapshot(s);
    this.match.set(state);
    this.current.set({ matchId: state.matchId, roomCode: state.roomCode });
    this.phase.set({ kind: "match" });
    this.rematch.set({ available: false, askedBy: null, declined: false });
    this.opponentPreview.set(null);
    this.error.set("");
    if (state.status === "over") this.over(state);
    else this.notice.set(`Game on against ${this.opponentName(state)}. ${state.toMove === this.seat(state) ? "Your move." : "Their move."}`);
  }

  private push(m: MatchPush): void {
    const before = this.match.value;
    if (!before) return;
    const after = apply(before, m);
    if (after === before) return;
    this.match.set(after);
    if (m.type === "time_sync") return;
    this.opponentPreview.set(null);
    const mine = this.seat(after);
    if (m.type === "game_over") this.over(after);
    else if (m.type === "opponent_disconnected") this.notice.set(`${this.opponentName(after)} is away: they have 30 seconds to come back.`);
    else if (m.type === "opponent_reconnected") this.notice.set(`${this.opponentName(after)} is back.`);
    else if (after.last) this.notice.set(`${after.last.text}. ${after.toMove === mine ? "Your move." : "Their move."}`);
  }

  private over(state: MatchState): void {
    const won = state.winner === this.seat(state);
    this.notice.set(`Game over: ${won ? "you won" : "you lost"} (${state.reason ?? ""}).`);
    if (won && me.value?.kind === "guest" && !this.counted.value.includes(state.matchId)) {
      this.counted.set([...this.counted.value.slice(-49), state.matchId]);
      localWins.update((n) => n + 1);
    }
  }

  private lobby(m: W.Lobby): void {
    const data = m.data as Record<string, unknown>;
    const who = me.value?.player_id;
    const code = this.match.value?.roomCode;
    if (!code || m.stream !== `room-${code}`) return;
    switch (m.event) {
      case "room_match_finished":
        this.rematch.set({ available: true, askedBy: null, declined: false });
        break;
      case "rematch_requested":
        this.rematch.update((r) => ({ ...r, askedBy: String(data["player_id"] ?? ""), declined: false }));
        this.notice.set(data["player_id"] === who ? "Rematch asked: waiting for the answer." : "Your opponent asks for a rematch.");
        break;
      case "rematch_declined":
        this.rematch.update((r) => ({ ...r, askedBy: null, declined: true }));
        this.notice.set("The rematch was declined.");
        break;
      case "room_closed":
        this.rematch.set({ available: false, askedBy: null, declined: false });
        break;
    }
  }

  seat(state: MatchState): 1 | 2 {
    return state.seats.find((s) => s.player_id === me.value?.player_id)?.seat === 2 ? 2 : 1;
  }

  opponentName(state: MatchState): string {
    return state.seats.find((s) => s.player_id !== me.value?.player_id)?.name ?? "your opponent";
  }

  private async attempt<T>(work: () => Promise<T>): Promise<T | undefined> {
    this.error.set("");
    try {
      return await work();
    } catch (error) {
      this.error.set(error instanceof Error ? describe(error) : String(error));
      return undefined;
    }
  }

  // -- lobby ------------------------------------------------------------------------------------

  async createRoom(settings: W.RoomSettings): Promise<void> {
    const made = await this.attempt(() => this.socket.request("create_room", { settings: { ...settings } }));
    if (made) this.phase.set({ kind: "room", code: made.code, settings });
  }

  async joinRoom(code: string): Promise<void> {
    const clean = code.trim().toUpperCase();
    if (!clean) return;
    const joined = await this.attempt(() => this.socket.request("join_room", { code: clean }));
    if (joined && this.phase.value.kind !== "match") this.phase.set({ kind: "starting" });
  }

  async leaveRoom(): Promise<void> {
    await this.attempt(() => this.socket.request("leave_room", {}));
    this.toLobby();
  }

  async queue(mode: "casual" | "ranked"): Promise<void> {
    const queued = await this.attempt(() => this.socket.request("queue", { game: GAME, mode }));
    if (queued && this.phase.value.kind !== "match") this.phase.set({ kind: "queue", mode });
  }

  async leaveQueue(): Promise<void> {
    await this.attempt(() => this.socket.request("leave_queue", {}));
    this.toLobby();
  }

  async playAi(level: "easy" | "medium" | "hard" | "impossible", settings: W.RoomSettings): Promise<void> {
    this.phase.set({ kind: "starting" });
    const started = await this.attempt(() => this.socket.request("play_ai", { level, settings }));
    if (!started && this.phase.value.kind === "starting") this.toLobby();
  }

  toLobby(): void {
    if (this.match.value?.status !== "playing") this.current.set(null);
    this.match.set(null);
    this.phase.set({ kind: "lobby" });
  }

  // -- the match --------------------------------------------------------------------------------

  private moved(result: W.StrengthAck | W.MindAck | W.SkipAck | W.ResignAck | undefined): boolean {
    if (!result) return false;
    for (const event of result.events) this.push(event as unknown as MatchPush);
    return true;
  }

  async strength(attacker: W.Die, target: W.Die): Promise<boolean> {
    return this.moved(await this.attempt(() => this.socket.request("strength", { attacker, target })));
  }

  async mind(target: W.Die, tokens: W.Token[]): Promise<boolean> {
    return this.moved(await this.attempt(() => this.socket.request("mind", { target, tokens })));
  }

  async skip(): Promise<boolean> {
    return this.moved(await this.attempt(() => this.socket.request("skip", {})));
  }

  async resign(): Promise<boolean> {
    return this.moved(await this.attempt(() => this.socket.request("resign", {})));
  }

  async preview(tokens: W.Token[], target: W.Die | null): Promise<W.PreviewInAck | null> {
    try {
      return await this.socket.request("preview", target ? { tokens, target } : { tokens });
    } catch {
      return null;
    }
  }

  async askRematch(): Promise<void> {
    await this.attempt(() => this.socket.request("rematch_request", {}));
  }

  async answerRematch(accept: boolean): Promise<void> {
    await this.attempt(() => this.socket.request(accept ? "rematch_accept" : "rematch_decline", {}));
  }
}

const MESSAGES: Record<string, string> = {
  room_not_found: "No open room has that code.",
  room_full: "That room already has two players.",
  cannot_join_own_room: "That is your own room: share the code with your opponent.",
  ranked_requires_accounts: "Ranked matches require two different accounts: sign up first.",
  already_in_room: "You are already in a room.",
  already_queued: "You are already waiting for a quick match.",
  room_cap_reached: "The server has too many open rooms right now; try again soon.",
  rate_limited: "Too fast: wait a moment.",
  not_your_turn: "It is not your turn.",
  offline: "The connection dropped; trying again.",
};

function describe(error: Error): string {
  return error instanceof WireError ? (MESSAGES[error.code] ?? `${error.message} (${error.code})`) : error.message;
}
