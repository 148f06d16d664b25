import assert from "node:assert/strict";
import {
  filterProblem,
  MAX_TOPIC_BYTES,
  TopicFilters,
  topicMatches,
  topicProblem,
  validateTopicFilter,
  validateTopicName,
} from "./topic_filter.ts";

Deno.test("'#' matches the parent level and every level below it (MQTT 3.1.1 §4.7.1.2 examples)", () => {
  const filter = "sport/tennis/player1/#";
  for (
    const topic of ["sport/tennis/player1", "sport/tennis/player1/ranking", "sport/tennis/player1/score/wimbledon"]
  ) {
    assert.equal(topicMatches(filter, topic), true, topic);
  }
  assert.equal(topicMatches(filter, "sport/tennis/player2"), false);
  assert.equal(topicMatches("sport/#", "sport"), true, "'sport/#' also matches the singular 'sport'");
  assert.equal(topicMatches("#", "sport/tennis/player1"), true);
  assert.equal(topicMatches("#", "/"), true);
});

Deno.test("'+' matches exactly one level, an empty one included (MQTT 3.1.1 §4.7.1.3 examples)", () => {
  assert.equal(topicMatches("sport/tennis/+", "sport/tennis/player1"), true);
  assert.equal(topicMatches("sport/tennis/+", "sport/tennis/player2"), true);
  assert.equal(topicMatches("sport/tennis/+", "sport/tennis/player1/ranking"), false);
  assert.equal(topicMatches("sport/+", "sport"), false);
  assert.equal(topicMatches("sport/+", "sport/"), true);
  assert.equal(topicMatches("+/+", "/finance"), true);
  assert.equal(topicMatches("/+", "/finance"), true);
  assert.equal(topicMatches("+", "/finance"), false);
  assert.equal(topicMatches("+/tennis/#", "sport/tennis/player1/ranking"), true);
  assert.equal(topicMatches("sport/+/player1", "sport/tennis/player1"), true);
});

Deno.test("exact filters match only the same name, case and empty levels counting", () => {
  assert.equal(topicMatches("home/kitchen/set", "home/kitchen/set"), true);
  assert.equal(topicMatches("home/kitchen/set", "Home/kitchen/set"), false, "topics are case-sensitive");
  assert.equal(topicMatches("home/kitchen", "home/kitchen/"), false, "a trailing '/' is one more, empty level");
  assert.equal(topicMatches("/home", "home"), false);
  assert.equal(topicMatches("home", "home/kitchen"), false);
});

Deno.test("names beginning with '$' are matched by no leading wildcard, only by a filter naming the level (§4.7.2)", () => {
  assert.equal(topicMatches("#", "$SYS/broker/uptime"), false);
  assert.equal(topicMatches("+/monitor/Clients", "$SYS/monitor/Clients"), false);
  assert.equal(topicMatches("$SYS/#", "$SYS/monitor/Clients"), true);
  assert.equal(topicMatches("$SYS/monitor/+", "$SYS/monitor/Clients"), true);
  assert.equal(topicMatches("home/#", "home/$state"), true, "only the first level is the server's");
});

Deno.test("valid filters pass; misplaced wildcards are refused naming the filter and the rule", () => {
  for (const filter of ["#", "+", "+/+", "sport/tennis/#", "+/tennis/#", "sport/+/player1", "/", "$SYS/#"]) {
    assert.equal(filterProblem(filter), undefined, filter);
  }
  assert.match(filterProblem("sport/tennis#")!, /"sport\/tennis#" is invalid: '#' must be the last level, alone/);
  assert.match(filterProblem("sport/tennis/#/ranking")!, /'#' must be the last level/);
  assert.match(filterProblem("sport+")!, /"sport\+" is invalid: '\+' must be a whole level/);
  assert.match(filterProblem("home/+x/set")!, /'\+' must be a whole level/);
  assert.match(filterProblem("")!, /is empty/);
  assert.match(filterProblem("home/\u0000")!, /NUL character/);
});

Deno.test("a publish topic must be one exact topic: wildcards, NUL, lone surrogates and over 65535 bytes are refused", () => {
  assert.equal(topicProblem("home/kitchen/set"), undefined);
  assert.equal(topicProblem("家/厨房/灯"), undefined, "any UTF-8 is allowed");
  assert.match(
    topicProblem("home/+/set")!,
    /has a wildcard \('\+' or '#'\); a message is published to one exact topic/,
  );
  assert.match(topicProblem("home/#")!, /has a wildcard/);
  assert.match(topicProblem("a\u0000b")!, /NUL character \(U\+0000\)/);
  assert.match(topicProblem("a\ud800b")!, /lone UTF-16 surrogate/);
  assert.equal(topicProblem("x".repeat(MAX_TOPIC_BYTES)), undefined, "exactly the limit is allowed");
  assert.match(topicProblem("x".repeat(MAX_TOPIC_BYTES + 1))!, /is 65536 bytes of UTF-8; MQTT allows at most 65535/);
  // Three bytes each in UTF-8: 21846 of them are 65538 bytes although only 21846 UTF-16 units.
  assert.match(topicProblem("灯".repeat(21_846))!, /is 65538 bytes of UTF-8/);
});

Deno.test("the validators throw TypeErrors that name the setting and the value", () => {
  assert.throws(
    () => validateTopicFilter("home/motion#", "smart_home.mqtt.subscribe[1]"),
    (error: unknown) =>
      error instanceof TypeError &&
      error.message ===
        `smart_home.mqtt.subscribe[1]: the topic filter "home/motion#" is invalid: '#' must be the last level, ` +
          `alone (as in "home/#")`,
  );
  assert.throws(
    () => validateTopicName("home/+/set", "topic"),
    (error: unknown) => error instanceof TypeError && error.message.startsWith(`topic: the topic "home/+/set" has`),
  );
  assert.doesNotThrow(() => validateTopicName("home/kitchen/set", "topic"));
});

Deno.test("TopicFilters checks every filter, names the bad one by index, and matches any of them", () => {
  assert.throws(
    () => new TopicFilters(["home/+/set", "lights/#/x"], "smart_home.mqtt.publish"),
    /^TypeError: smart_home\.mqtt\.publish\[1\]: the topic filter "lights\/#\/x" is invalid/,
  );
  const allowed = new TopicFilters(["home/+/set", "lights/#"], "smart_home.mqtt.publish");
  assert.equal(allowed.matches("home/kitchen/set"), true);
  assert.equal(allowed.matches("lights"), true);
  assert.equal(allowed.matches("home/kitchen/state"), false);
  assert.equal(allowed.describe(), '"home/+/set", "lights/#"');
  assert.equal(allowed.size, 2);
  assert.equal(new TopicFilters([], "smart_home.mqtt.publish").describe(), "none");
  assert.equal(new TopicFilters([], "smart_home.mqtt.publish").matches("anything"), false);
});
