/**
 * A sandboxed Lua 5.4 VM (wasmoon) for one script: only the base library (without `load`, `dofile`, `loadfile`),
 * `table`, `string` (without `dump`), `math`, `utf8` and `coroutine` — no `io`, `os`, `package`, `require` or
 * `debug`. Host functions are granted per script: `log` always; `json` (encode/decode, in Lua, see `json_lua.ts`);
 * `http.request` to the hosts the script's config allows (the host performs it, asynchronously — Lua waits in its
 * coroutine, the event loop does not); `kv` (a small key-value store in the data dir).
 *
 * Every call runs under a time limit and a memory cap. A count hook checks the deadline every 1,000 instructions and,
 * every few milliseconds, yields the script's main coroutine so that the event loop serves others while a script
 * computes: a `while true do end` holds the loop for one slice at a time, not for its whole limit. (Inside a
 * coroutine the script made itself the hook cannot yield — that would resume the script's own `coroutine.resume` — so
 * there it only enforces the deadline.) The C loops a script can make long with one call — the pattern matcher behind
 * `string.find`, `match`, `gmatch` and `gsub`, the plain search, `string.rep`, `table.move` — count their steps and
 * check the deadline every {@link C_STEPS} of them (`glue_patch.ts` adds the checks to the wasm), so such a call stops
 * at the limit too; it cannot yield, so it holds the event loop until then. A script over a limit is stopped with a
 * {@link LuaError} and the VM stays usable. Calls are serialised; values cross the boundary as strings, numbers and
 * booleans only (JSON for the rest).
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { LuaEngine, LuaFactory, LuaWasm } from "wasmoon";
import { GluePatchError, HOOK_GLOBAL, patchGlue, STEPS_GLOBAL } from "./glue_patch.ts";
import { JSON_LUA } from "./json_lua.ts";
import { LuaError, luaErrorFrom } from "./lua_error.ts";
import { luaWasmPath, provideBundleGlobals } from "./wasm_path.ts";

/** Limits of every call. */
export interface LuaLimits {
  /** Wall-clock time a call may take (`lua.time_limit`). */
  timeMs: number;
  /** Bytes the script's state may hold (`lua.memory_limit`). */
  memoryBytes: number;
}

/** A granted `http.request`: the host performs it, only to these hosts. */
export interface HttpGrant {
  /** `host` or `host:port` entries; a request elsewhere fails naming the host. */
  allowHosts: readonly string[];
  /** Deadline of one request. */
  timeoutMs: number;
  /** Largest response body read, in bytes (1 MiB by default). */
  maxBodyBytes?: number;
}

/** A granted key-value store: a JSON file. */
export interface KvGrant {
  path: string;
  /** Most bytes the store's JSON may take (64 KiB by default). */
  maxBytes?: number;
}

/** What a script is granted beyond the sandboxed libraries. */
export interface LuaGrants {
  json?: boolean;
  http?: HttpGrant;
  kv?: KvGrant;
  /**
   * `channel.emit(text [, type [, payload]])`: the script's plugin device turns it into an input (a message to answer,
   * or another type to record). Throws when the device cannot take it (not started).
   */
  emit?: (type: string, text: string, payload: Record<string, unknown>) => void;
}

/** Options of {@link LuaVm.open}. */
export interface LuaVmOptions {
  /** The script's name, as errors show it (`ollama.lua`). */
  name: string;
  source: string;
  limits: LuaLimits;
  grants?: LuaGrants;
  logger: Logger;
}

/** Instructions between two checks of the deadline. */
const HOOK_COUNT = 1_000;
/** How long a script computes before it lets the event loop run. */
const SLICE_MS = 4;
const COUNT_MASK = 8;
/** Steps of a long C loop (the pattern matcher, plain search, `string.rep`, `table.move`) between two checks. */
const C_STEPS = 10_000;

