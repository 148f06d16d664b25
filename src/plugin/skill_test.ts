import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { symlink } from "../../tests/support/links.ts";
import { discoverSkills } from "./discovery.ts";
import { FrontmatterError, parseSkillFile } from "./frontmatter.ts";
import { type GateContext, gateSkill } from "./gating.ts";
import { readSkill, type Skill } from "./skill.ts";

const FIXTURES = fileURLToPath(new URL("../../tests/fixtures/skills/", import.meta.url));

/** A PATH folder holding executables named `names` (real files, mode 755). */
async function pathWith(names: string[]): Promise<string> {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-path-" });
  for (const name of names) {
    await Deno.writeTextFile(join(dir, name), "#!/bin/sh\n");
    await Deno.chmod(join(dir, name), 0o755);
  }
  return dir;
}

function context(path: string, extra: Partial<GateContext> = {}): GateContext {
  return { os: "linux", path: [path], env: () => undefined, entry: () => undefined, config: () => false, ...extra };
}

Deno.test("the four OpenClaw fixtures give their documented outcomes on Linux with curl on PATH", async () => {
  // The fixtures are the published files byte for byte (deno fmt leaves tests/fixtures alone).
  const sizes = { weather: 1185, openhue: 1160, "apple-reminders": 2519, "1password": 2388 };
  for (const [name, size] of Object.entries(sizes)) {
    assert.equal((await Deno.stat(`${FIXTURES}${name}/SKILL.md`)).size, size, name);
  }
  const { skills, problems } = await discoverSkills([{ dir: FIXTURES, source: "plugins" }]);
  assert.deepEqual(problems, []);
  assert.deepEqual(skills.map((found) => found.skill.name), ["1password", "apple-reminders", "openhue", "weather"]);
  const path = await pathWith(["curl"]);
  const outcome = Object.fromEntries(skills.map(({ skill }) => [skill.name, gateSkill(skill, context(path))]));
  assert.deepEqual(outcome.weather, { eligible: true, reasons: [`requires.bins: curl at ${path}/curl`] });
  assert.deepEqual(outcome.openhue, { eligible: false, reasons: ["requires.bins: openhue is not on PATH"] });
  assert.deepEqual(outcome["apple-reminders"], { eligible: false, reasons: ["os: needs darwin, this is linux"] });
  assert.deepEqual(outcome["1password"], { eligible: true, reasons: ["no OpenClaw metadata: no gates"] });
  const byName = Object.fromEntries(skills.map(({ skill }) => [skill.name, skill]));
  // Installers are parsed (and would be shown), never run.
  assert.deepEqual(byName.openhue!.install, [{
    kind: "brew",
    id: "brew",
    label: "Install OpenHue CLI (brew)",
    target: "openhue/cli/openhue-cli",
    bins: ["openhue"],
    os: [],
  }]);
  assert.equal(byName.weather!.gates?.emoji, "🌤️");
  assert.equal(byName.weather!.homepage, "https://wttr.in/:help");
  assert.match(byName["1password"]!.warnings[0]!, /metadata has no openclaw object \(keys: dna\)/);
  for (const skill of Object.values(byName)) {
    assert.equal(skill.userInvocable, true);
    assert.ok(skill.body.startsWith("\n#") || skill.body.startsWith("#"), skill.name);
  }
  // `always` does not override `os`; it does override missing binaries.
  const always = { ...byName["apple-reminders"]!, gates: { ...byName["apple-reminders"]!.gates!, always: true } };
  assert.equal(gateSkill(always, context(path)).eligible, false);
  assert.equal(gateSkill(always, context(path, { os: "darwin" })).eligible, true);
  await Deno.remove(path, { recursive: true });
});

Deno.test("frontmatter edge cases: CRLF, no closing ---, trailing-comma JSON5, unknown keys, an unquoted colon", () => {
  const crlf = parseSkillFile(
    '---\r\nname: lamp\r\ndescription: Lamps\r\nmetadata: {"openclaw": {"os": "linux,darwin",}}\r\n---\r\nBody\r\n',
  );
  assert.deepEqual(crlf.fields, {
    name: "lamp",
    description: "Lamps",
    metadata: '{"openclaw": {"os": "linux,darwin",}}',
  });
  assert.equal(crlf.body, "Body\n");
  const skill = readSkill(crlf, "/p/lamp", "/p/lamp/SKILL.md") as Skill;
  assert.deepEqual(skill.gates?.os, ["linux", "darwin"], "a CSV string is a list");
  assert.throws(() => parseSkillFile("---\nname: x\ndescription: never closed\n"), (error: unknown) => {
    assert.ok(error instanceof FrontmatterError);
    assert.equal(error.message, "the frontmatter opened by --- on line 1 is never closed by a line starting with ---");
    return true;
  });
  const colon = parseSkillFile("---\nname: notes\ndescription: Use it: carefully\nfancy-key: 3\n---\n");
  assert.equal(colon.fields.description, "Use it: carefully");
  assert.equal(colon.fields["fancy-key"], "3", "unknown keys are kept as text");
  const yamlMeta = parseSkillFile(
    "---\nname: n\ndescription: d\nmetadata:\n  openclaw:\n    requires:\n      bins: [curl]\n---\n",
  );
  assert.deepEqual(JSON.parse(yamlMeta.fields.metadata!), { openclaw: { requires: { bins: ["curl"] } } });
  assert.deepEqual(parseSkillFile("# No frontmatter\n"), { fields: {}, body: "# No frontmatter\n" });
  assert.equal(
    readSkill(parseSkillFile("---\nname: quiet\n---\n"), "/p/quiet", "/p/quiet/SKILL.md"),
    "/p/quiet/SKILL.md: no description (a skill needs one to be offered)",
  );
  const odd = readSkill(
    parseSkillFile(
      "---\nname: Bad_Name\ndescription: d\nuser-invocable: no\ndisable-model-invocation: YES\nmetadata: {oops\n---\n",
    ),
    "/p/other",
    "/p/other/SKILL.md",
  ) as Skill;
  assert.deepEqual([odd.userInvocable, odd.disableModelInvocation, odd.gates], [false, true, undefined]);
  assert.match(
    odd.warnings.join(" | "),
    /name "Bad_Name" is not 1–64 of a-z.*differs from its folder "other".*metadata is not JSON5/,
  );
});

