// Who the player is. Arriving needs no form: without a live session cookie the page becomes a
// new guest. Signing up, in and out replace the cookie (the gateway sets it, scripts never see it).
import { ApiError, api, type Me } from "./api";
import { Store, stored } from "./store";

export const me = new Store<Me | null>(null);
/** Games won in this browser while signed out, for the local tier (docs/client.md). */
export const localWins = stored<number>("arena.localWins", 0);

/** Whether this browser was given a session before: a first visit goes straight to a guest,
 * rather than asking who it is and logging a 401 in the console. */
const hadSession = stored<boolean>("arena.hadSession", false);
/** A sign-up, -in or -out under way: the cookie is about to change, so nobody asks before. */
let changing: Promise<unknown> = Promise.resolve();
let arriving: Promise<Me> | null = null;

/** The live session (the cookie's, which a sign-up, -in or -out here may just have replaced),
 * or a new guest. */
export async function ensureSession(): Promise<Me> {
  await changing;
  arriving ??= arrive().finally(() => (arriving = null));
  return arriving;
}

/** `signedOut`: the cookie is gone for sure (no need to ask). */
async function arrive(signedOut = false): Promise<Me> {
  try {
    if (signedOut || !hadSession.value) throw new ApiError(401, "unauthorized", "no session yet");
    me.set(await api.me());
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401) throw error;
    const guest = await api.guest();
    me.set({ player_id: guest.player_id, name: guest.name, kind: "guest" });
  }
  hadSession.set(true);
  return me.value as Me;
}

function change<T>(work: () => Promise<T>): Promise<T> {
  const done = work();
  changing = done.catch(() => undefined);
  return done;
}

export function signUp(username: string, password: string, keepGuest: boolean): Promise<void> {
  return change(async () => {
    const guest = me.value?.kind === "guest";
    const session =
      guest && keepGuest ? await api.upgrade({ username, password }) : await api.register({ username, password });
    me.set({ player_id: session.player_id, name: session.username, kind: "account" });
  });
}

export function signIn(username: string, password: string): Promise<void> {
  return change(async () => {
    const session = await api.signIn({ username, password });
    me.set({ player_id: session.player_id, name: session.username, kind: "account" });
  });
}

export function signOut(): Promise<void> {
  return change(async () => {
    try {
      await api.signOut();
    } finally {
      me.set(null);
      await arrive(true); // back as a new guest, as on arrival
    }
  });
}
