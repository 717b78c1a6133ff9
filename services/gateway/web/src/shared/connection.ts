// The page's one socket, shared by every game page (each game's lobby and match over it).
import { ensureSession } from "./session";
import { Socket } from "./socket";

// A socket closed because its session ended: signed out or upgraded here (the cookie is new by
// now: ask who it is, never make a guest over a new account), or ended elsewhere or expired
// (then the cookie is dead, the question is answered 401: a new guest).
export const socket = new Socket(async () => {
  await ensureSession();
});
