import assert from "node:assert/strict";
import { ArchiveError, readTar, readTarMembers, TAR_END, tarBlocks, type TarEntry } from "./tar.ts";

function stream(parts: Uint8Array[], chunk = 100): ReadableStream<Uint8Array> {
  const whole = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) whole.set(part, (offset += part.length) - part.length);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      // Odd-sized chunks: the reader must not rely on block-aligned reads.
      if (at >= whole.length) return controller.close();
      controller.enqueue(whole.slice(at, at += chunk));
    },
  });
}

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("tar: files, folders and a 150-byte path (pax) come back as written, across odd chunk sizes", async () => {
  const long = `knowledge/${"深".repeat(30)}/${"a".repeat(50)}.md`;
  const entries: TarEntry[] = [
    { path: "data", type: "dir", mode: 0o755, mtime: 1_700_000_000, data: new Uint8Array() },
    { path: "data/routes.json", type: "file", mode: 0o600, mtime: 1_700_000_001, data: bytes('{"a":1}') },
    { path: long, type: "file", mode: 0o644, mtime: 1_700_000_002, data: new Uint8Array(1025).fill(7) },
  ];
  const read: TarEntry[] = [];
  for await (const entry of readTar(stream([...entries.flatMap(tarBlocks), TAR_END], 333))) read.push(entry);
  assert.deepEqual(read, entries);
});

Deno.test("tar: a truncated archive, a bad header checksum and a symlink member are refused by name", async () => {
  const file = tarBlocks({ path: "a.txt", type: "file", mode: 0o644, mtime: 0, data: bytes("hello") });
  const drain = async (parts: Uint8Array[]) => {
    for await (const _ of readTar(stream(parts))) { /* read all */ }
  };
  await assert.rejects(
    drain(file),
    (error) => error instanceof ArchiveError && /ends early.*truncated/.test(error.message),
  );
  await assert.rejects(
    drain([file[0]!.slice(0, 300)]),
    (error) => error instanceof ArchiveError && /ends early/.test(error.message),
  );
  const damaged = file[0]!.slice();
  damaged[0] = "b".charCodeAt(0);
  await assert.rejects(
    drain([damaged, ...file.slice(1), TAR_END]),
    (error) => error instanceof ArchiveError && /bad tar header checksum at "b\.txt"/.test(error.message),
  );
  const link = file[0]!.slice();
  link[156] = "2".charCodeAt(0);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : link[i]!;
  link.set(bytes(sum.toString(8).padStart(6, "0") + "\0 "), 148);
  await assert.rejects(
    drain([link, ...file.slice(1), TAR_END]),
    (error) => error instanceof ArchiveError && /"a\.txt" is not a file or folder \(tar type "2"\)/.test(error.message),
  );
});

Deno.test("tar: a member that claims more than 512 MiB is refused before anything is read into memory", async () => {
  const [header] = tarBlocks({ path: "big.bin", type: "file", mode: 0o644, mtime: 0, data: new Uint8Array(1) });
  const huge = header!.slice();
  huge.set(new TextEncoder().encode("77777777777\0"), 124); // 8 GiB - 1
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : huge[i]!;
  huge.set(new TextEncoder().encode(sum.toString(8).padStart(6, "0") + "\0 "), 148);
  await assert.rejects(
    (async () => {
      for await (const _ of readTar(stream([huge, TAR_END]))) { /* read all */ }
    })(),
    (error) =>
      error instanceof ArchiveError && /"big\.bin" says it holds 8589934591 bytes; members above/.test(error.message),
  );
});

Deno.test("tar: members stream in chunks of at most 64 KiB; a pax path may hold a line break; names must be UTF-8", async () => {
  // Cut at 100 bytes, the header's name ends inside a character: only the pax path counts.
  const long = `knowledge/${"a".repeat(1)}${"深".repeat(40)}\nb.md`;
  const entries: TarEntry[] = [
    { path: long, type: "file", mode: 0o644, mtime: 0, data: new Uint8Array(300_000).fill(1) },
    { path: "short\nname", type: "file", mode: 0o644, mtime: 0, data: bytes("x") },
  ];
  const seen: Array<[string, number, number]> = [];
  for await (const member of readTarMembers(stream([...entries.flatMap(tarBlocks), TAR_END], 1 << 20))) {
    let largest = 0;
    let total = 0;
    for await (const chunk of member.chunks()) {
      largest = Math.max(largest, chunk.length);
      total += chunk.length;
    }
    seen.push([member.path, total, largest]);
  }
  assert.deepEqual(seen, [[long, 300_000, 64 * 1024], ["short\nname", 1, 1]]);

  const [header] = tarBlocks({ path: "bad-.md", type: "file", mode: 0o644, mtime: 0, data: new Uint8Array() });
  const block = header!.slice();
  block[3] = 0xff; // "bad\xff.md"
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : block[i]!;
  block.set(bytes(sum.toString(8).padStart(6, "0") + "\0 "), 148);
  await assert.rejects(
    (async () => {
      for await (const _ of readTarMembers(stream([block, TAR_END]))) { /* read all */ }
    })(),
    (error) => error instanceof ArchiveError && error.message === 'member name "bad\uFFFD.md" is not valid UTF-8',
  );
});

Deno.test("tar: after the end marker only zeros may follow, and the stream is read to its end", async () => {
  const file = tarBlocks({ path: "a.txt", type: "file", mode: 0o644, mtime: 0, data: bytes("hello") });
  const drain = async (parts: Uint8Array[]) => {
    for await (const _ of readTarMembers(stream(parts))) { /* read all */ }
  };
  await drain([...file, TAR_END, new Uint8Array(10_240)]); // GNU tar's padding to its record size
  await assert.rejects(
    drain([...file, TAR_END, bytes("more")]),
    (error) => error instanceof ArchiveError && error.message === "the archive goes on after its end marker",
  );
  let pulledToEnd = false;
  const whole = new Uint8Array([...file, TAR_END].flatMap((part) => [...part]));
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(whole);
    },
    pull(controller) {
      pulledToEnd = true;
      controller.close();
    },
  });
  for await (const _ of readTarMembers(source)) { /* read all */ }
  assert.ok(pulledToEnd, "the reader asked for the end of the stream");
});
