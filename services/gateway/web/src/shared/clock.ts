// Clocks as the server states them (docs/protocol.md `clocks`): deadlines in server time, with
// the offset between server and page taken at each update. The game clock's states follow the
// tournament reference §7.1: warning at 180 s, critical at 60 s, an audible tick in the final 10 s
// (sound off by default). The move clock, which the reference gives no states, warns at 10 s and
// is critical at 5 s (docs/client.md).
import type * as W from "../gen/wire";
import { stored } from "./store";

export type ClockState = "normal" | "warning" | "critical" | "final" | "stopped";

export interface ClockThresholds {
  warning: number;
  critical: number;
  final: number;
}

export const GAME_CLOCK: ClockThresholds = { warning: 180, critical: 60, final: 10 };
export const MOVE_CLOCK: ClockThresholds = { warning: 10, critical: 5, final: 0 };

export const soundOn = stored<boolean>("arena.sound", false);

export interface Deadlines {
  game: number | null;
  move: number | null;
  /** server time minus page time, ms */
  offset: number;
}

export function deadlines(clocks: Pick<W.Clocks, "server_time_ms" | "game_deadline_ms" | "move_deadline_ms">): Deadlines {
  return {
    game: clocks.game_deadline_ms,
    move: clocks.move_deadline_ms,
    offset: clocks.server_time_ms - Date.now(),
  };
}

export function remainingMs(deadline: number | null, offset: number, now = Date.now()): number | null {
  return deadline === null ? null : Math.max(0, deadline - (now + offset));
}

export function clockState(ms: number | null, t: ClockThresholds): ClockState {
  if (ms === null) return "stopped";
  const s = ms / 1000;
  if (s <= t.final) return "final";
  if (s <= t.critical) return "critical";
  if (s <= t.warning) return "warning";
  return "normal";
}

export function formatClock(ms: number | null): string {
  if (ms === null) return "--:--";
  const total = Math.ceil(ms / 1000);
  const m = Math.floor(total / 60);
  const s = total % 60;
  return `${m}:${s.toString().padStart(2, "0")}`;
}

let audio: AudioContext | null = null;

/** One short tick, if the player turned sound on. */
export function tick(): void {
  if (!soundOn.value) return;
  try {
    audio ??= new AudioContext();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = 880;
    gain.gain.value = 0.05;
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.05);
  } catch {
    // no audio here: the tick is optional
  }
}
