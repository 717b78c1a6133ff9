// A live Maths Warriors match: both clocks, the board, the opponent away and back, forfeit, the
// game over with its reason, and rematch for room games.
import { useEffect, useRef, useState } from "preact/hooks";
import { Clock } from "../../shared/Clock";
import { GAME_CLOCK, MOVE_CLOCK, formatClock, remainingMs } from "../../shared/clock";
import { useStore } from "../../shared/store";
import { Board } from "./Board";
import { type MatchState, REASONS, left, other } from "./match";
import { showWire } from "./expression";
import type { MathsWarriors } from "./play";

export function Match(props: { game: MathsWarriors }) {
  const { game } = props;
  const match = useStore(game.match) as MatchState;
  const rematch = useStore(game.rematch);
  const opponentPreview = useStore(game.opponentPreview);
  const error = useStore(game.error);
  const [confirming, setConfirming] = useState(false);
  const me = game.seat(match);
  const them = other(me);
  const playing = match.status === "playing";
  const names = {
    1: match.seats.find((s) => s.seat === 1)?.name ?? "Player 1",
    2: match.seats.find((s) => s.seat === 2)?.name ?? "Player 2",
  };
  const awayUntil = match.away[them];

  return (
    <section class="match" aria-labelledby="match-title" data-match={match.matchId} data-status={match.status}>
      <h2 id="match-title">
        {names[me]} <span class="vs">vs</span> {names[them]}
        <span class="tag">{match.mode === "ranked" ? "Ranked" : "Casual"}</span>
        {match.roomCode && <span class="tag">Room {match.roomCode}</span>}
        {match.first === me ? <span class="tag">You moved first</span> : null}
      </h2>
      <div class="clocks">
        <Clock
          label="Game clock"
          deadline={match.clocks.game}
          offset={match.clocks.offset}
          thresholds={GAME_CLOCK}
          running={playing}
          ticking
          limitMs={match.gameSeconds === null ? null : match.gameSeconds * 1000}
        />
        {match.moveSeconds > 0 && (
          <Clock
            label={match.toMove === me ? "Your move clock" : "Their move clock"}
            deadline={match.clocks.move}
            offset={match.clocks.offset}
            thresholds={MOVE_CLOCK}
            running={playing}
            limitMs={match.moveSeconds * 1000}
          />
        )}
      </div>
      {playing && awayUntil !== undefined && <Away name={names[them]} until={awayUntil} offset={match.clocks.offset} />}
      {playing && opponentPreview && opponentPreview.tokens.length > 0 && (
        <p class="opponent-preview" aria-live="off">
          {names[them]} is building: {showWire(opponentPreview.tokens)}
          {opponentPreview.value !== null ? ` = ${opponentPreview.value}` : ""}
          {opponentPreview.target ? ` → ${opponentPreview.target}` : ""}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!playing && <GameOver game={game} match={match} me={me} rematch={rematch} names={names} />}
      <Board
        state={{ dice: match.dice, first: match.first, toMove: match.toMove, rules: match.rules, playing }}
        me={me}
        names={names}
        actions={{
          strength: (a, t) => game.strength(a, t),
          mind: (t, tokens) => game.mind(t, tokens),
          skip: () => game.skip(),
          ...(match.preview ? { preview: (tokens, target) => game.preview(tokens, target) } : {}),
        }}
      />
      {playing && (
        <div class="match-footer">
          {confirming ? (
            <div role="group" aria-label="Confirm resignation">
              <span>Give up this game? Your opponent wins by forfeit.</span>{" "}
              <button type="button" class="danger" onClick={() => game.resign().then(() => setConfirming(false))}>
                Yes, resign
              </button>{" "}
              <button type="button" onClick={() => setConfirming(false)} autoFocus>
                Keep playing
              </button>
            </div>
          ) : (
            <button type="button" class="resign" onClick={() => setConfirming(true)}>
              Resign…
            </button>
          )}
        </div>
      )}
    </section>
  );
}

function Away(props: { name: string; until: number; offset: number }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(timer);
  }, []);
  return (
    <p class="away" role="status">
      {props.name} is away: they have {formatClock(remainingMs(props.until, props.offset, now))} to come back, or
      they forfeit.
    </p>
  );
}

function GameOver(props: {
  game: MathsWarriors;
  match: MatchState;
  me: 1 | 2;
  names: { 1: string; 2: string };
  rematch: { available: boolean; askedBy: string | null; declined: boolean };
}) {
  const { game, match, me, rematch } = props;
  const won = match.winner === me;
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const remaining = match.remaining ?? { 1: left(match.dice[1]), 2: left(match.dice[2]) };
  const askedByMe = rematch.askedBy !== null && rematch.askedBy === match.seats.find((s) => s.seat === me)?.player_id;
  return (
    <div class="game-over" role="dialog" aria-modal="false" aria-labelledby="game-over-title" data-winner={match.winner ?? ""}>
      <h2 id="game-over-title" tabIndex={-1} ref={heading}>
        {won ? "You won!" : "You lost"}
      </h2>
      <p class="reason" data-reason={match.reason ?? ""}>
        {props.names[(match.winner ?? 1) as 1 | 2]} wins: {REASONS[match.reason ?? ""] ?? match.reason}.
      </p>
      <p>
        Dice left — you: {remaining[me]}, {props.names[other(me)]}: {remaining[other(me)]}.
      </p>
      <div class="actions">
        {match.roomCode && rematch.available && !rematch.askedBy && (
          <button type="button" onClick={() => game.askRematch()}>
            Rematch
          </button>
        )}
        {rematch.askedBy && askedByMe && <span role="status">Rematch asked: waiting for your opponent…</span>}
        {rematch.askedBy && !askedByMe && (
          <>
            <button type="button" onClick={() => game.answerRematch(true)}>
              Accept rematch
            </button>
            <button type="button" onClick={() => game.answerRematch(false)}>
              Decline
            </button>
          </>
        )}
        <a class="button" href={`#/replay/${encodeURIComponent(match.matchId)}`}>
          Replay
        </a>
        <button type="button" onClick={() => game.toLobby()}>
          Back to the lobby
        </button>
      </div>
    </div>
  );
}
