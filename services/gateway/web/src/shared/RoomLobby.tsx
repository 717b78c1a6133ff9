// The room lobby of any game: the create form made from the game's settings form (its JSON
// Schema from GET /v1/games: numbers with their bounds, choices, switches; what the host leaves
// alone is the default), join or watch by code, and the waiting room: code and links to share,
// every seat, the host's fills and start. Once the room's match starts, the game's own page.
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import type { Room, RoomPhase } from "./rooms";
import { useStore } from "./store";

type Schema = {
  type?: string;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  examples?: unknown[];
  minimum?: number;
  maximum?: number;
  title?: string;
  description?: string;
  default?: unknown;
  properties?: Record<string, Schema>;
};

interface Field {
  name: string;
  label: string;
  kind: "number" | "choice" | "switch" | "text";
  choices: string[];
  min?: number;
  max?: number;
}

/** The form's fields, from its JSON Schema (pydantic's: optional values are anyOf [x, null]). */
export function fieldsOf(form: Record<string, unknown>): Field[] {
  const properties = (form as Schema).properties ?? {};
  return Object.entries(properties).map(([name, raw]) => {
    const schema = raw.anyOf?.find((s) => s.type !== "null") ?? raw;
    const words = name.replaceAll("_", " ").replace(/ ms$/, " (ms)").replace(/ seconds$/, " (seconds)");
    const label = words.charAt(0).toUpperCase() + words.slice(1);
    const small = (n: number | undefined) => (n !== undefined && Math.abs(n) < 1e9 ? n : undefined);
    if (schema.enum) return { name, label, kind: "choice", choices: schema.enum.map(String) };
    if (schema.type === "boolean") return { name, label, kind: "switch", choices: [] };
    if (schema.type === "integer" || schema.type === "number")
      return { name, label, kind: "number", choices: [], min: small(schema.minimum), max: small(schema.maximum) };
    if (schema.examples?.length) return { name, label, kind: "choice", choices: schema.examples.map(String) };
    return { name, label, kind: "text", choices: [] };
  });
}

/** How many fields show before "More settings". */
const FIRST_FIELDS = 4;

export function RoomLobby(props: {
  room: Room;
  /** The route of the game's pages: #/<path>/join/CODE, #/<path>/watch/CODE. */
  path: string;
  title: string;
  join?: string;
  watch?: string;
  /** What each seat is called (Matrix Games' aliases); "Seat n" otherwise. */
  seatName?: (seat: number) => string;
  /** The game's page once the room's match started (as a player or a spectator). */
  children?: (phase: Extract<RoomPhase, { kind: "match" | "watching" }>) => ComponentChildren;
}) {
  const { room } = props;
  const phase = useStore(room.phase);
  const error = useStore(room.error);
  const notice = useStore(room.notice);
  useEffect(() => {
    if (props.join && phase.kind === "idle") void room.join(props.join);
    else if (props.watch && phase.kind === "idle") void room.watch(props.watch);
  }, [props.join, props.watch]);
  return (
    <div class="room-lobby" data-game={room.game.name}>
      <p class="sr-only" aria-live="polite">
        {notice}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {phase.kind === "idle" && <Create room={room} title={props.title} />}
      {phase.kind === "waiting" && <Waiting room={room} phase={phase} path={props.path} seatName={props.seatName} />}
      {(phase.kind === "match" || phase.kind === "watching") &&
        (props.children ? (
          props.children(phase)
        ) : (
          <section class="card">
            <h2>Room {phase.code}</h2>
            <p>{phase.matchId ? "The game is on." : "Waiting for the game to start."}</p>
          </section>
        ))}
    </div>
  );
}

