// A page loaded when first shown: each game beyond the first load's is a chunk of its own, so the
// first load stays small (docs/client.md, bench web_client).
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";

export function lazy<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  return function Lazy(props: P) {
    const [Component, setComponent] = useState<ComponentType<P> | null>(() => loaded);
    const [failed, setFailed] = useState(false);
    useEffect(() => {
      if (Component) return;
      load().then(
        (c) => {
          loaded = c;
          setComponent(() => c);
        },
        () => setFailed(true),
      );
    }, []);
    if (failed) return <p class="error" role="alert">This page could not be loaded. Reload to try again.</p>;
    return Component ? <Component {...props} /> : <p aria-busy="true">Loading…</p>;
  };
}
