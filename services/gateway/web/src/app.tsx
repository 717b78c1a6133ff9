// The shell: who is playing (name, tier), navigation, the connection state, and the page of the
// route. Games are pages of their own (games/registry.ts) on the shared session and socket.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { GAMES } from "./games/registry";
import { MathsWarriorsPage } from "./games/maths-warriors/Lobby";
import { MathsWarriors } from "./games/maths-warriors/play";
import { Puzzles } from "./games/maths-warriors/Puzzles";
import { Replay } from "./games/maths-warriors/Replay";
import { Tutorial } from "./games/maths-warriors/Tutorial";
import { Account } from "./pages/Account";
import { Leaderboard } from "./pages/Leaderboard";
import { Profile } from "./pages/Profile";
import { api } from "./shared/api";
import { soundOn } from "./shared/clock";
import { go, useRoute } from "./shared/router";
import { ensureSession, localWins, me } from "./shared/session";
import { socket } from "./shared/connection";
import { lazy } from "./shared/lazy";
import { useStore } from "./shared/store";
import { localTier } from "./shared/tiers";

const mathsWarriors = new MathsWarriors(socket);
// Each game beyond Maths Warriors is a chunk of its own, loaded when its page is first shown.
const MatrixReplay = lazy(() => import("./games/matrix-games/Replay").then((m) => m.MatrixReplayPage));
const MatrixGames = lazy(() => import("./games/matrix-games/Page").then((m) => m.MatrixGamesPage));
const Maze = lazy(() => import("./games/maze/Page").then((m) => m.MazePage));
const Digits = lazy(() => import("./games/digits/Page").then((m) => m.DigitsPage));
const DigitsBoards = lazy(() => import("./games/digits/Boards").then((m) => m.DigitsBoards));

export function App() {
  const who = useStore(me);
  const status = useStore(socket.status);
  const route = useRoute();
  const [failed, setFailed] = useState("");
  useEffect(() => {
    ensureSession().then(
      () => {
        mathsWarriors.start();
        socket.start();
      },
      () => setFailed("The server cannot be reached. Reload to try again."),
    );
  }, []);
  // The socket belongs to a session: a new one (signed in, out, up) needs a new socket.
  const playerKey = who ? `${who.player_id}:${who.kind}` : "";
  const previous = useRef("");
  useEffect(() => {
    if (previous.current && playerKey && previous.current !== playerKey) {
      socket.stop();
      socket.start();
    }
    if (playerKey) previous.current = playerKey;
  }, [playerKey]);
  // A game that starts (or resumes) while another page is shown brings its board up.
  useEffect(
    () =>
      mathsWarriors.phase.subscribe((phase) => {
        const page = location.hash.replace(/^#\/?/, "").split("/")[0] ?? "";
        if (phase.kind === "match" && page !== "" && page !== "mw") go("/mw");
      }),
    [],
  );
  if (failed) return <p class="error" role="alert">{failed}</p>;
  if (!who) return <p aria-busy="true">Arriving…</p>;
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to the content
      </a>
      <header class="top">
        <a href="#/" class="brand">
          Arena
        </a>
        <nav aria-label="Main">
          <a href="#/mw">Play</a>
          <a href="#/tutorial">Tutorial</a>
          <a href="#/puzzles">Puzzles</a>
          <a href="#/leaderboard">Leaderboard</a>
          <a href="#/profile">Profile</a>
          <a href="#/account">{who.kind === "guest" ? "Sign up / in" : "Account"}</a>
        </nav>
        <Identity />
        <span class={`conn conn-${status}`} role="status" aria-label={`Connection: ${status}`}>
          {status === "open" ? "● online" : status === "connecting" ? "○ connecting" : "✕ offline"}
        </span>
        <Sound />
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </>
  );
}

function Identity() {
  const who = useStore(me);
  const wins = useStore(localWins);
  const [tier, setTier] = useState<string | null>(null);
  useEffect(() => {
    setTier(null);
    if (who?.kind !== "account") return;
    api.profile(who.player_id).then(
      (p) => setTier(p.games.find((g) => g.game === "maths-warriors")?.tier ?? "Silver"),
      () => setTier("Silver"),
    );
  }, [who?.player_id, who?.kind]);
  if (!who) return null;
  const shown = who.kind === "account" ? (tier ?? "…") : localTier(wins);
  return (
    <span class="identity" data-player={who.player_id}>
      <span class="name">{who.name}</span> <span class="tier" data-tier={shown} title={who.kind === "guest" ? "Tier from your wins in this browser" : "Tier from your rating"}>{shown}</span>
    </span>
  );
}

function Sound() {
  const on = useStore(soundOn);
  return (
    <button type="button" class="sound" aria-pressed={on} onClick={() => soundOn.set(!on)}>
      {on ? "Sound: on" : "Sound: off"}
    </button>
  );
}

function Page(props: { route: string[] }) {
  const [first, second, third] = props.route;
  const mw = useMemo(() => mathsWarriors, []);
  switch (first) {
    case undefined:
      return <Home />;
    case "mw":
      return <MathsWarriorsPage game={mw} join={second === "join" ? third : undefined} />;
    case "replay":
      return second ? <Replay matchId={second} /> : <Home />;
    case "matrix":
      if (second === "replay" && third) return <MatrixReplay matchId={third} />;
      return <MatrixGames {...rooms(second, third)} />;
    case "maze":
      return <Maze {...rooms(second, third)} />;
    case "digits":
      if (second === "leaderboard") return <DigitsBoards />;
      if (second === "game" && third) return <Digits game={third} />;
      if (second === "duel" && third) return <Digits duel={third} />;
      return <Digits {...rooms(second, third)} />;
    case "tutorial":
      return <Tutorial />;
    case "puzzles":
      return <Puzzles difficulty={second} seed={third} />;
    case "leaderboard":
      return <Leaderboard game="maths-warriors" name="Maths Warriors" />;
    case "profile":
      return <Profile playerId={second} />;
    case "account":
      return <Account />;
    default:
      return <Home />;
  }
}

/** A game page's room route: #/<game>/join/CODE or #/<game>/watch/CODE. */
function rooms(second: string | undefined, third: string | undefined): { join?: string; watch?: string } {
  if (second === "join" && third) return { join: third };
  if (second === "watch" && third) return { watch: third };
  return {};
}

function Home() {
  const phase = useStore(mathsWarriors.phase);
  if (phase.kind !== "lobby") return <MathsWarriorsPage game={mathsWarriors} />;
  return (
    <div class="home">
      <h1>Arena</h1>
      <ul class="games">
        {GAMES.map((g) => (
          <li key={g.id} class="card">
            <h2>{g.name}</h2>
            <p>{g.blurb}</p>
            {g.online ? (
              <a class="button primary" href={`#/${g.path}`}>
                Play {g.name}
              </a>
            ) : (
              <p class="note">Coming soon.</p>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
