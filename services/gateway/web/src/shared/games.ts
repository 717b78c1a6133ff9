// The games this server hosts (GET /v1/games, read once) and one Room per game over the page's
// socket, made when a game's page is first shown.
import { type GameInfo, api } from "./api";
import { socket } from "./connection";
import { Room } from "./rooms";

let listed: Promise<GameInfo[]> | null = null;
const rooms = new Map<string, Room>();

export function gameInfo(name: string): Promise<GameInfo> {
  listed ??= api.games().then(
    (l) => l.games,
    (e: unknown) => {
      listed = null; // a failure is not kept: the next page asks again
      throw e;
    },
  );
  return listed.then((games) => {
    const found = games.find((g) => g.name === name);
    if (!found) throw new Error(`this server does not host ${name}`);
    return found;
  });
}

export async function roomOf(name: string): Promise<Room> {
  const game = await gameInfo(name);
  let room = rooms.get(name);
  if (!room) {
    room = new Room(socket, game);
    room.start();
    rooms.set(name, room);
  }
  return room;
}
