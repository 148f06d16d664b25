/**
 * What `homed tracker` prints (issue 18 point 15): names, link targets and file contents are people's text, so control
 * characters, line breaks and bidirectional overrides in them are shown escaped — nothing moves the cursor, clears the
 * terminal or starts a forged line.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { symlink } from "../../tests/support/links.ts";
import { runTracker } from "../cli/tracker_command.ts";
import { Tracker } from "./tracker.ts";

const EVIL_NAME = "evil\u001b[2J\n  deleted    forged\u202e.md";
const EVIL_TARGET = "/tmp/\u001b]0;owned\u0007";

Deno.test("homed tracker escapes control characters, line breaks and bidi overrides in names, targets and contents", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-tracker-output-" });
  try {
    const knowledge = join(dir, "knowledge");
    await Deno.mkdir(knowledge);
    await Deno.writeTextFile(join(knowledge, EVIL_NAME), "red \u001b[31m text\n");
    await symlink(EVIL_TARGET, join(knowledge, "title"));
    const tracker = new Tracker({
      roots: [{ name: "knowledge", path: knowledge, kind: "dir" }],
      stateDir: join(dir, "data", "tracker"),
      mounts: [],
      now: () => 0,
    });

    assert.equal(
      await runTracker(tracker, "status", [], { all: false }),
      "Parts: knowledge (manifest)\n" +
        "No commit yet: everything is new; `homed tracker commit` records it as the baseline.\n" +
        "  added      knowledge/evil\\u001b[2J\\n  deleted    forged\\u202e.md (15 bytes)\n" +
        "  added      knowledge/title (link → /tmp/\\u001b]0;owned\\u0007)\n",
    );
    assert.equal(
      await runTracker(tracker, "diff", [], { all: false }),
      "--- a/knowledge/evil\\u001b[2J\\n  deleted    forged\\u202e.md\n" +
        "+++ b/knowledge/evil\\u001b[2J\\n  deleted    forged\\u202e.md\n" +
        "@@ -0,0 +1,1 @@\n" +
        "+red \\u001b[31m text\n" +
        "# knowledge/title: new symbolic link (link → /tmp/\\u001b]0;owned\\u0007); the tracker does not follow links\n",
    );

    assert.equal(await runTracker(tracker, "commit", [], { all: false }), "Committed 2 changes.\n");
    await Deno.remove(join(knowledge, "title"));
    await symlink("/tmp/elsewhere", join(knowledge, "title"));
    await assert.rejects(
      runTracker(tracker, "revert", [], { all: true }),
      (error: Error) => {
        assert.equal(
          error.message,
          "Not reverting knowledge/title: it was a symbolic link (link → /tmp/\\u001b]0;owned\\u0007) at the last " +
            "commit, and the tracker does not create links; recreate it by hand (ln -s) or commit the change",
        );
        return true;
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
