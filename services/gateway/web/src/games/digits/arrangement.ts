// The Face-off's 384 arrangements (the engine's arena_engine.digits.faceoff): 4! column orders ×
// 2⁴ front/back swaps, numbered order_index × 16 + flips, where order_index ranks the column
// order among the 24 permutations in lexicographic order and bit c of flips swaps the front and
// back of arranged column c + 1. Arrangement 0 is the slate as saved. Cells 0..3 are the front
// row, 4..7 the back; column j is cells j and j + 4. Pure: `npm test` checks it in node against
// the engine's own arrangements.

export type Order = [number, number, number, number];
export type Flips = [boolean, boolean, boolean, boolean];

function permutations(items: number[]): number[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((first, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [first, ...rest]));
}

export const ORDERS = permutations([0, 1, 2, 3]) as Order[];
export const COUNT = ORDERS.length * 16;

export function toIndex(order: Order, flips: Flips): number {
  const rank = ORDERS.findIndex((o) => o.every((v, i) => v === order[i]));
  if (rank < 0) throw new Error("not a column order");
  return rank * 16 + flips.reduce((bits, f, c) => bits | (f ? 1 << c : 0), 0);
}

export function fromIndex(index: number): { order: Order; flips: Flips } {
  const order = ORDERS[Math.floor(index / 16)];
  if (!order || index < 0 || !Number.isInteger(index)) throw new Error("not an arrangement");
  const bits = index % 16;
  return { order: [...order] as Order, flips: [0, 1, 2, 3].map((c) => ((bits >> c) & 1) === 1) as Flips };
}

/** The slate in the arrangement (each column keeps its two digits). */
export function arrange<T>(slate: T[], index: number): T[] {
  const { order, flips } = fromIndex(index);
  const out = [...slate];
  order.forEach((src, j) => {
    let front = slate[src] as T;
    let back = slate[src + 4] as T;
    if (flips[j]) [front, back] = [back, front];
    out[j] = front;
    out[j + 4] = back;
  });
  return out;
}

/** Swap arranged columns a and b (each keeps its flip). */
export function swapColumns(index: number, a: number, b: number): number {
  const { order, flips } = fromIndex(index);
  [order[a], order[b]] = [order[b] as number, order[a] as number];
  [flips[a], flips[b]] = [flips[b] as boolean, flips[a] as boolean];
  return toIndex(order, flips);
}

/** Swap the front and the back of arranged column c. */
export function flipColumn(index: number, c: number): number {
  const { order, flips } = fromIndex(index);
  flips[c] = !flips[c];
  return toIndex(order, flips);
}
