// The Maths Warriors lobby: create a room with its settings and share its code or link, join by
// code, quick match (casual, ranked), play the AI at each level; and the waiting states.
import { useEffect, useState } from "preact/hooks";
import type * as W from "../../gen/wire";
import { me } from "../../shared/session";
import { useStore } from "../../shared/store";
import { Match } from "./Match";
import type { MathsWarriors } from "./play";

const LEVELS = ["easy", "medium", "hard", "impossible"] as const;

export function MathsWarriorsPage(props: { game: MathsWarriors; join?: string }) {
  const { game } = props;
  const phase = useStore(game.phase);
  const match = useStore(game.match);
  const error = useStore(game.error);
  const notice = useStore(game.notice);
  useEffect(() => {
    if (props.join && phase.kind === "lobby") void game.joinRoom(props.join);
  }, [props.join]);
  return (
    <div class="mw">
      <p class="sr-only" aria-live="polite" data-notice>
        {notice}
      </p>
      {phase.kind === "match" && match ? (
        <Match game={game} />
      ) : (
        <>
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          {phase.kind === "room" && <Waiting game={game} code={phase.code} />}
          {phase.kind === "queue" && (
            <section class="waiting" aria-live="polite">
              <h2>Looking for an opponent ({phase.mode})…</h2>
              <button type="button" onClick={() => game.leaveQueue()}>
                Stop looking
              </button>
            </section>
          )}
          {phase.kind === "starting" && (
            <section class="waiting" aria-live="polite">
              <h2>Starting the game…</h2>
            </section>
          )}
          {phase.kind === "lobby" && <Lobby game={game} />}
        </>
      )}
    </div>
  );
}

function Waiting(props: { game: MathsWarriors; code: string }) {
  const link = `${location.origin}/#/mw/join/${props.code}`;
  const [copied, setCopied] = useState(false);
  return (
    <section class="waiting" aria-labelledby="room-title">
      <h2 id="room-title">
        Room <span class="code" data-room-code={props.code}>{props.code}</span>
      </h2>
      <p>Give your opponent the code, or this link:</p>
      <p>
        <a href={link} class="share-link">
          {link}
        </a>{" "}
        <button
          type="button"
          onClick={() => navigator.clipboard?.writeText(link).then(() => setCopied(true), () => setCopied(false))}
        >
          {copied ? "Copied ✓" : "Copy link"}
        </button>
      </p>
      <p aria-live="polite">Waiting for an opponent to join… (the room closes if you leave this page)</p>
      <button type="button" onClick={() => props.game.leaveRoom()}>
        Close the room
      </button>
    </section>
  );
}

function Lobby(props: { game: MathsWarriors }) {
  const { game } = props;
  const who = useStore(me);
  const online = useStore(game.online);
  useEffect(() => {
    // The lobby is usable: rendered, signed in, socket open (bench/web_client.py reads this).
    if (online && !performance.getEntriesByName("arena:lobby-ready").length) performance.mark("arena:lobby-ready");
  }, [online]);
  const [gameMinutes, setGameMinutes] = useState(12);
  const [moveSeconds, setMoveSeconds] = useState(30);
  const [preview, setPreview] = useState(false);
  const [ranked, setRanked] = useState(false);
  const [penalty, setPenalty] = useState("strength_only");
  const [timeoutWinner, setTimeoutWinner] = useState("fewer_own_dice");
  const [code, setCode] = useState("");
  const settings = (): W.RoomSettings => ({
    game_seconds: Math.round(gameMinutes * 60),
    move_seconds: moveSeconds,
    preview,
    mode: ranked ? "ranked" : "casual",
    rules: { first_player_penalty: penalty, timeout_winner: timeoutWinner },
  });
  const account = who?.kind === "account";
  return (
    <div class="lobby" data-ready={online ? "lobby" : undefined}>
      <section aria-labelledby="quick-title" class="card">
        <h2 id="quick-title">Quick match</h2>
        <div class="row">
          <button type="button" class="primary" onClick={() => game.queue("casual")}>
            Casual
          </button>
          <button type="button" onClick={() => game.queue("ranked")} disabled={!account} aria-describedby={account ? undefined : "ranked-note"}>
            Ranked
          </button>
        </div>
        {!account && (
          <p id="ranked-note" class="note">
            Ranked games need an account: <a href="#/account">sign up</a> (your games come with you).
          </p>
        )}
      </section>
      <section aria-labelledby="join-title" class="card">
        <h2 id="join-title">Join a room</h2>
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void game.joinRoom(code);
          }}
        >
          <label>
            Room code{" "}
            <input
              name="code"
              value={code}
              onInput={(e) => setCode(e.currentTarget.value.toUpperCase())}
              maxLength={16}
              autoComplete="off"
              autoCapitalize="characters"
              spellcheck={false}
              required
            />
          </label>
          <button type="submit">Join</button>
        </form>
      </section>
      <section aria-labelledby="ai-title" class="card">
        <h2 id="ai-title">Play the computer</h2>
        <div class="row">
          {LEVELS.map((level) => (
            <button type="button" key={level} onClick={() => game.playAi(level, settings())}>
              {level[0]?.toUpperCase()}
              {level.slice(1)}
            </button>
          ))}
        </div>
        <p class="note">Uses the clock settings below.</p>
      </section>
      <section aria-labelledby="room-settings-title" class="card">
        <h2 id="room-settings-title">Create a room</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void game.createRoom(settings());
          }}
        >
          <div class="fields">
            <label>
              Game clock (minutes){" "}
              <input
                type="number"
                name="game_minutes"
                min={1}
                max={60}
                step={1}
                value={gameMinutes}
                onInput={(e) => setGameMinutes(Number(e.currentTarget.value) || 12)}
              />
            </label>
            <label>
              Move clock (seconds, 0 = none){" "}
              <input
                type="number"
                name="move_seconds"
                min={0}
                max={120}
                value={moveSeconds}
                onInput={(e) => setMoveSeconds(Math.max(0, Math.min(120, Number(e.currentTarget.value) || 0)))}
              />
            </label>
            <label>
              First player penalty{" "}
              <select name="first_player_penalty" value={penalty} onChange={(e) => setPenalty(e.currentTarget.value)}>
                <option value="strength_only">Strength only (the code)</option>
                <option value="strength_and_mind">Strength and Mind (the help page)</option>
              </select>
            </label>
            <label>
              On the game clock{" "}
              <select name="timeout_winner" value={timeoutWinner} onChange={(e) => setTimeoutWinner(e.currentTarget.value)}>
                <option value="fewer_own_dice">fewer own dice wins (the code)</option>
                <option value="fewer_opponent_dice">fewer opponent dice wins (the help page)</option>
              </select>
            </label>
            <label class="check">
              <input type="checkbox" name="preview" checked={preview} onChange={(e) => setPreview(e.currentTarget.checked)} /> Live
              preview (each sees the other build)
            </label>
            <label class="check">
              <input
                type="checkbox"
                name="ranked"
                checked={ranked}
                disabled={!account}
                onChange={(e) => setRanked(e.currentTarget.checked)}
              />{" "}
              Ranked (two accounts)
            </label>
          </div>
          <button type="submit" class="primary">
            Create room
          </button>
        </form>
      </section>
    </div>
  );
}
