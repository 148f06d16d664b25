/**
 * A tiny DNS server on loopback for tests: it answers A queries for the names it was given, an empty answer for any
 * other type of a known name (so AAAA lookups end at once), and NXDOMAIN for everything else — nothing is ever passed
 * on to a real resolver. It speaks only what a stub resolver sends: one question per UDP datagram.
 *
 * `node:dgram` because `Deno.listenDatagram` needs `--unstable-net`, which the test task does not pass.
 *
 * @module
 */

import dgram from "node:dgram";

/** A question the server was asked: the name (lower case) and the record type (`A`, `AAAA` or the number). */
export interface DnsQuestion {
  name: string;
  type: string;
}

const TYPES: Record<number, string> = { 1: "A", 28: "AAAA" };

/** The question of a query: the name's labels and where the question (name, type, class) ends. */
function readQuestion(query: Uint8Array): { name: string; type: number; end: number } | undefined {
  if (query.length < 12 || ((query[4]! << 8) | query[5]!) !== 1) return undefined;
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    const length = query[offset];
    if (length === undefined || length > 63) return undefined; // compression never starts a question
    offset++;
    if (length === 0) break;
    labels.push(new TextDecoder().decode(query.subarray(offset, offset + length)));
    offset += length;
  }
  if (offset + 4 > query.length) return undefined;
  return { name: labels.join(".").toLowerCase(), type: (query[offset]! << 8) | query[offset + 1]!, end: offset + 4 };
}

/**
 * The response to `query`: its id and question, flags for a recursive answer, and an A record for `address` when
 * there is one (`rcode` 3 is NXDOMAIN).
 */
function answer(query: Uint8Array, questionEnd: number, address: string | undefined, rcode: number): Uint8Array {
  const header = Uint8Array.from([
    query[0]!,
    query[1]!,
    0x80 | (query[2]! & 0x79), // QR, the query's opcode and RD
    0x80 | rcode, // RA
    0,
    1,
    0,
    address ? 1 : 0,
    0,
    0,
    0,
    0,
  ]);
  const question = query.subarray(12, questionEnd);
  const record = address
    ? Uint8Array.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...address.split(".").map(Number)])
    : new Uint8Array();
  const response = new Uint8Array(header.length + question.length + record.length);
  response.set(header);
  response.set(question, header.length);
  response.set(record, header.length + question.length);
  return response;
}

/** A running fake DNS server. */
export class FakeDns {
  /** Every question asked, in order. */
  readonly questions: DnsQuestion[] = [];
  #socket: dgram.Socket;

  private constructor(socket: dgram.Socket) {
    this.#socket = socket;
  }

  /**
   * Starts answering on `hostname:port` (UDP); `records` maps a name to its IPv4 address.
   *
   * @example
   * ```ts
   * const dns = await FakeDns.start({ "media.qq.example": "127.0.0.1" }, { hostname: "127.0.0.1", port: 5353 });
   * await Deno.resolveDns("media.qq.example", "A", { nameServer: { ipAddr: "127.0.0.1", port: 5353 } });
   * // ["127.0.0.1"]
   * await dns.close();
   * ```
   */
  static start(records: Record<string, string>, at: { hostname: string; port: number }): Promise<FakeDns> {
    const known = new Map(Object.entries(records).map(([name, address]) => [name.toLowerCase(), address]));
    const socket = dgram.createSocket("udp4");
    const dns = new FakeDns(socket);
    socket.on("message", (query: Uint8Array, peer: dgram.RemoteInfo) => {
      const question = readQuestion(query);
      if (!question) return;
      dns.questions.push({ name: question.name, type: TYPES[question.type] ?? String(question.type) });
      const address = question.type === 1 ? known.get(question.name) : undefined;
      socket.send(answer(query, question.end, address, known.has(question.name) ? 0 : 3), peer.port, peer.address);
    });
    return new Promise((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(at.port, at.hostname, () => {
        socket.off("error", reject);
        resolve(dns);
      });
    });
  }

  /** Stops answering. */
  close(): Promise<void> {
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }
}
