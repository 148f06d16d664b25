/**
 * A serial port's far end for tests: a pseudo-terminal pair made by socat (Debian package, installed by `.ci/run`),
 * its device end linked at a path homed opens as the port, its other end this process's pipes.
 *
 * @module
 */

import { waitFor } from "./wait.ts";

/**
 * The far end of a pseudo-terminal: socat makes the pty (its slave end linked at `path`, which the device opens) and
 * bridges it to this process's pipes, so what the test writes comes out of the port and what the device writes
 * comes back here. Killing it is the far end going away: socat removes the link and the pty hangs up.
 */
export class FarEnd {
  readonly path: string;
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #reading: Promise<void>;
  #received = "";

  private constructor(path: string, child: Deno.ChildProcess) {
    this.path = path;
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stdout) this.#received += decoder.decode(chunk, { stream: true });
    })();
  }

  /**
   * Starts socat with the pty's device end linked at `path`.
   *
   * @example
   * ```ts
   * const far = await FarEnd.start("/tmp/homed-serial/port");
   * await far.write("temp=21.5\n");
   * await far.close();
   * ```
   */
  static async start(path: string): Promise<FarEnd> {
    const child = new Deno.Command("socat", {
      args: [`pty,raw,echo=0,link=${path}`, "STDIO"],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const far = new FarEnd(path, child);
    await waitFor(() => Deno.lstat(path).then(() => true, () => false), `socat to make ${path}`);
    return far;
  }

  /** What the device wrote so far. */
  get received(): string {
    return this.#received;
  }

  write(data: string | Uint8Array): Promise<void> {
    return this.#writer.write(typeof data === "string" ? new TextEncoder().encode(data) : data);
  }

  async close(): Promise<void> {
    try {
      this.#child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    await this.#writer.close().catch(() => {});
    await this.#child.status;
    await this.#reading;
  }
}
