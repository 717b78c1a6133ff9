// A player's profile: rating, tier, rank and counts per game, and their history (newest first).
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, type History, type Profile as ProfileData } from "../shared/api";
import { localWins, me } from "../shared/session";
import { GhostSharing } from "./GhostSharing";
import { useStore } from "../shared/store";
import { localTier } from "../shared/tiers";

/** A history row's result, in words (a draw: every seat ranked first; solo: a game of one seat). */
const RESULT: Record<History["matches"][number]["result"], string> = {
  win: "Won",
  loss: "Lost",
  draw: "Drew",
  solo: "Played",
};

/** How often, and how many times, an open profile looks for games that ended just before. */
const REFRESH_MS = 2000;
const REFRESHES = 30;

export function Profile(props: { playerId?: string }) {
  const who = useStore(me);
  const wins = useStore(localWins);
  const id = props.playerId ?? who?.player_id ?? "";
  const [profile, setProfile] = useState<ProfileData | null | "none">(null);
  const [history, setHistory] = useState<History["matches"]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    if (!id) return;
    setProfile(null);
    setHistory([]);
    api.profile(id).then(setProfile, (e) => (e instanceof ApiError && e.status === 404 ? setProfile("none") : setError(String(e.message))));
    more(null);
    // A game that just ended reaches the read models a moment later (its rating, then its
    // history row): look again for a while, adding what is new on top of what is shown.
    let looks = REFRESHES;
    const timer = setInterval(() => {
      if (--looks < 0) return clearInterval(timer);
      api.profile(id).then(setProfile, () => undefined);
      api.history(id, null).then(
        (page) =>
          setHistory((h) => {
            const shown = new Set(h.map((m) => m.match_id));
            const fresh = page.matches.filter((m) => !shown.has(m.match_id));
            return fresh.length ? [...fresh, ...h] : h;
          }),
        () => undefined,
      );
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [id]);
  const more = (from: string | null) =>
    api.history(id, from).then(
      (page) => {
        setHistory((h) => (from ? [...h, ...page.matches] : page.matches));
        setCursor(page.next_cursor);
      },
      () => undefined,
    );
  const own = id === who?.player_id;
  return (
    <section class="card profile" aria-labelledby="profile-title">
      <h2 id="profile-title">{profile && profile !== "none" ? profile.display_name : own ? who?.name : "Player"}</h2>
      {error && <p class="error" role="alert">{error}</p>}
      {own && who?.kind === "guest" && (
        <p>
          Guest tier (from {wins} win{wins === 1 ? "" : "s"} in this browser): <strong data-tier>{localTier(wins)}</strong>.{" "}
          <a href="#/account">Sign up</a> to keep a rating.
        </p>
      )}
      {profile === "none" && <p>No finished games yet.</p>}
      {own && <GhostSharing playerId={id} />}
      {profile && profile !== "none" && (
        <table>
          <caption>Ratings</caption>
          <thead>
            <tr>
              <th scope="col">Game</th>
              <th scope="col">Rating</th>
              <th scope="col">Tier</th>
              <th scope="col">Rank</th>
              <th scope="col">Games</th>
              <th scope="col">Won</th>
              <th scope="col">Lost</th>
            </tr>
          </thead>
          <tbody>
            {profile.games.map((g) => (
              <tr key={g.game}>
                <th scope="row">{g.game}</th>
                <td>{g.rating}</td>
                <td data-tier>{g.tier}</td>
                <td>{g.rank ?? "—"}</td>
                <td>{g.games}</td>
                <td>{g.wins}</td>
                <td>{g.losses}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>History</h3>
      {history.length === 0 ? (
        <p>No games yet.</p>
      ) : (
        <ul class="history">
          {history.map((h) => (
            <li key={h.match_id}>
              <strong>{RESULT[h.result]}</strong>
              {h.opponent_id ? ` against ${h.opponent_name}` : ""}
              {h.opponent_ai ? " (computer)" : ""} · {h.mode} · {h.reason.replaceAll("_", " ")}
              {h.rating_change !== null ? ` · ${h.rating_change >= 0 ? "+" : ""}${h.rating_change}` : ""} ·{" "}
              <time dateTime={h.ended_at}>{new Date(h.ended_at).toLocaleString()}</time> ·{" "}
              {REPLAYS[h.game] ? <a href={`#/${REPLAYS[h.game]}/${encodeURIComponent(h.match_id)}`}>replay</a> : h.game}
            </li>
          ))}
        </ul>
      )}
      {cursor && (
        <button type="button" onClick={() => more(cursor)}>
          More
        </button>
      )}
    </section>
  );
}

/** The games whose matches have a replay page, and its route. */
const REPLAYS: Record<string, string> = { "maths-warriors": "replay", "matrix-games": "matrix/replay" };
