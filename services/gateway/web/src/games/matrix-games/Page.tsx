// Matrix Games: rooms of eight seats (people, the rest scripted), the match, its replay.
import { GamePage } from "../GamePage";
import { MatrixLive } from "./Live";
import { ALIASES } from "./yard";

export function MatrixGamesPage(props: { join?: string; watch?: string }) {
  return (
    <GamePage
      game="matrix-games"
      path="matrix"
      title="Matrix Games"
      join={props.join}
      watch={props.watch}
      seatName={(seat) => `${seat} · ${ALIASES[seat - 1] ?? "?"}`}
      live={(room, phase) => <MatrixLive room={room} phase={phase} />}
    />
  );
}
