// A game's page on the shared parts: its room lobby (GET /v1/games gives its seats and settings
// form), then its match, shown by the game's own view. Matrix Games, the Maze and Digits are
// each this page with their view; Maths Warriors has its own lobby (quick match, the AI).
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { roomOf } from "../shared/games";
import { RoomLobby } from "../shared/RoomLobby";
import type { Room, RoomPhase } from "../shared/rooms";

export type Playing = Extract<RoomPhase, { kind: "match" | "watching" }>;

export function GamePage(props: {
  game: string;
  path: string;
  title: string;
  join?: string;
  watch?: string;
  seatName?: (seat: number) => string;
  live?: (room: Room, phase: Playing) => ComponentChildren;
  /** Shown under the title (links to the game's other pages). */
  extra?: ComponentChildren;
}) {
  const [room, setRoom] = useState<Room | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    roomOf(props.game).then(setRoom, (e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }, [props.game]);
  if (error) return <p class="error" role="alert">{error}</p>;
  if (!room) return <p aria-busy="true">Loading {props.title}…</p>;
  return (
    <div class="game-page">
      <h1>{props.title}</h1>
      {props.extra}
      <RoomLobby room={room} path={props.path} title={props.title} join={props.join} watch={props.watch} seatName={props.seatName}>
        {props.live ? (phase) => props.live?.(room, phase) : undefined}
      </RoomLobby>
    </div>
  );
}
