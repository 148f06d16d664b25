/**
 * The Worker option of issue 18 (point 7), measured and not taken: a wasmoon engine in its own thread.
 *
 * Protocol: `{open: wasmPath}` → `{ready: ms}` (the engine made inside the worker); `{echo: text}` → `{echo: text}`
 * (one structured-clone round trip); `{spin: ms}` → spins in JavaScript for that long (to see whether `terminate()`
 * stops a busy worker).
 *
 * @module
 */

/// <reference lib="deno.worker" />

self.onmessage = async (message: MessageEvent<{ open?: string; echo?: string; spin?: number }>) => {
  const { open, echo, spin } = message.data;
  if (open !== undefined) {
    const started = performance.now();
    const { LuaFactory } = await import("wasmoon");
    await new LuaFactory(open).createEngine();
    self.postMessage({ ready: performance.now() - started });
  } else if (echo !== undefined) self.postMessage({ echo });
  else if (spin !== undefined) {
    const until = performance.now() + spin;
    while (performance.now() < until) { /* busy */ }
    self.postMessage({ spun: true });
  }
};