function Create(props: { room: Room; title: string }) {
  const { room } = props;
  const fields = useMemo(() => fieldsOf(room.game.form), [room.game]);
  const [values, setValues] = useState<Record<string, unknown>>(() => ({ ...room.game.defaults }));
  const [code, setCode] = useState("");
  const [watchCode, setWatchCode] = useState("");
  const set = (name: string, value: unknown) => setValues((v) => ({ ...v, [name]: value }));
  const input = (f: Field) => {
    const value = values[f.name];
    const id = `setting-${f.name}`;
    if (f.kind === "switch")
      return (
        <label class="check" key={f.name}>
          <input type="checkbox" name={f.name} checked={value === true} onChange={(e) => set(f.name, e.currentTarget.checked)} /> {f.label}
        </label>
      );
    return (
      <label key={f.name} for={id}>
        {f.label}{" "}
        {f.kind === "choice" ? (
          <select id={id} name={f.name} value={String(value ?? "")} onChange={(e) => set(f.name, e.currentTarget.value)}>
            {f.choices.map((c) => (
              <option key={c} value={c}>
                {c.replaceAll("-", " ")}
              </option>
            ))}
          </select>
        ) : f.kind === "number" ? (
          <input
            id={id}
            name={f.name}
            type="number"
            min={f.min}
            max={f.max}
            value={value === undefined || value === null ? "" : String(value)}
            placeholder="default"
            onInput={(e) => set(f.name, e.currentTarget.value === "" ? undefined : Number(e.currentTarget.value))}
          />
        ) : (
          <input
            id={id}
            name={f.name}
            type="text"
            value={value === undefined || value === null ? "" : String(value)}
            placeholder="default"
            onInput={(e) => set(f.name, e.currentTarget.value === "" ? undefined : e.currentTarget.value)}
          />
        )}
      </label>
    );
  };
  const settings = () => Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined && v !== ""));
  return (
    <div class="lobby">
      <section class="card" aria-labelledby="create-title">
        <h2 id="create-title">Create a {props.title} room</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void room.create(settings());
          }}
        >
          <div class="fields">{fields.slice(0, FIRST_FIELDS).map(input)}</div>
          {fields.length > FIRST_FIELDS && (
            <details>
              <summary>More settings</summary>
              <div class="fields">{fields.slice(FIRST_FIELDS).map(input)}</div>
            </details>
          )}
          <button type="submit" class="primary">
            Create room
          </button>
        </form>
      </section>
      <section class="card" aria-labelledby="join-title">
        <h2 id="join-title">Join a room</h2>
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void room.join(code);
          }}
        >
          <label>
            Room code <input name="code" value={code} onInput={(e) => setCode(e.currentTarget.value.toUpperCase())} maxLength={16} autoComplete="off" spellcheck={false} required />
          </label>
          <button type="submit">Join</button>
        </form>
      </section>
      <section class="card" aria-labelledby="watch-title">
        <h2 id="watch-title">Watch a room</h2>
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void room.watch(watchCode);
          }}
        >
          <label>
            Room code to watch <input name="watch_code" value={watchCode} onInput={(e) => setWatchCode(e.currentTarget.value.toUpperCase())} maxLength={16} autoComplete="off" spellcheck={false} required />
          </label>
          <button type="submit">Watch</button>
        </form>
      </section>
    </div>
  );
}

function Waiting(props: { room: Room; phase: Extract<RoomPhase, { kind: "waiting" }>; path: string; seatName?: (seat: number) => string }) {
  const { room, phase } = props;
  const plan = room.game.seats;
  const policies = [...plan.ai_levels, ...plan.scripted_policies];
  const [choice, setChoice] = useState(policies[0] ?? "");
  const link = `${location.origin}/#/${props.path}/join/${phase.code}`;
  const watchLink = `${location.origin}/#/${props.path}/watch/${phase.code}`;
  const name = (seat: number) => props.seatName?.(seat) ?? `Seat ${seat}`;
  return (
    <section class="card waiting" aria-labelledby="room-title">
      <h2 id="room-title">
        Room <span class="code" data-room-code={phase.code}>{phase.code}</span>
      </h2>
      <p>
        Players join with the code or this link: <a href={link} class="share-link">{link}</a>
      </p>
      <p>
        Anyone can watch: <a href={watchLink} class="share-link">{watchLink}</a>
      </p>
      <table class="room-seats">
        <caption>Seats</caption>
        <thead>
          <tr>
            <th scope="col">Seat</th>
            <th scope="col">Player</th>
            {phase.host && policies.length > 0 && <th scope="col">Fill</th>}
          </tr>
        </thead>
        <tbody>
          {phase.seats.map((s) => {
            const free = !s.playerId && !s.policy;
            return (
              <tr key={s.seat} data-seat={s.seat} data-free={free ? "true" : undefined}>
                <th scope="row">{name(s.seat)}</th>
                <td>{s.playerId ? `${s.name}${s.seat === 1 ? " (host)" : ""}` : s.policy ? `${s.policy} (computer)` : "free"}</td>
                {phase.host && policies.length > 0 && (
                  <td>{free && <button type="button" onClick={() => room.fill(s.seat, choice)} aria-label={`Fill ${name(s.seat)} with ${choice}`}>Fill</button>}</td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
      {phase.host ? (
        <div class="row">
          {policies.length > 0 && (
            <label>
              Computer player{" "}
              <select name="policy" value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>
                {policies.map((p) => (
                  <option key={p} value={p}>
                    {p}
                  </option>
                ))}
              </select>
            </label>
          )}
          <button type="button" class="primary start" onClick={() => room.begin()}>
            Start{plan.default_fill ? ` (free seats: ${plan.default_fill})` : ""}
          </button>
          <button type="button" onClick={() => room.leave()}>
            Close the room
          </button>
        </div>
      ) : (
        <div class="row">
          <p aria-live="polite">Waiting for the host to start…</p>
          <button type="button" onClick={() => room.leave()}>
            Leave the room
          </button>
        </div>
      )}
    </section>
  );
}
