// The HTTP API, same origin. The session travels as an HttpOnly cookie the page cannot read
// (docs/client.md): requests that start a session ask for it with X-Arena-Session: cookie, and the
// gateway answers without the token in the body.
import type * as H from "../gen/http";
import type { MatrixReplay } from "../gen/matrix.replay.v1";

export type Me = H.Me;
export type Profile = H.PlayerProfile;
export type History = H.HistoryPage;
export type Leaderboard = H.LeaderboardPage;
export type Replay = H.Replay;
export type MatchLog = H.MatchLog;
export type PuzzleView = H.PuzzleView;
export type PuzzleVerdict = H.PuzzleVerdict;
export type PuzzleAnswer = H.PuzzleAnswer;
export type MatchReview = H.MatchReview;
export type GameInfo = H.GameInfo;
/** A session answer once the gateway moved its token into the cookie. */
export type CookieSession = Omit<H.Session, "token">;
export type CookieGuest = Omit<H.GuestSession, "token">;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown, session = false): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (session) headers["X-Arena-Session"] = "cookie";
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? null : JSON.stringify(body),
  });
  if (response.status === 204) return undefined as T;
  const data: unknown = await response.json().catch(() => null);
  if (!response.ok) throw toError(response.status, data);
  return data as T;
}

function toError(status: number, data: unknown): ApiError {
  const detail = (data as { detail?: unknown } | null)?.detail;
  if (detail && typeof detail === "object" && "code" in detail) {
    const d = detail as { code: string; message?: string };
    return new ApiError(status, d.code, d.message ?? d.code);
  }
  if (Array.isArray(detail)) {
    const first = detail[0] as { msg?: string; loc?: unknown[] } | undefined;
    const where = first?.loc?.slice(1).join(".") ?? "";
    return new ApiError(status, "invalid", `${where ? `${where}: ` : ""}${first?.msg ?? "invalid"}`);
  }
  return new ApiError(status, status === 401 ? "unauthorized" : "error", String(detail ?? status));
}

/** A match's replay asked for before the read models have it, or have its end: they follow the
 * log closely, so a page asking right after a game ends tries again a few times. */
export function notYetReplayed(e: unknown): boolean {
  return e instanceof ApiError && (e.status === 404 || e.code === "match_in_progress");
}

/** What a replay page says when it gives up (after notYetReplayed kept answering true). */
export function replayRefusal(e: unknown): string {
  if (e instanceof ApiError && e.status === 404) return "No such match.";
  if (e instanceof ApiError && e.code === "match_in_progress") return "This match is still being played.";
  return String((e as Error).message);
}

type Credentials = H.Credentials;
const enc = encodeURIComponent;

export const api = {
  me: () => call<Me>("GET", "/v1/me"),
  games: () => call<H.GameList>("GET", "/v1/games"),
  guest: () => call<CookieGuest>("POST", "/v1/guests", undefined, true),
  register: (c: Credentials) => call<CookieSession>("POST", "/v1/accounts", c, true),
  upgrade: (c: Credentials) => call<CookieSession>("POST", "/v1/accounts/upgrade", c, true),
  signIn: (c: Credentials) => call<CookieSession>("POST", "/v1/sessions", c, true),
  signOut: () => call<void>("DELETE", "/v1/sessions/current", undefined, true),
  ghostSharing: (id: string) => call<H.GhostSharingSetting>("GET", `/v1/players/${enc(id)}/ghost-sharing`),
  profile: (id: string) => call<Profile>("GET", `/v1/players/${enc(id)}`),
  history: (id: string, cursor?: string | null) =>
    call<History>("GET", `/v1/players/${enc(id)}/matches?limit=10${cursor ? `&cursor=${enc(cursor)}` : ""}`),
  leaderboard: (game: string, cursor?: string | null) =>
    call<Leaderboard>("GET", `/v1/leaderboards/${enc(game)}?limit=20${cursor ? `&cursor=${enc(cursor)}` : ""}`),
  season: (game: string, season: string, cursor?: string | null) =>
    call<H.SeasonLeaderboardPage>("GET", `/v1/leaderboards/${enc(game)}/seasons/${enc(season)}?limit=20${cursor ? `&cursor=${enc(cursor)}` : ""}`),
  replay: (matchId: string) => call<Replay>("GET", `/v1/matches/${enc(matchId)}/replay`),
  /** A Matrix Games match's replay: the engine's matrix.replay.v1 document, as it is (`partial`:
   * an episode still being played, as it stands; without it such a match is 409 match_in_progress). */
  matrixReplay: (matchId: string, partial = false) =>
    call<MatrixReplay>("GET", `/v1/matches/${enc(matchId)}/replay${partial ? "?partial=true" : ""}`),
  events: (matchId: string) => call<MatchLog>("GET", `/v1/matches/${enc(matchId)}/events`),
  review: (matchId: string) => call<MatchReview>("GET", `/v1/matches/${enc(matchId)}/review`),
  puzzle: (difficulty: string, seed?: number) =>
    call<PuzzleView>("GET", `/v1/puzzles/maths-warriors?difficulty=${enc(difficulty)}${seed === undefined ? "" : `&seed=${seed}`}`),
  answer: (answer: PuzzleAnswer) => call<PuzzleVerdict>("POST", "/v1/puzzles/maths-warriors/answers", answer),
};