/** One call in flight: what the step checks inside C loops answer to. */
interface Run {
  deadline: number;
  /** True once the deadline has passed. */
  stopped: boolean;
  /**
   * Marks the run stopped and raises the limit's error in `state`, the running thread; from then on every instruction
   * and every C step meets the error again.
   */
  stop(state: number): void;
}

/** The run whose thread wasmoon is resuming now (C loops run only inside a resume). */
let running: Run | undefined;

let factory: Promise<LuaFactory> | undefined;

/**
 * One factory per process: the wasm is patched (≈ 10 ms) and compiled once (≈ 20 ms); each VM is a fresh state
 * (≈ 1 ms). wasmoon itself is loaded on the first VM, so a daemon that runs no Lua never pays for it.
 */
function luaFactory(): Promise<LuaFactory> {
  provideBundleGlobals();
  factory ??= createFactory();
  return factory;
}

/**
 * Makes the factory from a glue.wasm with step checks in its long C loops (`glue_patch.ts`): wasmoon instantiates
 * the wasm itself, so `WebAssembly.instantiate` is replaced for that one call. The step hook raises the running
 * call's time limit in the thread that runs the loop, or gives the loop its next {@link C_STEPS}.
 */
async function createFactory(): Promise<LuaFactory> {
  const { LuaFactory } = await import("wasmoon");
  const instantiate = WebAssembly.instantiate;
  let instance: WebAssembly.Instance | undefined;
  let refused: GluePatchError | undefined;
  const patched = (source: BufferSource | WebAssembly.Module, imports?: WebAssembly.Imports) => {
    if (instance === undefined && !(source instanceof WebAssembly.Module)) {
      const view = ArrayBuffer.isView(source)
        ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
        : new Uint8Array(source);
      let bytes: Uint8Array<ArrayBuffer> | undefined;
      try {
        bytes = patchGlue(view);
      } catch (error) {
        if (error instanceof GluePatchError) refused = error;
        throw error;
      }
      if (bytes) {
        return instantiate(bytes, imports).then((result) => {
          instance = result.instance;
          return result;
        });
      }
    }
    return instantiate(source as BufferSource, imports);
  };
  WebAssembly.instantiate = patched as typeof WebAssembly.instantiate;
  let made: LuaFactory;
  let lua: LuaWasm;
  try {
    made = new LuaFactory(luaWasmPath());
    lua = await made.getLuaModule();
  } catch (error) {
    // wasmoon reports a failed instantiation as its own abort; the reason is the patch's.
    throw refused ?? error;
  } finally {
    WebAssembly.instantiate = instantiate;
  }
  if (!instance) throw new GluePatchError("wasmoon did not instantiate it through WebAssembly.instantiate");
  const steps = instance.exports[STEPS_GLOBAL] as WebAssembly.Global;
  const hook = instance.exports[HOOK_GLOBAL] as WebAssembly.Global;
  hook.value = lua.module.addFunction((state: number) => {
    const run = running;
    if (run === undefined || performance.now() <= run.deadline) return C_STEPS;
    run.stop(state);
    return 0;
  }, "ii");
  steps.value = C_STEPS;
  return made;
}

/** wasmoon's names of the libraries a sandbox opens. */
const LIBRARIES = ["_G", "table", "string", "math", "coroutine"] as const;

/** Globals of the base library a script must not have. */
const REMOVED = ["load", "dofile", "loadfile", "require", "warn"];

/** A script's VM. */
export class LuaVm {
  readonly name: string;
  #engine: LuaEngine;
  #limits: LuaLimits;
  #logger: Logger;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  #collect: () => void = () => {};

  private constructor(engine: LuaEngine, options: LuaVmOptions) {
    this.#engine = engine;
    this.name = options.name;
    this.#limits = options.limits;
    this.#logger = options.logger;
  }