Deno.test("discovery: skills/ layout, grouped folders, size cap, symlink escape, precedence by name", async () => {
  const base = await Deno.makeTempDir({ dir: "/tmp", prefix: "homed-plugins-" });
  const write = async (path: string, text: string) => {
    await Deno.mkdir(join(base, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(base, path), text);
  };
  const skillText = (name: string, description = `The ${name} skill`) =>
    `---\nname: ${name}\ndescription: ${description}\n---\nBody of ${name}\n`;
  await write("plugins/lamp/SKILL.md", skillText("lamp", "Local lamp skill"));
  await write("plugins/group/kettle/SKILL.md", skillText("kettle"));
  await write("plugins/.hidden/SKILL.md", skillText("hidden"));
  await write("plugins/node_modules/dep/SKILL.md", skillText("dep"));
  await write("plugins/big/SKILL.md", skillText("big") + "x".repeat(300_000));
  await write("outside/evil/SKILL.md", skillText("evil"));
  await symlink(join(base, "outside/evil"), join(base, "plugins/evil"));
  await write("extra/skills/lamp/SKILL.md", skillText("lamp", "Extra lamp skill"));
  await write("extra/skills/fan/SKILL.md", skillText("fan"));
  const { skills, problems } = await discoverSkills([
    { dir: join(base, "extra"), source: "extra_dirs[0]" },
    { dir: join(base, "plugins"), source: "plugins" },
  ]);
  assert.deepEqual(skills.map((found) => [found.skill.name, found.source]), [
    ["fan", "extra_dirs[0]"],
    ["kettle", "plugins"],
    ["lamp", "plugins"],
  ]);
  assert.equal(skills.find((found) => found.skill.name === "lamp")!.skill.description, "Local lamp skill");
  const real = await Deno.realPath(base);
  assert.ok(
    problems.some((p) =>
      p === `${real}/plugins/big/SKILL.md: skipped, ${300_000 + skillText("big").length} bytes (more than 256000)`
    ),
    problems.join("\n"),
  );
  assert.ok(problems.some((p) => p.startsWith(`${real}/plugins/evil: skipped, it leads outside`)), problems.join("\n"));
  assert.ok(
    problems.some((p) => p.startsWith(`lamp: ${real}/plugins/lamp/SKILL.md (plugins) replaces`)),
    problems.join("\n"),
  );
  await Deno.remove(base, { recursive: true });
});

Deno.test("env gates: set, from the entry's env, or its apiKey as primaryEnv; config gates; a disabled entry", async () => {
  const skill = readSkill(
    parseSkillFile(
      '---\nname: image-lab\ndescription: Images\nmetadata: {"openclaw": {"primaryEnv": "GEMINI_API_KEY", "requires": {"env": ["GEMINI_API_KEY"], "config": ["onebot.enabled"]}}}\n---\n',
    ),
    "/p/image-lab",
    "/p/image-lab/SKILL.md",
  ) as Skill;
  const path = await pathWith([]);
  const on = (dotted: string) => dotted === "onebot.enabled";
  assert.deepEqual(gateSkill(skill, context(path, { config: on })), {
    eligible: false,
    reasons: ["requires.env: GEMINI_API_KEY is not set (nor in plugins.entries.image-lab)"],
  });
  assert.equal(gateSkill(skill, context(path, { config: on, entry: () => ({ apiKey: "k" }) })).eligible, true);
  assert.equal(gateSkill(skill, context(path, { config: on, env: () => "set" })).eligible, true);
  assert.deepEqual(gateSkill(skill, context(path, { env: () => "set" })).reasons, [
    "requires.config: onebot.enabled is not on in homed's config",
  ]);
  assert.deepEqual(gateSkill(skill, context(path, { entry: () => ({ enabled: false }) })), {
    eligible: false,
    reasons: ["disabled by plugins.entries.image-lab.enabled"],
  });
  await Deno.remove(path, { recursive: true });
});
