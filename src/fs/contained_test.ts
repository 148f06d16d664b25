import assert from "node:assert/strict";
import { join } from "node:path";
import { hardlink, symlink } from "../../tests/support/links.ts";
import { checkContained, isInside, LinkError, readContainedText } from "./contained.ts";

Deno.test("links out of the folder are refused, named, and never read", async () => {
  const root = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-contained-" });
  const outside = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-outside-" });
  await Deno.writeTextFile(join(outside, "secret.txt"), "root:x:0:0");
  await Deno.mkdir(join(root, "leak"));
  await symlink(join(outside, "secret.txt"), join(root, "leak", "content.md"));
  await symlink(outside, join(root, "dirlink"));
  await Deno.mkdir(join(root, "hard"));
  await hardlink(join(outside, "secret.txt"), join(root, "hard", "content.md"));
  await Deno.mkdir(join(root, "ok"));
  await Deno.writeTextFile(join(root, "ok", "content.md"), "fine");

  await assert.rejects(
    readContainedText(root, join(root, "leak", "content.md")),
    (error) =>
      error instanceof LinkError &&
      error.message === `${root}/leak/content.md is a symbolic link; homed does not follow links out of ${root}`,
  );
  await assert.rejects(
    readContainedText(root, join(root, "dirlink", "secret.txt")),
    new RegExp(`^LinkError: ${root}/dirlink is a symbolic link`),
  );
  await assert.rejects(
    readContainedText(root, join(root, "hard", "content.md")),
    new RegExp(`^LinkError: ${root}/hard/content\\.md has 2 hard links`),
  );
  await assert.rejects(checkContained(root, join(outside, "secret.txt")), /is not inside/);
  assert.equal((await readContainedText(root, join(root, "ok", "content.md")))?.text, "fine");
  assert.equal(await readContainedText(root, join(root, "ok", "missing.md")), undefined);
  await Deno.remove(root, { recursive: true });
  await Deno.remove(outside, { recursive: true });
});

Deno.test("isInside: below the folder by name, not the folder itself, not out by .. (a name starting with .. is inside)", () => {
  assert.equal(isInside("/srv/lamp", "/srv/lamp/references/howto.md"), true);
  assert.equal(isInside("/srv/lamp/", "/srv/lamp/..notes.md"), true);
  assert.equal(isInside("/srv/lamp", "/srv/lamp"), false);
  assert.equal(isInside("/srv/lamp", "/srv/lamp/../secret.txt"), false);
  assert.equal(isInside("/srv/lamp", "/srv/lamplight/x.md"), false);
  assert.equal(isInside("/srv/lamp", "/etc/passwd"), false);
});
