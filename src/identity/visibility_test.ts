import assert from "node:assert/strict";
import { isSharedSource, type Provenance, readersIncluded, type Viewer, visibleTo } from "./visibility.ts";

const OWNER: Viewer = { sender: "owner", trust: "owner" };
const ALICE: Viewer = { sender: "alice", trust: "household" };
const BOB: Viewer = { sender: "bob", trust: "household" };
const VISITOR: Viewer = { sender: "visitor", trust: "guest" };

const said = (source: string, by: Viewer): Provenance => ({ source, sender: by.sender, trust: by.trust });

Deno.test("groups are shared; direct channels, timers and unknown channels are private; unrecorded is the household's", () => {
  for (const source of ["qq:group:500050005", "", "wechat:group:1"]) assert.equal(isSharedSource(source), true, source);
  for (const source of ["qq:private:1", "http", "openai:alice", "mcp", "serial:tty0", "mic", "timer:abc", "groupie"]) {
    assert.equal(isSharedSource(source), false, source);
  }
});

Deno.test("the owner reads everything", () => {
  for (const by of [ALICE, VISITOR, OWNER]) {
    for (const source of ["http", "qq:private:9", "qq:group:1", "timer:x", ""]) {
      assert.equal(visibleTo(OWNER, said(source, by)), true);
    }
  }
});

Deno.test("a household member reads their own, shared chats and the household's; not others' private chats", () => {
  assert.equal(visibleTo(ALICE, said("http", ALICE)), true);
  assert.equal(visibleTo(ALICE, said("timer:t1", ALICE)), true);
  assert.equal(visibleTo(ALICE, said("http", OWNER)), false);
  assert.equal(visibleTo(ALICE, said("qq:private:20002000", OWNER)), false);
  assert.equal(visibleTo(ALICE, said("openai:bob", BOB)), false);
  assert.equal(visibleTo(ALICE, said("timer:t2", BOB)), false);
  assert.equal(visibleTo(ALICE, said("qq:group:1", OWNER)), true);
  assert.equal(visibleTo(ALICE, said("qq:group:1", VISITOR)), true);
  assert.equal(visibleTo(ALICE, { source: "", sender: "", trust: undefined }), true);
});

Deno.test("a guest reads only their own, even in a group, and never what was said at a higher trust under their name", () => {
  assert.equal(visibleTo(VISITOR, said("qq:group:1", VISITOR)), true);
  assert.equal(visibleTo(VISITOR, said("http", VISITOR)), true);
  assert.equal(visibleTo(VISITOR, said("qq:group:1", OWNER)), false);
  assert.equal(visibleTo(VISITOR, said("qq:group:1", ALICE)), false);
  assert.equal(visibleTo(VISITOR, { source: "", sender: "", trust: undefined }), false);
  assert.equal(visibleTo(VISITOR, { source: "http", sender: "visitor", trust: "household" }), false);
  assert.equal(visibleTo(VISITOR, { source: "http", sender: "visitor" }), false);
});

Deno.test("readersIncluded: what rides along with an item is readable by everyone who reads that item", () => {
  assert.equal(readersIncluded(said("http", OWNER), said("http", ALICE)), false);
  assert.equal(readersIncluded(said("http", ALICE), said("http", ALICE)), true);
  assert.equal(readersIncluded(said("qq:group:1", BOB), said("qq:group:1", ALICE)), true);
  assert.equal(readersIncluded(said("qq:group:1", BOB), said("qq:private:5", ALICE)), true);
  assert.equal(readersIncluded(said("qq:private:5", ALICE), said("qq:group:1", ALICE)), false);
  assert.equal(readersIncluded(said("qq:group:1", ALICE), said("qq:group:1", VISITOR)), false);
  assert.equal(readersIncluded(said("qq:group:1", VISITOR), said("qq:group:1", VISITOR)), true);
});
