// Rank tiers are cosmetic (tournament reference §11): from the rating for an account, from the
// wins recorded in this browser for a signed-out player. The reference gives rating thresholds
// only; a local win counts as 100 rating points here, so a first win is a visible step
// (docs/client.md).
export const TIERS: readonly (readonly [number, string])[] = [
  [2000, "Grandmaster"],
  [1800, "Master"],
  [1600, "Diamond"],
  [1400, "Platinum"],
  [1200, "Gold"],
  [1000, "Silver"],
  [800, "Bronze"],
  [0, "Beginner"],
];
export const POINTS_PER_LOCAL_WIN = 100;

export function tierOf(rating: number): string {
  for (const [minimum, name] of TIERS) if (rating >= minimum) return name;
  return "Beginner";
}

export function localTier(wins: number): string {
  return tierOf(wins * POINTS_PER_LOCAL_WIN);
}
