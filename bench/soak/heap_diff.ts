/**
 * What grew in homed's JS heap between two moments of a soak: connects to the V8 inspector of a homed started with
 * `deno task bench:soak --inspect PORT`, forces a full GC and takes a heap snapshot, waits, takes another, and prints
 * the object groups (by constructor or kind) whose live count and size grew the most. A leak shows as a group that
 * keeps growing; data the household adds (exchanges kept in memory) shows as the stores that hold it.
 *
 * Run (beside a soak): deno run --allow-net=127.0.0.1 bench/soak/heap_diff.ts --port 9229 --wait 300
 * [--save DIR] (with --allow-write=DIR: both snapshots as DIR/before.heapsnapshot and DIR/after.heapsnapshot, for
 * reading who retains a group that grew in Chrome's DevTools).
 *
 * @module
 */

function option(name: string, fallback: string): string {
  const at = Deno.args.indexOf(`--${name}`);
  return at >= 0 ? Deno.args[at + 1]! : fallback;
}

const PORT = option("port", "9229");
const WAIT_S = Number(option("wait", "300"));
const TOP = Number(option("top", "25"));
const SAVE = option("save", "");

/** A connection to the inspector speaking the DevTools protocol. */
class Inspector {
  #socket: WebSocket;
  #id = 0;
  #waiting = new Map<number, (result: unknown) => void>();
  #chunks: string[] = [];

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data as string);
      if (message.method === "HeapProfiler.addHeapSnapshotChunk") this.#chunks.push(message.params.chunk);
      else if (message.id !== undefined) this.#waiting.get(message.id)?.(message.result ?? message.error);
    };
  }

  static async connect(port: string): Promise<Inspector> {
    const [target] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    const socket = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    return new Inspector(socket);
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = ++this.#id;
    this.#socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve) => this.#waiting.set(id, resolve));
  }

  async snapshot(name: string): Promise<Map<string, { count: number; size: number }>> {
    await this.call("HeapProfiler.collectGarbage");
    this.#chunks = [];
    await this.call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    const text = this.#chunks.join("");
    if (SAVE) await Deno.writeTextFile(`${SAVE}/${name}.heapsnapshot`, text);
    return groups(JSON.parse(text));
  }

  close(): void {
    this.#socket.close();
  }
}

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** Live objects grouped by kind and constructor name: how many and their own bytes. */
function groups(heap: HeapSnapshot): Map<string, { count: number; size: number }> {
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((field) => fields.indexOf(field));
  const out = new Map<string, { count: number; size: number }>();
  for (let at = 0; at < heap.nodes.length; at += fields.length) {
    const type = types[heap.nodes[at + typeAt!]!]!;
    const name = type === "string" || type === "concatenated string" || type === "sliced string"
      ? "(string)"
      : heap.strings[heap.nodes[at + nameAt!]!]!.slice(0, 60);
    const key = `${type}: ${name}`;
    const group = out.get(key) ?? { count: 0, size: 0 };
    group.count++;
    group.size += heap.nodes[at + sizeAt!]!;
    out.set(key, group);
  }
  return out;
}

const inspector = await Inspector.connect(PORT);
await inspector.call("HeapProfiler.enable");
const before = await inspector.snapshot("before");
console.log(`first snapshot taken; the next in ${WAIT_S} s`);
await new Promise((resolve) => setTimeout(resolve, WAIT_S * 1000));
const after = await inspector.snapshot("after");
inspector.close();

const total = (map: Map<string, { size: number }>) => [...map.values()].reduce((sum, group) => sum + group.size, 0);
console.log(`live heap after GC: ${(total(before) / 1e6).toFixed(2)} MB → ${(total(after) / 1e6).toFixed(2)} MB`);
const grown = [...after].map(([key, group]) => {
  const old = before.get(key) ?? { count: 0, size: 0 };
  return { group: key, count: group.count - old.count, bytes: group.size - old.size, now: group.size };
}).sort((a, b) => b.bytes - a.bytes).slice(0, TOP);
console.table(grown);
