// The player's own setting for the ghosts their Digits games leave (docs/protocol.md): read with
// GET /v1/players/{id}/ghost-sharing, changed with the socket's `ghost_sharing`. The read side is
// a moment behind the change, so the choice shown after a change is the ack's.
import { useEffect, useState } from "preact/hooks";
import { api } from "../shared/api";
import { socket } from "../shared/connection";
import { WireError } from "../shared/socket";

type Sharing = "login" | "anonymous" | "none";

const CHOICES: { value: Sharing; label: string }[] = [
  { value: "login", label: "With my name" },
  { value: "anonymous", label: "Anonymously" },
  { value: "none", label: "Not at all: withdraw my ghosts" },
];

export function GhostSharing(props: { playerId: string }) {
  const [sharing, setSharing] = useState<Sharing | null>(null);
  const [status, setStatus] = useState("");
  const [error, setError] = useState("");
  useEffect(() => {
    setSharing(null);
    api.ghostSharing(props.playerId).then(
      (s) => setSharing(s.sharing as Sharing),
      (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
    );
  }, [props.playerId]);
  const choose = async (value: Sharing) => {
    const before = sharing;
    setSharing(value); // the choice stays chosen while it is sent; an error puts the old one back
    setStatus("Saving…");
    setError("");
    try {
      const ack = await socket.request("ghost_sharing", { sharing: value });
      setSharing(ack.sharing as Sharing);
      setStatus("Saved.");
    } catch (e) {
      setSharing(before);
      setStatus("");
      setError(e instanceof WireError ? `${e.message} (${e.code})` : String(e));
    }
  };
  return (
    <fieldset class="ghost-sharing" data-sharing={sharing ?? ""} aria-busy={sharing === null}>
      <legend>Your Digits ghosts: other players face the armies your games leave, shown</legend>
      {CHOICES.map((c) => (
        <label key={c.value}>
          <input type="radio" name="ghost-sharing" value={c.value} checked={sharing === c.value} disabled={sharing === null} onChange={() => void choose(c.value)} />{" "}
          {c.label}
        </label>
      ))}
      <span class="note" aria-live="polite">
        {status}
      </span>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}
