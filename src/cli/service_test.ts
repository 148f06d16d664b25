import assert from "node:assert/strict";
import { envFileLine } from "../config/env_file.ts";
import { serviceUnit, systemdQuote } from "./service.ts";

Deno.test("systemdQuote keeps plain words, quotes spaces and quotes, and doubles % specifiers", () => {
  assert.equal(systemdQuote("/usr/bin/deno"), "/usr/bin/deno");
  assert.equal(systemdQuote("/srv/my homed/main.ts"), '"/srv/my homed/main.ts"');
  assert.equal(systemdQuote('say "hi" \\ there'), '"say \\"hi\\" \\\\ there"');
  assert.equal(systemdQuote("50%"), "50%%");
  assert.equal(systemdQuote(""), '""');
});

Deno.test("env file lines: plain values stay plain, others are quoted, a line break is refused by name", () => {
  assert.equal(envFileLine("KEY", "sk-abc.123/+="), "KEY=sk-abc.123/+=");
  assert.equal(envFileLine("KEY", 'a b"c\\'), "KEY='a b\"c\\'");
  assert.throws(() => envFileLine("TOKEN", "it's a b"), /TOKEN: the value has both a single quote/);
  assert.throws(() => envFileLine("DEEPSEEK_API_KEY", "a\nb"), /DEEPSEEK_API_KEY: the value has a line break/);
});

Deno.test("the unit doubles $ in ExecStart only, and marks every writable path optional", () => {
  const unit = serviceUnit({
    execStart: ["/opt/deno", "run", "--allow-env=A$B"],
    environment: { HOMED_CONFIG: "/etc/ho$med/homed.yaml" },
    envFile: "/etc/homed/homed.env",
    readWritePaths: ["/var/lib/homed", "/srv/with space"],
    stopTimeoutSec: 15,
  });
  assert.match(unit, /^ExecStart=\/opt\/deno run --allow-env=A\$\$B$/m);
  assert.match(unit, /^Environment=HOMED_CONFIG=\/etc\/ho\$med\/homed\.yaml$/m);
  assert.match(unit, /^ReadWritePaths=-\/var\/lib\/homed "-\/srv\/with space"$/m);
  assert.doesNotMatch(unit, /^Documentation=/m, "no docs line unless a URL is given");
});
