// A Digits game alone (`play_solo`, docs/protocol.md): ranked (accounts only), casual, the daily
// challenge (the first of the Paris day counts; a second is played as casual), the tutorial (three
// rounds, with Predict), and a trial for visitors. The game opens at #/digits/game/<match id>.
import { useState } from "preact/hooks";
import { socket } from "../../shared/connection";
import { go } from "../../shared/router";
import { me } from "../../shared/session";
import { WireError } from "../../shared/socket";
import { useStore } from "../../shared/store";
import { soloNotes } from "./Live";

type Mode = "ranked" | "casual" | "daily" | "tutorial" | "trial";

const MODES: { mode: Mode; label: string; about: string }[] = [
  { mode: "ranked", label: "Play ranked", about: "rated, against other players' ghosts" },
  { mode: "casual", label: "Play casual", about: "unrated, no clock on the Face-off" },
  { mode: "daily", label: "Daily challenge", about: "today's shop for everyone; your first of the day counts" },
  { mode: "tutorial", label: "Tutorial", about: "three rounds, with Predict in the Face-off" },
  { mode: "trial", label: "Try a game", about: "for visitors: against house armies" },
];

const REFUSALS: Record<string, string> = {
  ranked_requires_accounts: "Ranked games are for accounts: sign up first.",
  mode_not_available: "That mode is not available.",
};

export function Solo() {
  const who = useStore(me);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const guest = who?.kind !== "account";
  const start = async (mode: Mode) => {
    setBusy(true);
    setError("");
    try {
      const ack = await socket.request("play_solo", { game: "digits", mode });
      if (mode === "daily" && !ack.counted)
        soloNotes.set(ack.match_id, "You have played today's daily challenge: this game is casual and does not count.");
      go(`/digits/game/${encodeURIComponent(ack.match_id)}`);
    } catch (e) {
      setError(e instanceof WireError ? (REFUSALS[e.code] ?? `${e.message} (${e.code})`) : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card solo" aria-labelledby="solo-title">
      <h2 id="solo-title">Play alone</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <ul class="solo-modes">
        {MODES.filter((m) => m.mode !== "trial" || guest).map((m) => (
          <li key={m.mode}>
            <button type="button" data-mode={m.mode} disabled={busy || (m.mode === "ranked" && guest)} aria-describedby={`solo-${m.mode}`} onClick={() => void start(m.mode)}>
              {m.label}
            </button>{" "}
            <span id={`solo-${m.mode}`} class="note">
              {m.mode === "ranked" && guest ? (
                <>
                  accounts only: <a href="#/account">sign up</a>
                </>
              ) : (
                m.about
              )}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
