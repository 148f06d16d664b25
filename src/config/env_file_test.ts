import assert from "node:assert/strict";
import { envFileLine, envFilePath, parseEnvFile } from "./env_file.ts";

Deno.test("env file: what envFileLine writes, parseEnvFile reads back unchanged", () => {
  const values = { A: "sk-abc.123/+=", B: 'a b"c\\', C: "", D: "x#y" };
  const text = Object.entries(values).map(([name, value]) => envFileLine(name, value)).join("\n");
  assert.deepEqual(parseEnvFile(`# secrets\n${text}\nA=second-is-ignored\n\n`), values);
  assert.deepEqual(parseEnvFile("export E = 'v w'\nF=plain # comment\n"), { E: "v w", F: "plain" });
});

Deno.test("env file sits beside the config, or in /etc/homed on the embedded defaults", () => {
  assert.equal(envFilePath("/srv/homed/config/homed.yaml"), "/srv/homed/config/homed.env");
  assert.equal(envFilePath(undefined), "/etc/homed/homed.env");
});
