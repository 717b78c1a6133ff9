// The Maze's view records put back together (docs/protocol.md, "View records"): a view comes as
// records of at most 512 bytes, one message each; by `chunk` and `chunks` alone they make the
// view. A player's page also remembers every cell it has seen, so the maze is drawn as it is
// revealed. Pure functions: `npm test` runs them in node.

import type * as W from "../../gen/wire";

/** One record of a view, as docs/asyncapi.yaml describes `maze_view` (from the game's model). */
export type ViewRecord = W.MazeView;
export type Phase = W.MazeView["phase"];
export type Result = W.MazeSelfStatus["result"];
export type MazeObject = NonNullable<W.MazeView["objects"]>[number];
/** An observer's view of a seat. */
export type PlayerStatus = W.MazeSeatStatus;

export interface View {
  seq: number;
  role: string;
  phase: Phase;
  width: number;
  height: number;
  meetings: number;
  /** A player's own status; an observer's has the result alone. */
  status: Partial<W.MazeSelfStatus>;
  opponent: W.MazeOpponent | null;
  /** The observer's, by seat number. */
  players: Record<string, PlayerStatus> | null;
  /** cell index -> open passages (1 N, 2 E, 4 S, 8 W), in this view */
  cells: Map<number, number>;
  objects: MazeObject[];
}

/** Records collected until a view is whole. */
export class Assembler {
  private parts = new Map<number, ViewRecord[]>();
  private last = -1;

  /** A record in; the whole view once its last record arrived (a newer view drops older parts). */
  add(record: ViewRecord): View | null {
    if (record.seq < this.last) return null;
    const parts = this.parts.get(record.seq) ?? new Array<ViewRecord>(record.chunks);
    parts[record.chunk] = record;
    this.parts.set(record.seq, parts);
    if (parts.filter(Boolean).length < record.chunks) return null;
    for (const seq of [...this.parts.keys()]) if (seq <= record.seq) this.parts.delete(seq);
    this.last = record.seq;
    return assemble(parts);
  }
}

export function assemble(records: ViewRecord[]): View {
  const first = records[0] as ViewRecord;
  const cells = new Map<number, number>();
  const objects: MazeObject[] = [];
  for (const r of records) {
    for (const [index, flags] of r.cells ?? []) cells.set(index, flags);
    objects.push(...(r.objects ?? []));
  }
  return {
    seq: first.seq,
    role: first.role,
    phase: first.phase,
    width: first.width,
    height: first.height,
    meetings: first.meetings,
    status: first.status ?? {},
    opponent: first.opponent ?? null,
    players: first.players ? { ...first.players } : null,
    cells,
    objects,
  };
}

/** Every cell seen so far (a player's map), the newest view's on top. */
export function remember(known: Map<number, number>, view: View): Map<number, number> {
  const next = new Map(known);
  for (const [index, flags] of view.cells) next.set(index, flags);
  return next;
}

export const PASSAGE = { N: 1, E: 2, S: 4, W: 8 } as const;
export type Direction = keyof typeof PASSAGE;

/** Whether a move from `cell` in `dir` crosses an open passage, as far as the view shows. */
export function open(cells: Map<number, number>, cell: number | null | undefined, dir: Direction): boolean {
  if (cell === null || cell === undefined) return false;
  return ((cells.get(cell) ?? 0) & PASSAGE[dir]) !== 0;
}
