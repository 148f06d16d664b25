import assert from "node:assert/strict";
import { withNodeRequire } from "./build.ts";

/** esbuild's require shim for ESM output, as the minifier writes it, with the name it chose. */
const shim = (name: string, [t, e, r] = ["t", "e", "r"]) =>
  `var ${name}=(${t}=>typeof require<"u"?require:typeof Proxy<"u"?new Proxy(${t},{get:(${e},${r})=>` +
  `(typeof require<"u"?require:${e})[${r}]}):${t})(function(${t}){if(typeof require<"u")return require.apply(this,` +
  `arguments);throw Error('Dynamic require of "'+${t}+'" is not supported')});`;

Deno.test("the bundle's require shim becomes Node's createRequire, whatever name the minifier gave it", () => {
  const code = `var a=1;${shim("$e")}var b=$e("node:process");${shim("ke", ["n", "o", "i"])}`;
  const fixed = withNodeRequire(code);
  assert.equal(
    fixed,
    `var a=1;import{createRequire as __homed_createRequire0}from"node:module";` +
      `var $e=__homed_createRequire0(import.meta.url);var b=$e("node:process");` +
      `import{createRequire as __homed_createRequire1}from"node:module";var ke=__homed_createRequire1(import.meta.url);`,
  );
  assert.equal(withNodeRequire("var a=1;"), "var a=1;", "a bundle without the shim is left as it is");
});

Deno.test("a shim of a form the build does not know fails the build, not the first start", () => {
  const changed = shim("$e").replace("new Proxy", "new  Proxy");
  assert.throws(
    () => withNodeRequire(changed),
    /still holds esbuild's require shim in a form scripts\/build\.ts does not know/,
  );
});
