// A room of any game over the shared socket (docs/protocol.md, "Rooms of any game"): create it
// with the game's settings form, share its code or link, join or watch by code, fill seats with
// the game's AI levels or scripted policies, start it; then the match it started. The room's
// lobby pushes (room-<CODE>) keep its seats, from those `watch_room`'s ack names (a joiner, a
// watcher or a reloaded page heard no push from before it came); a game's page shows its match
// when it starts.
import type * as W from "../gen/wire";
import type { GameInfo } from "./api";
import { me } from "./session";
import type { Socket } from "./socket";
import { WireError } from "./socket";
import { Store, stored } from "./store";

export interface SeatShown {
  seat: number;
  /** A person's id, "" for a filled or free seat. */
  playerId: string;
  name: string;
  /** The AI level or scripted policy of a filled seat. */
  policy: string;
}

export type RoomPhase =
  | { kind: "idle" }
  | { kind: "waiting"; code: string; host: boolean; seats: SeatShown[] }
  | { kind: "match"; code: string; matchId: string; seats: SeatShown[]; seat: number | null; over: boolean }
  | { kind: "watching"; code: string; matchId: string | null; seats: SeatShown[]; over: boolean };

interface Kept {
  code: string;
  watching: boolean;
}

export class Room {
  readonly phase = new Store<RoomPhase>({ kind: "idle" });
  readonly error = new Store<string>("");
  readonly notice = new Store<string>("");
  /** The room this tab is in, so a reload or a dropped socket watches it again. */
  private readonly kept;
  private off: (() => void)[] = [];
  /** Per `watch_room` being answered: the pushes heard meanwhile, to apply again on its seats. */
  private hearing = new Set<W.Lobby[]>();

  constructor(
    private socket: Socket,
    readonly game: GameInfo,
  ) {
    this.kept = stored<Kept | null>(`arena.room.${game.name}`, null);
  }

  start(): void {
    this.off = [this.socket.on("lobby", (m) => this.lobby(m)), this.socket.onOpen(() => void this.rewatch())];
  }

  stop(): void {
    for (const off of this.off) off();
  }

  private code(): string | null {
    const p = this.phase.value;
    return p.kind === "idle" ? null : p.code;
  }

  private free(): SeatShown[] {
    return Array.from({ length: this.game.seats.seats }, (_, i) => ({ seat: i + 1, playerId: "", name: "", policy: "" }));
  }

  /** The seats `watch_room`'s ack names, the others free. */
  private seatsOf(taken: W.WatchRoomAck["seats"]): SeatShown[] {
    const seats = this.free();
    for (const t of taken) {
      const shown = { seat: t.seat, playerId: t.player_id, name: t.name, policy: t.policy };
      const at = seats.findIndex((s) => s.seat === t.seat);
      if (at >= 0) seats[at] = shown;
      else seats.push(shown);
    }
    return seats;
  }

  /** `watch_room`; then `show` makes the phase from its ack, and the pushes heard meanwhile
   * (perhaps later than what the ack read, perhaps already in it: either way applying them again
   * is right) are applied on top. */
  private async watchRoom(code: string, show: (watched: W.WatchRoomAck) => void): Promise<W.WatchRoomAck> {
    const heard: W.Lobby[] = [];
    this.hearing.add(heard);
    let watched: W.WatchRoomAck;
    try {
      watched = await this.socket.request("watch_room", { code });
    } finally {
      this.hearing.delete(heard);
    }
    show(watched);
    for (const m of heard) this.lobby(m);
    return watched;
  }

  private async attempt<T>(work: () => Promise<T>): Promise<T | undefined> {
    this.error.set("");
    try {
      return await work();
    } catch (error) {
      this.error.set(error instanceof WireError ? (MESSAGES[error.code] ?? `${error.message} (${error.code})`) : String(error));
      return undefined;
    }
  }

  async create(settings: Record<string, unknown>): Promise<void> {
    const made = await this.attempt(() => this.socket.request("create_room", { game: this.game.name, settings }));
    if (!made) return;
    const who = me.value;
    const seats = this.free();
    const first = seats[0];
    if (first && who) Object.assign(first, { playerId: who.player_id, name: who.name });
    this.phase.set({ kind: "waiting", code: made.code, host: true, seats });
    this.kept.set({ code: made.code, watching: false });
    this.notice.set(`Room ${made.code} is open.`);
  }

  async join(code: string): Promise<void> {
    const clean = code.trim().toUpperCase();
    if (!clean) return;
    const joined = await this.attempt(() => this.socket.request("join_room", { code: clean }));
    if (!joined) return;
    this.phase.set({ kind: "waiting", code: joined.code, host: false, seats: this.free() });
    this.kept.set({ code: joined.code, watching: false });
    this.notice.set(`You are in room ${joined.code}: the host starts the game.`);
    // This socket heard none of the room's pushes until now (not even its own join): the ack
    // names the seats. Taking the last seat starts the room at once, maybe before this socket
    // hears the room's pushes: the ack's status says whether the match is already on.
    await this.attempt(() =>
      this.watchRoom(joined.code, (status) => {
        const now = this.phase.value;
        if (now.kind !== "waiting" || now.code !== joined.code) return;
        const seats = this.seatsOf(status.seats);
        if (status.match_id) {
          const seat = seats.find((s) => s.playerId && s.playerId === me.value?.player_id)?.seat ?? null;
          this.phase.set({ kind: "match", code: joined.code, matchId: status.match_id, seats, seat, over: status.status === "finished" });
          this.notice.set("The game starts.");
        } else this.phase.set({ ...now, seats });
      }),
    );
  }

