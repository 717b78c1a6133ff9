// Hash routes (#/mw, #/replay/ID, …): links and reloads work with no server-side routing, and a
// shared room link is just #/mw/join/CODE.
import { useEffect, useState } from "preact/hooks";

export function useRoute(): string[] {
  const parse = () =>
    location.hash
      .replace(/^#\/?/, "")
      .split("/")
      .filter(Boolean)
      .map((part) => decodeURIComponent(part));
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const changed = () => setRoute(parse());
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  return route;
}

export function go(path: string): void {
  location.hash = path;
}
