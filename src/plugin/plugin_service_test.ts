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

Deno.test("slash commands: /name points the turn at the skill; command-dispatch: tool calls the tool directly; plgreload", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-skills-" }));
  const write = async (name: string, extra: string) => {
    await Deno.mkdir(join(root, name));
    await Deno.writeTextFile(
      join(root, name, "SKILL.md"),
      `---\nname: ${name}\ndescription: The ${name} skill\n${extra}---\nBody\n`,
    );
  };
  await write("release-notes", "");
  await write("lights", "command-dispatch: tool\ncommand-tool: lights_set\n");
  await write("quiet", "user-invocable: false\n");
  const plugins = new PluginService({
    roots: [{ dir: root, source: "plugins" }],
    gate: { os: "linux", path: [], env: () => undefined, entry: () => undefined, config: () => false },
    promptChars: 18_000,
    logger: getLogger(["test"]),
  });
  await plugins.start();
  const input = (text: string) => ({ text, source: "http", sender: "owner", time: 0 });
  assert.deepEqual(plugins.reference(input("/release_notes v2.1 please")), {
    title: "Skill invoked by the user",
    body:
      'The user typed /release-notes with the arguments: v2.1 please. Read the skill with skill_read (name "release-notes") and follow it.',
  });
  assert.equal(plugins.dispatch(input("/release-notes")), undefined, "no dispatch: the model follows the skill");
  assert.deepEqual(plugins.dispatch(input("/lights kitchen off")), {
    tool: "lights_set",
    args: { command: "kitchen off", commandName: "lights", skillName: "lights" },
  });
  assert.equal(plugins.reference(input("/lights kitchen off")), undefined);
  for (const text of ["/quiet", "/unknown", "release-notes", "please /lights"]) {
    assert.equal(plugins.reference(input(text)), undefined, text);
    assert.equal(plugins.dispatch(input(text)), undefined, text);
  }
  const tools = new ToolRegistry();
  for (const tool of plugins.tools()) tools.register(tool);
  await write("kettle", "");
  const guest = await tools.call("plgreload", "{}", testToolContext("http", "household"));
  assert.equal(guest.ok, false, "owner only");
  const reloaded = await tools.call("plgreload", "{}", testToolContext("http", "owner"));
  assert.equal(reloaded.content, "Reloaded: 4 of 4 skills offered");
  await plugins.stop();
  await Deno.remove(root, { recursive: true });
});
