// Digits duels (docs/protocol.md): an account challenges another by username, with a stake; the
// challenged player opens the duel's link (#/digits/duel/<id>) and accepts or declines. The duel's
// `lobby` pushes (stream duel-<id>) say when it is accepted and started: each player's own game
// (match_ids in the order challenger, opponent) then opens at #/digits/game/<id>.
import { useState } from "preact/hooks";
import { socket } from "../../shared/connection";
import { go } from "../../shared/router";
import { me } from "../../shared/session";
import { WireError } from "../../shared/socket";
import { Store, useStore } from "../../shared/store";

interface Duel {
  id: string;
  role: "challenger" | "opponent";
  status: string;
}

const duel = new Store<Duel | null>(null);

const REFUSALS: Record<string, string> = {
  unknown_player: "No account has that username.",
  invalid_stake: "The stake is not possible (0 to 10,000, and within your credits).",
  ranked_requires_accounts: "Duels are between accounts: sign up first.",
  not_challenged: "This duel is not yours to answer.",
  unknown_duel: "No such duel.",
  duel_answered: "This duel was answered already.",
};

function why(e: unknown): string {
  return e instanceof WireError ? (REFUSALS[e.code] ?? `${e.message} (${e.code})`) : String(e);
}

/** Duels offered to this player and not answered yet: the server pushes `duel_offered` to the
 * challenged player's sockets, and the duel's later events to both players'. */
interface Offer {
  id: string;
  challenger: string;
  stake: number;
}
const offers = new Store<Offer[]>([]);

socket.on("lobby", (m) => {
  if (m.stream.startsWith("duel-")) {
    const id = m.stream.slice("duel-".length);
    const offered = m.data as { opponent?: { player_id?: string }; challenger?: { name?: string }; stake?: number };
    const rest = offers.value.filter((o) => o.id !== id);
    if (m.event === "duel_offered" && offered.opponent?.player_id === me.value?.player_id)
      offers.set([...rest, { id, challenger: offered.challenger?.name ?? "", stake: offered.stake ?? 0 }]);
    else if (rest.length !== offers.value.length) offers.set(rest);
  }
  const d = duel.value;
  if (!d || m.stream !== `duel-${d.id}`) return;
  const data = m.data as { match_ids?: string[]; players?: { player_id?: string }[] };
  if (m.event === "duel_started" && data.match_ids) {
    const mine = data.players?.findIndex((p) => p.player_id === me.value?.player_id) ?? -1;
    const match = data.match_ids[mine >= 0 ? mine : d.role === "challenger" ? 0 : 1];
    duel.set({ ...d, status: "started" });
    if (match) go(`/digits/game/${encodeURIComponent(match)}`);
  } else duel.set({ ...d, status: m.event.replace(/^duel_/, "") });
});

const STATUS: Record<string, string> = {
  offered: "Waiting for your opponent to accept.",
  accepted: "Accepted: the games are starting…",
  started: "The games have started.",
  declined: "The duel was declined.",
  settled: "The duel is settled.",
};

export function DuelChallenge() {
  const who = useStore(me);
  const current = useStore(duel);
  const [opponent, setOpponent] = useState("");
  const [stake, setStake] = useState("0");
  const [error, setError] = useState("");
  if (who?.kind !== "account")
    return (
      <section class="card duel" aria-labelledby="duel-title">
        <h2 id="duel-title">Duel</h2>
        <p>
          Duels are between accounts: <a href="#/account">sign up</a> to challenge a player.
        </p>
      </section>
    );
  const offered = useStore(offers);
  const link = current?.role === "challenger" ? `${location.origin}${location.pathname}#/digits/duel/${current.id}` : "";
  return (
    <section class="card duel" aria-labelledby="duel-title">
      <h2 id="duel-title">Duel</h2>
      <form
        class="row"
        onSubmit={async (e) => {
          e.preventDefault();
          setError("");
          try {
            const ack = await socket.request("challenge_duel", { opponent: opponent.trim(), game: "digits", stake: Number(stake) });
            duel.set({ id: ack.duel_id, role: "challenger", status: "offered" });
          } catch (err) {
            setError(why(err));
          }
        }}
      >
        <label>
          Opponent's username <input name="opponent" required autoComplete="off" value={opponent} onInput={(e) => setOpponent(e.currentTarget.value)} />
        </label>
        <label>
          Stake (credits) <input name="stake" type="number" min={0} max={10000} required value={stake} onInput={(e) => setStake(e.currentTarget.value)} />
        </label>
        <button type="submit">Challenge to a duel</button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {offered.map((o) => (
        <p key={o.id} aria-live="polite" data-offer={o.id}>
          {o.challenger} challenges you to a duel ({o.stake} credits): <a href={`#/digits/duel/${o.id}`}>answer</a>.
        </p>
      ))}
      {link && (
        <p aria-live="polite" data-duel={current?.id} data-status={current?.status}>
          Duel <code>{current?.id}</code>: send your opponent this link: <a href={link}>{link}</a>. {STATUS[current?.status ?? ""] ?? ""}
        </p>
      )}
    </section>
  );
}

export function DuelInvite(props: { duelId: string }) {
  const current = useStore(duel);
  const [error, setError] = useState("");
  const answer = async (accept: boolean) => {
    setError("");
    const before = duel.value;
    // Follow the duel before the answer: its start can come before the ack.
    if (accept) duel.set({ id: props.duelId, role: "opponent", status: "accepting" });
    try {
      await socket.request(accept ? "accept_duel" : "decline_duel", { duel_id: props.duelId });
      if (!accept) duel.set({ id: props.duelId, role: "opponent", status: "declined" });
    } catch (err) {
      duel.set(before);
      setError(why(err));
    }
  };
  const status = current?.id === props.duelId ? current.status : "";
  return (
    <section class="card duel" aria-labelledby="invite-title" data-status={status}>
      <h2 id="invite-title">A Digits duel</h2>
      <p>
        You are challenged to duel <code>{props.duelId}</code>: each of you plays a game on the same shop; the better record takes the stake.
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {status ? (
        <p aria-live="polite">{STATUS[status] ?? "Accepting…"}</p>
      ) : (
        <div class="row">
          <button type="button" class="primary" onClick={() => void answer(true)}>
            Accept the duel
          </button>
          <button type="button" onClick={() => void answer(false)}>
            Decline
          </button>
        </div>
      )}
    </section>
  );
}
