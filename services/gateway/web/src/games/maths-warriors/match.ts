// A Maths Warriors match as the client folds it: the snapshot, then each push in sequence order.
// The mover gets a move both as a push and in its ack, so anything at or below the sequence
// already folded is dropped (sequences may have gaps).
import type * as W from "../../gen/wire";
import { type Deadlines, deadlines } from "../../shared/clock";
import { DICE, type Die } from "./expression";

export type Seat = 1 | 2;
export interface LastMove {
  kind: "strength" | "mind" | "skip" | "timeout";
  player: number;
  text: string;
}

export interface MatchState {
  matchId: string;
  roomCode: string;
  mode: string;
  preview: boolean;
  sequence: number;
  status: string;
  seats: W.Seat[];
  dice: { 1: W.Dice; 2: W.Dice };
  first: number;
  toMove: number;
  moveCount: number;
  winner: number | null;
  reason: string | null;
  remaining: { 1: number; 2: number } | null;
  rules: Record<string, unknown>;
  clocks: Deadlines;
  gameSeconds: number | null;
  moveSeconds: number;
  away: Partial<Record<number, number>>;
  last: LastMove | null;
}

export type MatchPush =
  | W.StrengthAttacked
  | W.MindAttacked
  | W.TurnSkipped
  | W.GameOver
  | W.OpponentDisconnected
  | W.OpponentReconnected
  | W.TimeSync;

export function fromSnapshot(s: W.Snapshot): MatchState {
  const away: Partial<Record<number, number>> = {};
  for (const seat of s.seats) if (!seat.connected && seat.reconnect_deadline_ms) away[seat.seat] = seat.reconnect_deadline_ms;
  return {
    matchId: s.match_id,
    roomCode: s.room_code,
    mode: s.mode,
    preview: s.preview,
    sequence: s.sequence,
    status: s.status,
    seats: s.seats,
    dice: { 1: s.dice["1"], 2: s.dice["2"] },
    first: s.first,
    toMove: s.to_move,
    moveCount: s.move_count,
    winner: s.winner,
    reason: s.win_reason,
    remaining: s.status === "over" ? { 1: left(s.dice["1"]), 2: left(s.dice["2"]) } : null,
    rules: s.rules as Record<string, unknown>,
    clocks: deadlines(s.clocks),
    gameSeconds: s.clocks.game_seconds,
    moveSeconds: s.clocks.move_seconds,
    away,
    last: null,
  };
}

export const other = (seat: number): Seat => (seat === 1 ? 2 : 1);
export const left = (dice: W.Dice) => DICE.filter((d) => dice[d] !== null).length;
const name = (m: MatchState, seat: number) => m.seats.find((s) => s.seat === seat)?.name ?? `Player ${seat}`;

export function apply(m: MatchState, push: MatchPush): MatchState {
  if (push.match_id !== m.matchId) return m;
  if (push.type === "time_sync") return { ...m, clocks: deadlines(push) };
  if (push.sequence <= m.sequence) return m;
  const next: MatchState = { ...m, sequence: push.sequence };
  switch (push.type) {
    case "strength_attacked":
    case "mind_attacked": {
      const mover = push.player as Seat;
      const mine = { ...m.dice[mover] };
      const theirs = { ...m.dice[other(mover)] };
      const targetValue = theirs[push.target];
      theirs[push.target] = null;
      for (const [die, value] of Object.entries(push.rerolls)) if (value !== undefined) mine[die as Die] = value;
      next.dice = mover === 1 ? { 1: mine, 2: theirs } : { 1: theirs, 2: mine };
      next.toMove = push.to_move;
      next.moveCount = m.moveCount + 1;
      next.clocks = deadlines(push.clocks);
      next.last =
        push.type === "strength_attacked"
          ? { kind: "strength", player: mover, text: `${name(m, mover)} took ${push.target} (${targetValue}) with ${push.attacker} by Strength` }
          : { kind: "mind", player: mover, text: `${name(m, mover)} took ${push.target} (${push.value}) by Mind: ${push.tokens.join(" ")}` };
      return next;
    }
    case "turn_skipped":
      next.toMove = push.to_move;
      next.moveCount = m.moveCount + 1;
      next.clocks = deadlines(push.clocks);
      next.last = {
        kind: push.reason === "timeout" ? "timeout" : "skip",
        player: push.player,
        text: push.reason === "timeout" ? `${name(m, push.player)}'s move clock ran out: turn skipped` : `${name(m, push.player)} skipped`,
      };
      return next;
    case "game_over":
      next.status = "over";
      next.winner = push.winner;
      next.reason = push.reason;
      next.remaining = { 1: push.remaining["1"], 2: push.remaining["2"] };
      next.away = {};
      return next;
    case "opponent_disconnected":
      next.away = { ...m.away, [push.seat]: push.reconnect_deadline_ms };
      return next;
    case "opponent_reconnected": {
      const away = { ...m.away };
      delete away[push.seat];
      next.away = away;
      return next;
    }
  }
}

/** Dice shown as the seeds say: by value ascending (captured ones last), like dice in D4..D20 order. */
export function sorted(dice: W.Dice): { die: Die; value: number | null }[] {
  return DICE.map((die) => ({ die, value: dice[die] })).sort((a, b) => {
    if (a.value === null || b.value === null) return a.value === null ? (b.value === null ? 0 : 1) : -1;
    return a.value - b.value;
  });
}

/** The First Player Penalty applies: the mover moved first and the opponent has one die left. */
export function penalty(m: Pick<MatchState, "first" | "dice">, mover: Seat): boolean {
  return m.first === mover && left(m.dice[other(mover)]) === 1;
}

export function strengthWins(m: Pick<MatchState, "first" | "dice">, mover: Seat, attacker: number, target: number): boolean {
  return penalty(m, mover) ? attacker > target : attacker >= target;
}

export function mindAllowed(m: Pick<MatchState, "first" | "dice" | "rules">, mover: Seat): boolean {
  return !(m.rules["first_player_penalty"] === "strength_and_mind" && penalty(m, mover));
}

export const REASONS: Record<string, string> = {
  all_captured: "every die captured",
  timeout: "the game clock ran out (fewer dice of one's own left wins; equal: the second player)",
  forfeit: "forfeit",
};
