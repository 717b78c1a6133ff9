// Sign up (a guest keeps its games by upgrading), sign in, sign out.
import { useState } from "preact/hooks";
import { ApiError } from "../shared/api";
import { me, signIn, signOut, signUp } from "../shared/session";
import { useStore } from "../shared/store";

export function Account() {
  const who = useStore(me);
  const [tab, setTab] = useState<"up" | "in">("up");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [keep, setKeep] = useState(true);
  const [error, setError] = useState("");
  const [done, setDone] = useState("");
  const run = async (work: () => Promise<void>, message: string) => {
    setError("");
    setDone("");
    try {
      await work();
      setPassword("");
      setDone(message);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Something went wrong; try again.");
    }
  };
  if (who?.kind === "account") {
    return (
      <section class="card account" aria-labelledby="account-title">
        <h2 id="account-title">Signed in as {who.name}</h2>
        {done && <p role="status">{done}</p>}
        <p>
          <a href="#/profile">Your profile</a>
        </p>
        <button type="button" onClick={() => run(signOut, "Signed out: you are a guest again.")}>
          Sign out
        </button>
      </section>
    );
  }
  return (
    <section class="card account" aria-labelledby="account-title">
      <h2 id="account-title">Your account</h2>
      <p>
        You are playing as the guest <strong>{who?.name}</strong>.
      </p>
      {done && <p role="status">{done}</p>}
      <div role="group" aria-label="Account" class="row">
        <button type="button" aria-pressed={tab === "up"} onClick={() => setTab("up")}>
          Sign up
        </button>
        <button type="button" aria-pressed={tab === "in"} onClick={() => setTab("in")}>
          I have an account
        </button>
      </div>
      <form
        aria-label={tab === "up" ? "Sign up" : "Sign in"}
        onSubmit={(e) => {
          e.preventDefault();
          void (tab === "up"
            ? run(() => signUp(username, password, keep), keep ? "Account created: your guest games came with you." : "Account created.")
            : run(() => signIn(username, password), "Signed in."));
        }}
      >
        <div class="fields">
          <label>
            Username{" "}
            <input name="username" autoComplete="username" required minLength={3} maxLength={20} value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
          </label>
          <label>
            Password{" "}
            <input
              name="password"
              type="password"
              autoComplete={tab === "up" ? "new-password" : "current-password"}
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          {tab === "up" && (
            <label class="check">
              <input type="checkbox" name="keep" checked={keep} onChange={(e) => setKeep(e.currentTarget.checked)} /> Keep this
              guest's games (upgrade)
            </label>
          )}
        </div>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary">
          {tab === "up" ? "Create account" : "Sign in"}
        </button>
      </form>
    </section>
  );
}