  /**
   * Creates the VM and runs the script's chunk (which defines its functions) under the limits. A script that does
   * not compile fails with a {@link LuaError} of kind `syntax` naming the file and line.
   *
   * @example
   * ```ts
   * import { log } from "../log/logging.ts";
   *
   * const vm = await LuaVm.open({
   *   name: "a.lua",
   *   source: "function twice(x) return x * 2 end",
   *   limits: { timeMs: 1_000, memoryBytes: 16_777_216 },
   *   logger: log("lua"),
   * });
   * await vm.call("twice", 21); // 42
   * vm.close();
   * ```
   */
  static async open(options: LuaVmOptions): Promise<LuaVm> {
    const engine = await (await luaFactory()).createEngine({
      openStandardLibs: false,
      injectObjects: false,
      enableProxy: false,
      traceAllocations: true,
    });
    const vm = new LuaVm(engine, options);
    try {
      vm.#sandbox(options.grants ?? {});
      await vm.#run(options.source, "chunk");
    } catch (error) {
      vm.close();
      throw error;
    }
    return vm;
  }

  #sandbox(grants: LuaGrants): void {
    const global = this.#engine.global;
    for (const library of LIBRARIES) global.loadLibrary(library as Parameters<typeof global.loadLibrary>[0]);
    // wasmoon 1.16's loadLibrary(UTF8) opens the string library under the name utf8; open the real one.
    global.lua.luaopen_utf8(global.address);
    global.lua.lua_setglobal(global.address, "utf8");
    // Kept before the script can replace it: the host collects garbage between calls with the real one.
    this.#collect = global.get("collectgarbage") as () => void;
    for (const name of REMOVED) global.set(name, undefined);
    this.#engine.doStringSync("string.dump = nil");
    const log = (level: string, message: string) => {
      const text = `${this.name}: ${message}`;
      if (level === "error") this.#logger.error("{text}", { text });
      else if (level === "warning") this.#logger.warning("{text}", { text });
      else if (level === "debug") this.#logger.debug("{text}", { text });
      else this.#logger.info("{text}", { text });
    };
    global.set("__homed_log", (level: unknown, message: unknown) => log(String(level), String(message)));
    this.#engine.doStringSync(`
      local host_log = __homed_log
      __homed_log = nil
      log = setmetatable({}, { __call = function(_, ...) host_log("info", table.concat({ ... }, " ")) end })
      for _, level in ipairs({ "debug", "info", "warning", "error" }) do
        log[level] = function(...)
          local parts = {}
          for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
          host_log(level, table.concat(parts, " "))
        end
      end
      print = function(...) log.info(...) end
    `);
    if (grants.json || grants.http || grants.kv || grants.emit) {
      this.#engine.doStringSync(`json = (function() ${JSON_LUA} end)()`);
    }
    if (grants.http) this.#grantHttp(grants.http);
    if (grants.emit) this.#grantEmit(grants.emit);
    if (grants.kv) this.#grantKv(grants.kv);
  }

  #grantHttp(grant: HttpGrant): void {
    const maxBody = grant.maxBodyBytes ?? 1 << 20;
    const request = async (raw: unknown): Promise<string> => {
      const spec = JSON.parse(String(raw)) as { url?: unknown; method?: unknown; headers?: unknown; body?: unknown };
      if (typeof spec.url !== "string") throw new TypeError("http.request: url must be a string");
      let url: URL;
      try {
        url = new URL(spec.url);
      } catch {
        throw new TypeError(`http.request: url ${JSON.stringify(spec.url)} is not a URL`);
      }
      if (!grant.allowHosts.includes(url.host) && !grant.allowHosts.includes(url.hostname)) {
        throw new Error(`http.request: ${url.host} is not an allowed host (allowed: ${grant.allowHosts.join(", ")})`);
      }
      const response = await fetch(url, {
        method: typeof spec.method === "string" ? spec.method : "GET",
        headers: (spec.headers ?? {}) as Record<string, string>,
        ...(typeof spec.body === "string" ? { body: spec.body } : {}),
        signal: AbortSignal.timeout(grant.timeoutMs),
      });
      const body = new Uint8Array(await response.arrayBuffer());
      if (body.length > maxBody) throw new Error(`http.request: the response of ${url.host} exceeds ${maxBody} bytes`);
      return JSON.stringify({
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: new TextDecoder().decode(body),
      });
    };
    this.#engine.global.set("__homed_http", request);
    this.#engine.doStringSync(`
      local host_request = __homed_http
      __homed_http = nil
      http = { request = function(spec) return json.decode(host_request(json.encode(spec)):await()) end }
    `);
  }

  #grantEmit(emit: NonNullable<LuaGrants["emit"]>): void {
    this.#engine.global.set("__homed_emit", (type: unknown, text: unknown, payload: unknown) => {
      const kind = String(type);
      if (!/^[a-z][a-z0-9_.-]{0,40}$/.test(kind)) {
        throw new Error(`channel.emit: type ${JSON.stringify(kind)} is not a name`);
      }
      let extra: unknown = {};
      try {
        extra = JSON.parse(String(payload));
      } catch {
        throw new Error("channel.emit: the payload is not JSON");
      }
      if (extra === null || typeof extra !== "object" || Array.isArray(extra)) {
        throw new Error("channel.emit: the payload must be a table of fields");
      }
      emit(kind, String(text), extra as Record<string, unknown>);
    });
    this.#engine.doStringSync(`
      local host_emit = __homed_emit
      __homed_emit = nil
      channel = {
        emit = function(text, kind, payload)
          assert(type(text) == "string", "channel.emit: the text must be a string")
          host_emit(kind or "message", text, json.encode(payload or {}))
        end,
      }
    `);
  }

  #grantKv(grant: KvGrant): void {
    const maxBytes = grant.maxBytes ?? 64 * 1024;
    let store: Record<string, string> = {};
    try {
      store = JSON.parse(Deno.readTextFileSync(grant.path)) as Record<string, string>;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) {
        this.#logger.warning("{script}: its key-value store {path} is unreadable; starting empty: {error}", {
          script: this.name,
          path: grant.path,
          error,
        });
      }
    }
    const save = () => {
      const text = JSON.stringify(store);
      if (text.length > maxBytes) throw new Error(`kv.set: the store would exceed ${maxBytes} bytes`);
      Deno.writeTextFileSync(`${grant.path}.tmp`, text);
      Deno.renameSync(`${grant.path}.tmp`, grant.path);
    };
    this.#engine.global.set("__homed_kv", (op: unknown, key: unknown, value: unknown) => {
      const name = String(key);
      if (name.length === 0 || name.length > 200) throw new Error("kv: a key is 1 to 200 characters");
      if (op === "get") return store[name];
      if (op === "delete") delete store[name];
      else store[name] = String(value);
      save();
      return undefined;
    });
    this.#engine.doStringSync(`
      local host_kv = __homed_kv
      __homed_kv = nil
      kv = {
        get = function(key) return host_kv("get", key) end,
        set = function(key, value) assert(type(value) == "string", "kv.set: the value must be a string") host_kv("set", key, value) end,
        delete = function(key) host_kv("delete", key) end,
      }
    `);
  }

  /** A global's value when it is a string, number or boolean (a setting the script declares); else `undefined`. */
  read(name: string): string | number | boolean | undefined {
    const value: unknown = this.#engine.global.get(name);
    return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? value : undefined;
  }

  /** True when the script defines a global function `name`. */
  has(name: string): boolean {
    return typeof this.#engine.global.get(name) === "function";
  }

  /**
   * Calls the script's global function `name` with string, number or boolean arguments; resolves to its first
   * result (a string, number, boolean or `undefined`). Serialised with other calls; under the limits.
   *
   * @example
   * ```ts
   * declare const vm: LuaVm;
   *
   * const request = { model: "qwen3:8b", messages: [{ role: "user", content: "hi" }] };
   * const built = await vm.call("build_request", JSON.stringify(request)); // the adapter's json.encode(...) text
   * ```
   */
  call(name: string, ...args: Array<string | number | boolean>): Promise<unknown> {
    const run = this.#queue.then(() => this.#run(name, "call", args));
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Memory the script's state holds now, in bytes. */
  get memoryUsed(): number {
    return this.#engine.global.getMemoryUsed();
  }

  async #run(
    code: string,
    mode: "chunk" | "call",
    args: ReadonlyArray<string | number | boolean> = [],
  ): Promise<unknown> {
    if (this.#closed) throw new RangeError(`The Lua VM of ${this.name} is closed`);
    const global = this.#engine.global;
    const lua = global.lua;
    const top = lua.lua_gettop(global.address);
    const thread = global.newThread();
    const main = thread.address;
    const started = performance.now();
    let slice = started;
    const timeLimit = `stopped after ${this.#limits.timeMs} ms (lua.time_limit)`;
    const run: Run = {
      deadline: started + this.#limits.timeMs,
      stopped: false,
      stop(state) {
        if (!run.stopped) {
          run.stopped = true;
          // From now on the hook fires on every instruction, so a script that catches the error with pcall meets it
          // again at once, outside its pcall soon enough.
          lua.lua_sethook(main, hook, COUNT_MASK, 1);
        }
        lua.lua_pushstring(state, timeLimit);
        lua.lua_error(state);
      },
    };
    const hook = lua.module.addFunction((state: number) => {
      const now = performance.now();
      if (now > run.deadline) {
        run.stop(state);
        return;
      }
      if (now - slice > SLICE_MS && state === main && lua.lua_isyieldable(state)) {
        slice = now;
        lua.lua_yield(state, 0);
      }
    }, "vii");
    // The C loops' step checks ask which call is running: the one whose thread is being resumed.
    const resume = thread.resume.bind(thread);
    thread.resume = (count?: number) => {
      const outer = running;
      running = run;
      try {
        return resume(count);
      } finally {
        running = outer;
      }
    };
    try {
      if (mode === "chunk") {
        try {
          thread.loadString(code, `=${this.name}`);
        } catch (error) {
          throw luaErrorFrom("syntax", this.name, (error as Error).message);
        }
      } else {
        if (lua.lua_getglobal(main, code) !== 6 /* LUA_TFUNCTION */) {
          throw new LuaError("runtime", this.name, undefined, `the script defines no function ${code}()`);
        }
        for (const arg of args) thread.pushValue(arg);
      }
      lua.lua_sethook(main, hook, COUNT_MASK, HOOK_COUNT);
      global.setMemoryMax(global.getMemoryUsed() + this.#limits.memoryBytes);
      try {
        const results = await thread.run(mode === "chunk" ? 0 : args.length);
        return results[0];
      } catch (error) {
        const message = (error as Error)?.message ?? String(error);
        if (run.stopped) throw new LuaError("time_limit", this.name, undefined, timeLimit);
        if (/not enough memory/.test(message)) {
          throw new LuaError(
            "memory_limit",
            this.name,
            undefined,
            `used more than ${this.#limits.memoryBytes} bytes (lua.memory_limit)`,
          );
        }
        if (/stack overflow/.test(message)) {
          throw luaErrorFrom("runtime", this.name, message.replace(/\n.*$/s, ""));
        }
        throw luaErrorFrom("runtime", this.name, message);
      } finally {
        global.setMemoryMax(undefined);
        lua.lua_sethook(main, null, 0, 0);
      }
    } finally {
      lua.module.removeFunction(hook);
      thread.close();
      // The thread was left on the main state's stack by newThread; dropping it lets the collector take it.
      lua.lua_settop(global.address, top);
      if (global.getMemoryUsed() > this.#limits.memoryBytes / 2) this.#collect();
    }
  }

  /** Frees the VM; later calls fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#engine.global.close();
  }
}
