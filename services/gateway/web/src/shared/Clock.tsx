// A clock display: the time, its state in words and by shape (never by colour alone), a tick in
// the final seconds (if sound is on) and one announcement per state change for screen readers.
import { useEffect, useRef, useState } from "preact/hooks";
import { type ClockThresholds, clockState, formatClock, remainingMs, tick } from "./clock";

const WORDS = { normal: "", warning: "warning", critical: "critical", final: "final seconds", stopped: "stopped" };
const MARKS = { normal: "", warning: "⚠", critical: "‼", final: "‼", stopped: "" };

export function Clock(props: {
  label: string;
  deadline: number | null;
  offset: number;
  thresholds: ClockThresholds;
  running: boolean;
  ticking?: boolean;
  /** The clock's full time: the page's estimate of server time lags by the transit, never above. */
  limitMs?: number | null;
}) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!props.running) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [props.running]);
  const left = props.running ? remainingMs(props.deadline, props.offset, now) : null;
  const ms = left !== null && props.limitMs ? Math.min(left, props.limitMs) : left;
  const state = props.running ? clockState(ms, props.thresholds) : "stopped";
  const seconds = ms === null ? null : Math.ceil(ms / 1000);
  const lastTick = useRef<number | null>(null);
  useEffect(() => {
    if (props.ticking && state === "final" && seconds !== null && seconds !== lastTick.current) {
      lastTick.current = seconds;
      tick();
    }
  }, [seconds, state, props.ticking]);
  const text = props.running ? formatClock(ms) : "—";
  return (
    <div class={`clock clock-${state}`} role="timer" aria-label={`${props.label}: ${text}${WORDS[state] ? `, ${WORDS[state]}` : ""}`}>
      <span class="clock-label">{props.label}</span>
      <span class="clock-time" aria-hidden="true">{text}</span>
      {state !== "normal" && state !== "stopped" && (
        <span class="clock-state" aria-hidden="true">
          {MARKS[state]} {WORDS[state]}
        </span>
      )}
    </div>
  );
}