  /** Watch a room by its code: its lobby pushes, then its match as a spectator. */
  async watch(code: string): Promise<void> {
    const clean = code.trim().toUpperCase();
    if (!clean) return;
    const watched = await this.attempt(() =>
      this.watchRoom(clean, (w) => this.phase.set({ kind: "watching", code: w.code, matchId: w.match_id, seats: this.seatsOf(w.seats), over: w.status === "finished" })),
    );
    if (watched) this.kept.set({ code: watched.code, watching: true });
  }

  private async rewatch(): Promise<void> {
    const kept = this.kept.value;
    if (!kept) return;
    // Back on a new socket: the room's pushes are watched again (a player's seat is theirs
    // still; the match's own reconnect is the game page's).
    try {
      await this.watchRoom(kept.code, (watched) => {
        if (this.phase.value.kind !== "idle") return;
        const seats = this.seatsOf(watched.seats);
        this.phase.set(
          watched.match_id
            ? kept.watching
              ? { kind: "watching", code: watched.code, matchId: watched.match_id, seats, over: watched.status === "finished" }
              : { kind: "match", code: watched.code, matchId: watched.match_id, seats, seat: null, over: watched.status === "finished" }
            : { kind: "watching", code: watched.code, matchId: null, seats, over: false },
        );
      });
    } catch (error) {
      if (error instanceof WireError && error.code === "room_not_found") this.reset();
    }
  }

  async fill(seat: number, policy: string): Promise<void> {
    await this.attempt(() => this.socket.request("fill_seat", { seat, policy }));
  }

  async begin(): Promise<void> {
    await this.attempt(() => this.socket.request("start_room", {}));
  }

  async leave(): Promise<void> {
    const p = this.phase.value;
    if (p.kind === "waiting" || (p.kind === "match" && p.over)) await this.attempt(() => this.socket.request("leave_room", {}));
    this.reset();
  }

  reset(): void {
    this.kept.set(null);
    this.phase.set({ kind: "idle" });
  }

  private lobby(m: W.Lobby): void {
    for (const heard of this.hearing) heard.push(m);
    const code = this.code();
    if (!code || m.stream !== `room-${code}`) return;
    const data = m.data as Record<string, unknown>;
    const p = this.phase.value;
    if (p.kind === "idle") return;
    const seats = p.seats.map((s) => ({ ...s }));
    switch (m.event) {
      case "room_joined": {
        const player = data["player"] as { player_id?: string; name?: string } | undefined;
        const free = seats.find((s) => !s.playerId && !s.policy);
        if (player?.player_id && free && !seats.some((s) => s.playerId === player.player_id)) {
          free.playerId = player.player_id;
          free.name = player.name ?? "";
        }
        this.phase.set({ ...p, seats });
        this.notice.set(`${player?.name ?? "A player"} joined.`);
        break;
      }
      case "room_seat_filled": {
        const seat = seats.find((s) => s.seat === Number(data["seat"]));
        if (seat) seat.policy = String(data["policy"] ?? "");
        this.phase.set({ ...p, seats });
        break;
      }
      case "room_left": {
        const seat = seats.find((s) => s.playerId === data["player_id"]);
        if (seat) Object.assign(seat, { playerId: "", name: "" });
        this.phase.set({ ...p, seats });
        break;
      }
      case "room_match_started": {
        const started = ((data["seats"] as { player_id?: string; name?: string; policy?: string }[] | undefined) ?? []).map((s, i) => ({
          seat: i + 1,
          playerId: s.policy ? "" : (s.player_id ?? ""),
          name: s.name ?? "",
          policy: s.policy ?? "",
        }));
        const matchId = String(data["match_id"] ?? "");
        const mine = started.find((s) => s.playerId && s.playerId === me.value?.player_id);
        if (p.kind === "watching") this.phase.set({ ...p, matchId, seats: started, over: false });
        else this.phase.set({ kind: "match", code, matchId, seats: started, seat: mine?.seat ?? null, over: false });
        this.notice.set("The game starts.");
        break;
      }
      case "room_match_finished":
        if (p.kind === "match" || p.kind === "watching") this.phase.set({ ...p, over: true });
        this.notice.set("The game is over.");
        break;
      case "room_closed":
        if (p.kind === "waiting") {
          this.reset();
          this.error.set(`The room closed (${String(data["reason"] ?? "").replaceAll("_", " ")}).`);
        }
        break;
    }
  }
}

const MESSAGES: Record<string, string> = {
  room_not_found: "No open room has that code.",
  room_full: "That room has no free seat.",
  cannot_join_own_room: "That is your own room: share the code.",
  already_in_room: "You are already in a room.",
  already_in_match: "You are already in a game.",
  already_queued: "You are waiting for a quick match.",
  not_host: "Only the host can do that.",
  room_not_waiting: "The room is no longer waiting.",
  seat_taken: "That seat is taken.",
  invalid_policy: "This game has no such player.",
  seats_empty: "Every seat needs a player before the start.",
  room_cap_reached: "The server has too many open rooms right now; try again soon.",
  unknown_game: "The server does not host this game.",
  setting_out_of_range: "A setting is out of its range.",
  settings_inconsistent: "These settings do not fit together.",
  unknown_variant: "No such variant.",
  rate_limited: "Too fast: wait a moment.",
  offline: "The connection dropped; trying again.",
};
