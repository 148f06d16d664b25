/**
 * The Worker option of issue 18 (point 7), measured and not taken: a wasmoon engine in its own thread.
 *
 * Protocol: `{open: wasmPath}` → `{ready: ms}` (the engine made inside the worker); `{echo: text}` → `{echo: text}`
 * (one structured-clone round trip); `{lua: code}` → `{result}` (runs the chunk); `{spin: ms}` → spins in JavaScript
 * for that long (to see whether `terminate()` stops a busy worker).
 *
 * @module
 */

/// <reference lib="deno.worker" />

import type { LuaEngine } from "wasmoon";

let engine: LuaEngine | undefined;

self.onmessage = async (message: MessageEvent<{ open?: string; echo?: string; lua?: string; spin?: number }>) => {
  const { open, echo, lua, spin } = message.data;
  if (open !== undefined) {
    const started = performance.now();
    const { LuaFactory } = await import("wasmoon");
    engine = await new LuaFactory(open).createEngine();
    self.postMessage({ ready: performance.now() - started });
  } else if (echo !== undefined) self.postMessage({ echo });
  else if (lua !== undefined) self.postMessage({ result: String(engine!.doStringSync(lua)) });
  else if (spin !== undefined) {
    const until = performance.now() + spin;
    while (performance.now() < until) { /* busy */ }
    self.postMessage({ spun: true });
  }
};
