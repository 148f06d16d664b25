/// <reference lib="deno.unstable" />
/**
 * A stand-in for systemd's notify socket, for the sd_notify test: binds a unix datagram socket at the path given and
 * prints each datagram it receives as one JSON line. Run with `--unstable-net --allow-net=unix:<path>`.
 */

const path = Deno.args[0]!;
const conn = Deno.listenDatagram({ transport: "unixpacket", path });
console.log(JSON.stringify({ listening: path }));
for await (const [data] of conn) console.log(JSON.stringify({ received: new TextDecoder().decode(data) }));
