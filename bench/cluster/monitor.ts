/**
 * Redis round trips, counted through MONITOR on a connection of its own. INFO's
 * total_commands_processed also counts the commands a Lua script runs inside Redis (a lease claim is
 * one EVAL round trip but two or three commands), so it is not the number of round trips. MONITOR
 * shows each command once, with its source: a client's address, or "lua" for a script's. Only lines
 * naming the cluster's key prefix are counted (every command of the relay names a key under it, or
 * its notice channel), so the commands of anyone else on that Redis are not.
 *
 * The lines are counted as they arrive (a few milliseconds after the commands); MONITOR costs the
 * Redis server a little CPU per command, which the private Redis's CPU figures include.
 */
import type { Socket } from "bun";

export class RoundTrips {
  /** Commands naming `prefix`: sent by clients (round trips), and run by scripts. */
  client = 0;
  script = 0;
  /** The key prefix counted (the running cluster's). */
  prefix = "\0";
  private rest = "";
  private readonly decoder = new TextDecoder();

  private constructor(private readonly socket: Socket<undefined>) {}

  static async open(url: string): Promise<RoundTrips> {
    const u = new URL(url);
    let self: RoundTrips | null = null;
    let ok: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      ok = resolve;
    });
    const socket = await Bun.connect({
      hostname: u.hostname,
      port: Number(u.port || 6379),
      socket: {
        data: (_s, chunk) => self?.onData(chunk, ok),
        error: () => {},
      },
    });
    self = new RoundTrips(socket);
    socket.write("MONITOR\r\n");
    await Promise.race([
      started,
      Bun.sleep(5000).then(() => {
        throw new Error("Redis did not start MONITOR within 5 s");
      }),
    ]);
    return self;
  }

  private onData(chunk: Uint8Array, started: () => void): void {
    this.rest += this.decoder.decode(chunk, { stream: true });
    let at = 0;
    for (let nl = this.rest.indexOf("\n"); nl >= 0; nl = this.rest.indexOf("\n", at)) {
      const line = this.rest.slice(at, nl);
      at = nl + 1;
      if (line.startsWith("+OK")) started();
      if (!line.includes(this.prefix)) continue;
      // "+<time> [<db> <source>] "<command>" …": the source is an address, or "lua"
      const end = line.indexOf("]");
      if (line.slice(end - 4, end) === " lua") this.script++;
      else this.client++;
    }
    this.rest = this.rest.slice(at);
  }

  close(): void {
    this.socket.end();
  }
}
