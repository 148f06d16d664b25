import assert from "node:assert/strict";
import type { Clock } from "../../clock.ts";
import { ChatTurns, UnknownTurnError } from "./chat_turns.ts";

/** A clock whose time moves only when the test says, firing the timers that come due. */
function manualClock(): { clock: Pick<Clock, "after" | "monotonic">; advance(ms: number): void } {
  let now = 0;
  const timers = new Set<{ at: number; callback: () => void }>();
  return {
    clock: {
      monotonic: () => now,
      after(ms, callback) {
        const timer = { at: now + ms, callback };
        timers.add(timer);
        return () => timers.delete(timer);
      },
    },
    advance(ms) {
      now += ms;
      for (const timer of [...timers]) {
        if (timer.at <= now) {
          timers.delete(timer);
          timer.callback();
        }
      }
    },
  };
}

/** Lets settled promises' callbacks run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A turn the test ends by hand: what it streams, and its end. */
function heldTurn() {
  const end = Promise.withResolvers<string>();
  let say: (delta: string) => void = () => {};
  let signal: AbortSignal | undefined;
  return {
    run: (onText: (delta: string) => void, turnSignal: AbortSignal) => {
      say = onText;
      signal = turnSignal;
      return end.promise;
    },
    say: (delta: string) => say(delta),
    finish: (reply: string) => end.resolve(reply),
    fail: (error: Error) => end.reject(error),
    get signal() {
      return signal;
    },
  };
}

Deno.test("a turn that ends within the wait is answered whole", async () => {
  const time = manualClock();
  const turns = new ChatTurns({ clock: time.clock });
  const turn = heldTurn();
  const id = turns.start("alice", turn.run);
  const waiting = turns.wait("alice", id, 50_000);
  time.advance(1_000);
  turn.finish("The porch light is on.");
  assert.deepEqual(await waiting, { id, state: "done", reply: "The porch light is on.", elapsedMs: 1_000 });
});

Deno.test("a turn still going at the deadline is answered with the text so far; its reply is kept for later waits", async () => {
  const time = manualClock();
  const turns = new ChatTurns({ clock: time.clock });
  const turn = heldTurn();
  const id = turns.start("alice", turn.run);
  turn.say("Let me check ");
  turn.say("the doors. ");
  const first = turns.wait("alice", id, 50_000);
  time.advance(50_000);
  assert.deepEqual(await first, { id, state: "working", textSoFar: "Let me check the doors. ", elapsedMs: 50_000 });

  // It ends while nobody waits: the reply is kept, and every later wait gets it at once.
  time.advance(20_000);
  turn.finish("Let me check the doors. All locked.");
  await settle();
  const done = { id, state: "done", reply: "Let me check the doors. All locked.", elapsedMs: 70_000 };
  assert.deepEqual(await turns.wait("alice", id, 50_000), done);
  assert.deepEqual(await turns.wait("alice", id, 50_000), done);
});

Deno.test("a failed turn is kept as its error message", async () => {
  const time = manualClock();
  const turns = new ChatTurns({ clock: time.clock });
  const turn = heldTurn();
  const id = turns.start("alice", turn.run);
  turn.fail(new Error("homed is shutting down; try again shortly"));
  assert.deepEqual(await turns.wait("alice", id, 10), {
    id,
    state: "failed",
    error: "homed is shutting down; try again shortly",
    elapsedMs: 0,
  });
});

Deno.test("an id that is unknown, or another caller's, is refused naming the id", async () => {
  const turns = new ChatTurns({ clock: manualClock().clock });
  const id = turns.start("alice", () => Promise.resolve("hi"));
  for (const [caller, asked] of [["visitor", id], ["alice", "no-such-turn"]]) {
    await assert.rejects(turns.wait(caller!, asked!, 10), (error: unknown) => {
      assert.ok(error instanceof UnknownTurnError);
      assert.match(error.message, new RegExp(`^No turn "${asked}" of yours is kept`));
      return true;
    });
  }
});

Deno.test("a turn is forgotten keepMs after it ended, not before", async () => {
  const time = manualClock();
  const turns = new ChatTurns({ clock: time.clock, keepMs: 60_000 });
  const id = turns.start("alice", () => Promise.resolve("Done."));
  await settle();
  time.advance(59_999);
  assert.equal((await turns.wait("alice", id, 10)).state, "done");
  time.advance(1);
  await assert.rejects(turns.wait("alice", id, 10), UnknownTurnError);
  assert.equal(turns.size, 0);
});

Deno.test("at most maxTurns are kept: the oldest ended turn goes first, a running one only when none has ended", async () => {
  const time = manualClock();
  const turns = new ChatTurns({ clock: time.clock, maxTurns: 2 });
  const running = heldTurn();
  const first = turns.start("alice", running.run);
  const second = turns.start("alice", () => Promise.resolve("second"));
  await settle();
  const third = turns.start("alice", () => Promise.resolve("third"));
  await settle();
  assert.equal(turns.size, 2);
  await assert.rejects(turns.wait("alice", second, 10), UnknownTurnError);
  assert.equal((await turns.wait("alice", third, 10)).state, "done");

  // The next start makes room by the ended third; with only running turns left, the oldest of them goes, its run told
  // to stop.
  const held = turns.start("alice", heldTurn().run);
  await assert.rejects(turns.wait("alice", third, 10), UnknownTurnError);
  const fourth = turns.start("alice", () => Promise.resolve("fourth"));
  assert.equal(turns.size, 2);
  assert.equal(running.signal?.aborted, true);
  await assert.rejects(turns.wait("alice", first, 10), UnknownTurnError);
  assert.equal((await turns.wait("alice", held, 0)).state, "working");
  assert.equal((await turns.wait("alice", fourth, 10)).state, "done");
});

Deno.test("a wait ends early when its signal aborts; close() stops the running turns and forgets them all", async () => {
  const time = manualClock();
  const turns = new ChatTurns({ clock: time.clock });
  const turn = heldTurn();
  const id = turns.start("alice", turn.run);
  const cancelled = new AbortController();
  const waiting = turns.wait("alice", id, 50_000, cancelled.signal);
  cancelled.abort();
  assert.equal((await waiting).state, "working");
  turns.close();
  assert.equal(turn.signal?.aborted, true);
  assert.equal(turns.size, 0);
});
