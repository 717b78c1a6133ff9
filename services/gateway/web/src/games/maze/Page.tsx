// The Maze: rooms of two players, observers by code.
import { GamePage } from "../GamePage";
import { MazeLive } from "./Live";

export function MazePage(props: { join?: string; watch?: string }) {
  return (
    <GamePage
      game="maze"
      path="maze"
      title="The Maze"
      join={props.join}
      watch={props.watch}
      live={(room, phase) => <MazeLive room={room} phase={phase} />}
    />
  );
}
