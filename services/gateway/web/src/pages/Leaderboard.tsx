// A game's leaderboard, a page at a time.
import { useEffect, useState } from "preact/hooks";
import { api, type Leaderboard as Board } from "../shared/api";
import { me } from "../shared/session";
import { useStore } from "../shared/store";

export function Leaderboard(props: { game: string; name: string }) {
  const who = useStore(me);
  const [rows, setRows] = useState<Board["entries"]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState("");
  const load = (from: string | null) =>
    api.leaderboard(props.game, from).then(
      (page) => {
        setRows((r) => (from ? [...r, ...page.entries] : page.entries));
        setTotal(page.total);
        setCursor(page.next_cursor);
      },
      (e) => setError(String(e.message)),
    );
  useEffect(() => void load(null), [props.game]);
  return (
    <section class="card" aria-labelledby="board-title">
      <h2 id="board-title">{props.name} leaderboard</h2>
      {error && <p class="error" role="alert">{error}</p>}
      {total === 0 && <p>Nobody has played a ranked game yet.</p>}
      {rows.length > 0 && (
        <table class="leaderboard">
          <caption>{total} ranked players</caption>
          <thead>
            <tr>
              <th scope="col">Rank</th>
              <th scope="col">Player</th>
              <th scope="col">Rating</th>
              <th scope="col">Tier</th>
              <th scope="col">Won–lost</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.player_id} aria-current={r.player_id === who?.player_id ? "true" : undefined}>
                <td>{r.rank}</td>
                <th scope="row">
                  <a href={`#/profile/${encodeURIComponent(r.player_id)}`}>{r.display_name}</a>
                  {r.player_id === who?.player_id ? " (you)" : ""}
                </th>
                <td>{r.rating}</td>
                <td>{r.tier}</td>
                <td>
                  {r.wins}–{r.losses}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor && (
        <button type="button" onClick={() => load(cursor)}>
          More
        </button>
      )}
    </section>
  );
}
