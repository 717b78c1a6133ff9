// The games the client knows. Each game is a page of its own on the shared parts (session,
// socket, clocks); a game online elsewhere adds an entry here and its folder beside this file.
export interface GameEntry {
  id: string;
  /** The route segment of its pages: #/<path> */
  path: string;
  name: string;
  blurb: string;
  online: boolean;
}

export const GAMES: GameEntry[] = [
  {
    id: "maths-warriors",
    path: "mw",
    name: "Maths Warriors",
    blurb: "Two players, six dice each: capture by Strength or by Mind (exact arithmetic).",
    online: true,
  },
  {
    id: "matrix-games",
    path: "matrix",
    name: "Matrix Games",
    blurb: "Eight cogs in a yard gather tokens and beam each other: a payoff matrix decides who scores.",
    online: true,
  },
  { id: "digits", path: "digits", name: "Digits", blurb: "A maths auto-battler: Focus for gold, build a slate, face saved armies.", online: true },
  { id: "maze", path: "maze", name: "The Maze", blurb: "Two players race in the fog for their key and their exit, in real time.", online: true },
];
