import assert from "node:assert/strict";
import { join } from "node:path";
import { IntentDataError } from "./intent.ts";
import { loadIntents } from "./intents_setup.ts";

const VOCABULARY = { version: 1, names: ["Porch light"], places: [] };

Deno.test("the household's own files add phrasings; a missing folder adds none", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const before = await loadIntents(join(dir, "missing"));
    assert.deepEqual(before.match("porch light go", VOCABULARY), [], "not a shipped phrasing");
    await Deno.writeTextFile(
      join(dir, "family.yaml"),
      'language: en\nintents:\n  HassTurnOn:\n    - "{name} go"\n',
    );
    await Deno.writeTextFile(join(dir, "notes.txt"), "not a template file");
    const matcher = await loadIntents(dir);
    assert.equal(matcher.match("porch light go", VOCABULARY)[0]?.intent, "HassTurnOn");
    assert.equal(matcher.counts.templates, before.counts.templates + 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a file with a mistake is refused naming its path, the line and what is wrong", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "family.yaml");
    await Deno.writeTextFile(path, 'language: en\nintents:\n  HassTurnOn:\n    - "turn on (the {name}"\n');
    const error = await loadIntents(dir).then(() => undefined, (caught: unknown) => caught);
    assert.ok(error instanceof IntentDataError, String(error));
    assert.equal(error.file, path);
    assert.equal(error.line, 4);
    assert.match(error.message, new RegExp(`^${path.replaceAll("/", "\\/")}:4: .*\\(`));
    await Deno.writeTextFile(path, 'language: en\nintents:\n  HassDance:\n    - "dance"\n');
    await assert.rejects(loadIntents(dir), /family\.yaml:3: .*HassDance.*HassTurnOn/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
