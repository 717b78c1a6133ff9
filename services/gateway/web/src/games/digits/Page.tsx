// Digits: a game alone (ranked, casual, the daily, the tutorial, a trial), rooms of its players,
// each playing their own game over days; its leaderboards.
import { go } from "../../shared/router";
import { GamePage } from "../GamePage";
import { DuelChallenge, DuelInvite } from "./Duel";
import { DigitsGameView, DigitsLive } from "./Live";
import { Solo } from "./Solo";

export function DigitsPage(props: { join?: string; watch?: string; game?: string; duel?: string }) {
  if (props.duel)
    return (
      <div class="game-page">
        <h1>Digits</h1>
        <DuelInvite duelId={props.duel} />
      </div>
    );
  if (props.game)
    return (
      <div class="game-page">
        <h1>Digits</h1>
        <DigitsGameView matchId={props.game} onLeave={() => go("/digits")} leaveLabel="Back to Digits" />
      </div>
    );
  return (
    <GamePage
      game="digits"
      path="digits"
      title="Digits"
      join={props.join}
      watch={props.watch}
      live={(room, phase) => <DigitsLive room={room} phase={phase} />}
      extra={
        <>
          <p>
            <a href="#/digits/leaderboard">Digits leaderboards: the season and the ladder</a>
          </p>
          <Solo />
          <DuelChallenge />
        </>
      }
    />
  );
}
