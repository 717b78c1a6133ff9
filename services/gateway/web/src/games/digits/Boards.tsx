// Digits' leaderboards: the month's season (Paris time; at least its minimum of ranked games,
// each place's prize) and the all-time ladder.
import { useEffect, useState } from "preact/hooks";
import type * as H from "../../gen/http";
import { Leaderboard } from "../../pages/Leaderboard";
import { api } from "../../shared/api";
import { me } from "../../shared/session";
import { useStore } from "../../shared/store";

/** The season now: the calendar month in Paris, e.g. 2026-12. */
export function currentSeason(now = new Date()): string {
  const parts = new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Paris", year: "numeric", month: "2-digit" }).formatToParts(now);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${part("year")}-${part("month")}`;
}

export function DigitsBoards() {
  const who = useStore(me);
  const season = currentSeason();
  const [page, setPage] = useState<H.SeasonLeaderboardPage | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    api.season("digits", season).then(setPage, (e: Error) => setError(e.message));
  }, [season]);
  return (
    <>
      <section class="card" aria-labelledby="season-title">
        <h2 id="season-title">Digits season {season}</h2>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {page && page.entries.length === 0 && <p>Nobody is listed yet: {page.min_games} ranked games in the month to appear.</p>}
        {page && page.entries.length > 0 && (
          <table class="leaderboard">
            <caption>
              {page.total} players with at least {page.min_games} ranked games
            </caption>
            <thead>
              <tr>
                <th scope="col">Place</th>
                <th scope="col">Player</th>
                <th scope="col">Rating</th>
                <th scope="col">Ranked combats</th>
                <th scope="col">Prize (credits)</th>
              </tr>
            </thead>
            <tbody>
              {page.entries.map((e) => (
                <tr key={e.player_id} aria-current={e.player_id === who?.player_id ? "true" : undefined}>
                  <td>{e.place}</td>
                  <td>{e.display_name}</td>
                  <td>{e.rating}</td>
                  <td>{e.ranked_combats}</td>
                  <td>{e.prize || "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <Leaderboard game="digits" name="Digits" />
    </>
  );
}
