import assert from "node:assert/strict";
import { FairQueue, LaneFullError } from "./fair_queue.ts";

interface Item {
  sender: string;
  n: number;
}

const queue = (perSender?: number) =>
  new FairQueue<Item>({
    laneOf: (item) => item.sender,
    first: (item) => item.sender.startsWith("owner"),
    ...(perSender === undefined ? {} : { perSender }),
  });

async function takeAll(q: FairQueue<Item>): Promise<string[]> {
  const taken: string[] = [];
  while (q.size > 0) {
    const item = (await q.next())!;
    taken.push(`${item.sender}${item.n}`);
  }
  return taken;
}

Deno.test("the owner's lane goes first; other senders take turns, each in its own arrival order", async () => {
  const q = queue();
  for (let n = 1; n <= 4; n++) q.push({ sender: "alice", n });
  q.push({ sender: "bob", n: 1 });
  q.push({ sender: "bob", n: 2 });
  q.push({ sender: "owner", n: 1 });
  q.push({ sender: "guest", n: 1 });
  assert.deepEqual(await takeAll(q), ["owner1", "alice1", "bob1", "guest1", "alice2", "bob2", "alice3", "alice4"]);
});

Deno.test("an owner's message behind a member's burst of 300 waits for none of them", async () => {
  const q = queue(500);
  for (let n = 1; n <= 300; n++) q.push({ sender: "alice", n });
  const first = (await q.next())!;
  assert.equal(first.n, 1, "the turn in flight");
  q.push({ sender: "owner", n: 1 });
  assert.deepEqual(await q.next(), { sender: "owner", n: 1 });
  assert.equal(q.size, 299);
});

Deno.test("two owner identities share the first tier, round-robin, before everyone else", async () => {
  const q = queue();
  q.push({ sender: "alice", n: 1 });
  q.push({ sender: "owner-qq", n: 1 });
  q.push({ sender: "owner-qq", n: 2 });
  q.push({ sender: "owner", n: 1 });
  assert.deepEqual(await takeAll(q), ["owner-qq1", "owner1", "owner-qq2", "alice1"]);
});

Deno.test("a full lane refuses more, naming the sender and the bound, and takes again once served", async () => {
  const q = queue(2);
  q.push({ sender: "alice", n: 1 });
  q.push({ sender: "alice", n: 2 });
  assert.throws(() => q.push({ sender: "alice", n: 3 }), (error: Error) => {
    assert.ok(error instanceof LaneFullError && error instanceof RangeError);
    assert.equal(error.message, "alice already has 2 messages waiting; wait for the butler to answer them");
    return true;
  });
  q.push({ sender: "bob", n: 1 });
  await q.next();
  q.push({ sender: "alice", n: 3 });
  assert.equal(q.waiting("alice"), 2);
});

Deno.test("drain hands back everything in arrival order; close wakes waiters; a waiter gets the next push", async () => {
  const q = queue();
  const waiting = q.next();
  q.push({ sender: "bob", n: 0 });
  assert.deepEqual(await waiting, { sender: "bob", n: 0 });
  q.push({ sender: "alice", n: 1 });
  q.push({ sender: "owner", n: 1 });
  q.push({ sender: "alice", n: 2 });
  assert.deepEqual(q.drain().map((item) => `${item.sender}${item.n}`), ["alice1", "owner1", "alice2"]);
  assert.equal(q.size, 0);
  const blocked = q.next();
  q.close();
  assert.equal(await blocked, undefined);
  assert.throws(() => q.push({ sender: "bob", n: 9 }), /The queue is closed/);
});

Deno.test("a lane that never empties still serves in arrival order after it compacts", async () => {
  const q = queue(10);
  for (let n = 0; n < 5; n++) q.push({ sender: "alice", n });
  for (let n = 5; n < 10_000; n++) {
    await q.next();
    q.push({ sender: "alice", n });
  }
  assert.equal(q.size, 5);
  assert.deepEqual((await q.next())!.n, 9_995);
});

Deno.test("takeFollowing takes a lane's matching head out of turn, stopping at the first that does not match", async () => {
  const q = queue();
  q.push({ sender: "alice", n: 1 });
  q.push({ sender: "alice", n: 2 });
  q.push({ sender: "bob", n: 1 });
  q.push({ sender: "alice", n: 30 });
  q.push({ sender: "alice", n: 4 });
  assert.deepEqual(await q.next(), { sender: "alice", n: 1 });
  assert.deepEqual(q.takeFollowing("alice", (item) => item.n < 10, 5), [{ sender: "alice", n: 2 }]);
  assert.equal(q.size, 3);
  assert.deepEqual(q.takeFollowing("alice", () => true, 1), [{ sender: "alice", n: 30 }], "at most max");
  assert.deepEqual(q.takeFollowing("alice", () => true, 5), [{ sender: "alice", n: 4 }]);
  assert.deepEqual(q.takeFollowing("nobody", () => true, 5), []);
  assert.deepEqual(await takeAll(q), ["bob1"], "an emptied lane leaves the turns");
});
