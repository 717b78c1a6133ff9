// The Face-off's arrangements (src/games/digits/arrangement.ts) against the engine's own:
// tests/web/test_build.py writes .test-build/digits-arrangements.json, the engine's arranged
// cells of every arrangement of the slate [0..7], then runs `npm test`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import * as a from "../.test-build/games/digits/arrangement.js";

const engine = JSON.parse(readFileSync(new URL("../.test-build/digits-arrangements.json", import.meta.url), "utf8"));
const slate = [0, 1, 2, 3, 4, 5, 6, 7];

test("every arrangement places the cells as the engine does", () => {
  assert.equal(a.COUNT, 384);
  assert.equal(engine.length, 384);
  for (let i = 0; i < a.COUNT; i++) assert.deepEqual(a.arrange(slate, i), engine[i], `arrangement ${i}`);
});

test("numbers and (order, flips) are one to one", () => {
  for (let i = 0; i < a.COUNT; i++) {
    const { order, flips } = a.fromIndex(i);
    assert.equal(a.toIndex(order, flips), i);
  }
});

test("swapping two columns and flipping one move the digits the player sees move", () => {
  const swapped = a.arrange(slate, a.swapColumns(0, 0, 3));
  assert.deepEqual(swapped, [3, 1, 2, 0, 7, 5, 6, 4]);
  const flipped = a.arrange(slate, a.flipColumn(0, 1));
  assert.deepEqual(flipped, [0, 5, 2, 3, 4, 1, 6, 7]);
  assert.equal(a.flipColumn(a.flipColumn(77, 2), 2), 77);
});
