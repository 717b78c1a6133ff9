// The Maze's view records put back together (src/games/maze/view.ts), on records the game's own
// views made: tests/web/test_build.py writes .test-build/maze-views.json from a whole match played
// by the game's bots (arena_games.maze), then runs `npm test`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import * as v from "../.test-build/games/maze/view.js";

const views = JSON.parse(readFileSync(new URL("../.test-build/maze-views.json", import.meta.url), "utf8"));
const records = (role) => views[role].filter((m) => m.type === "maze_view");

test("an observer's records make whole views: every cell of the maze, both players", () => {
  const assembler = new v.Assembler();
  let whole = 0;
  for (const record of records("observer")) {
    assert.ok(JSON.stringify(record).length <= 512);
    const view = assembler.add(record);
    if (!view) continue;
    whole++;
    assert.equal(view.cells.size, view.width * view.height);
    assert.deepEqual(Object.keys(view.players).sort(), ["1", "2"]);
  }
  assert.ok(whole > 1);
});

test("the records of a view in any order make the same view; an older view's records are dropped", () => {
  const all = records("observer");
  const seq = all[0].seq;
  const one = all.filter((r) => r.seq === seq).slice(0, all[0].chunks);
  const inOrder = new v.Assembler();
  let expected = null;
  for (const r of one) expected = inOrder.add(r) ?? expected;
  const reversed = new v.Assembler();
  let got = null;
  for (const r of [...one].reverse()) got = reversed.add(r) ?? got;
  assert.deepEqual([...got.cells], [...expected.cells]);
  assert.deepEqual(got.players, expected.players);
  const later = all.find((r) => r.seq > seq && r.chunk === 0);
  const fresh = new v.Assembler();
  for (const r of all.filter((r) => r.seq === later.seq)) fresh.add(r);
  assert.equal(fresh.add(one[0]), null);
});

test("a player's map grows as cells are revealed, and moves follow the open passages", () => {
  const assembler = new v.Assembler();
  let known = new Map();
  let sizes = [];
  for (const record of records("1")) {
    const view = assembler.add(record);
    if (!view) continue;
    known = v.remember(known, view);
    sizes.push(known.size);
    const cell = view.status.cell;
    if (cell !== null && cell !== undefined) {
      const flags = view.cells.get(cell);
      for (const dir of ["N", "E", "S", "W"]) assert.equal(v.open(view.cells, cell, dir), (flags & v.PASSAGE[dir]) !== 0);
    }
  }
  assert.ok(sizes.length > 1 && sizes.at(-1) > sizes[0]);
  assert.deepEqual(sizes, [...sizes].sort((a, b) => a - b));
});
