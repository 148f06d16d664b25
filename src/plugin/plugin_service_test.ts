import assert from "node:assert/strict";
import { getLogger } from "@logtape/logtape";
import { join } from "node:path";
import { symlink } from "../../tests/support/links.ts";
import { testToolContext } from "../../tests/support/tool_context.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { PluginService } from "./plugin_service.ts";

const skillText = (name: string, body: string) => `---\nname: ${name}\ndescription: The ${name} skill\n---\n${body}`;

Deno.test("skill_read gives the body with {baseDir} and files inside the skill only; a broken new version keeps the old one", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-skills-" }));
  await Deno.mkdir(join(root, "lamp", "references"), { recursive: true });
  await Deno.writeTextFile(join(root, "lamp", "SKILL.md"), skillText("lamp", "Read {baseDir}/references/howto.md\n"));
  await Deno.writeTextFile(join(root, "lamp", "references", "howto.md"), "Press the button.\n");
  await Deno.writeFile(join(root, "lamp", "blob.bin"), new Uint8Array([1, 0, 2]));
  await Deno.writeTextFile(join(root, "secret.txt"), "not yours");
  await symlink(join(root, "secret.txt"), join(root, "lamp", "link.md"));
  const plugins = new PluginService({
    roots: [{ dir: root, source: "plugins" }],
    gate: { os: "linux", path: [], env: () => undefined, entry: () => undefined, config: () => false },
    promptChars: 18_000,
    logger: getLogger(["test"]),
  });
  await plugins.start();
  const tools = new ToolRegistry();
  for (const tool of plugins.tools()) tools.register(tool);
  const read = async (args: Record<string, unknown>) =>
    (await tools.call("skill_read", JSON.stringify(args), testToolContext())).content;
  assert.equal(await read({ name: "lamp" }), `Read ${root}/lamp/references/howto.md\n`);
  assert.equal(await read({ name: "lamp", path: "references/howto.md" }), "Press the button.\n");
  const refused: Array<[Record<string, unknown>, RegExp]> = [
    [{ name: "kettle" }, /no available skill is named "kettle"; available: lamp$/],
    [{ name: "lamp", path: "../secret.txt" }, /path "\.\.\/secret\.txt" is outside the folder of the skill lamp$/],
    [{ name: "lamp", path: "/etc/passwd" }, /path "\/etc\/passwd" is outside the folder of the skill lamp$/],
    [{ name: "lamp", path: "link.md" }, /path "link\.md" is outside the folder of the skill lamp$/],
    [{ name: "lamp", path: "references" }, /"references" in the skill lamp is not a file$/],
    [{ name: "lamp", path: "blob.bin" }, /"blob\.bin" in the skill lamp is not a text file$/],
    [{ name: "lamp", path: "missing.md" }, /the skill lamp has no file "missing\.md"$/],
  ];
  for (const [args, pattern] of refused) assert.match(await read(args), pattern, JSON.stringify(args));

  // A new skill appears on reload; a broken new version of lamp leaves the old one offered.
  await Deno.mkdir(join(root, "kettle"));
  await Deno.writeTextFile(join(root, "kettle", "SKILL.md"), skillText("kettle", "Boil.\n"));
  await Deno.writeTextFile(join(root, "lamp", "SKILL.md"), "---\nname: lamp\ndescription: never closed\n");
  const report = await plugins.reload();
  assert.equal(report.eligible, 2);
  assert.ok(
    report.problems.some((p) =>
      p.startsWith("lamp: its new version cannot be used (the frontmatter opened by --- on line 1 is never closed")
    ),
    report.problems.join("\n"),
  );
  assert.equal(await read({ name: "lamp" }), `Read ${root}/lamp/references/howto.md\n`);
  assert.equal(await read({ name: "kettle" }), "Boil.\n");
  assert.match(plugins.system()!.body, /<name>kettle<\/name>[\s\S]*<name>lamp<\/name>/);
  assert.deepEqual(plugins.status(), { skills: 2, eligible: 2, problems: 2, reloads: 2 });
  await plugins.stop();
  await Deno.remove(root, { recursive: true });
});
