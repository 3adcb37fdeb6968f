/** A Server-Sent Events client for tests: GET /v1/events over a socket, its blocks parsed as they come. */
/** One SSE block: its fields, or a comment. */
export interface SseItem {
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
}

/** An open event stream, parsed as it comes. */
export class SseClient {
  /** Every block so far, in order. */
  readonly items: SseItem[] = [];
  private buffered = "";
  /** The stream has ended (the server closed it, or it was aborted). */
  ended = false;
  private readonly reading: Promise<void>;
  private wake: (() => void) | null = null;

  constructor(
    readonly res: Response,
    private readonly abort: AbortController,
  ) {
    this.reading = this.read();
  }

  /** GET `url`/v1/events with `headers`. */
  static async open(url: string, headers: Record<string, string>): Promise<SseClient> {
    const abort = new AbortController();
    const res = await fetch(`${url}/v1/events`, { headers, signal: abort.signal });
    return new SseClient(res, abort);
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.res.body!) {
        this.buffered += decoder.decode(chunk, { stream: true });
        const blocks = this.buffered.split("\n\n");
        this.buffered = blocks.pop()!;
        for (const block of blocks) this.items.push(parseBlock(block));
        this.wake?.();
      }
    } catch {
      /* aborted */
    }
    this.ended = true;
    this.wake?.();
  }

  /** Waits until `pick` finds what it wants among the items so far (or throws after `ms`). */
  async until<T>(pick: (items: SseItem[]) => T | undefined, ms = 5000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = pick(this.items);
      if (found !== undefined) return found;
      if (this.ended) throw new Error(`the stream ended; items: ${JSON.stringify(this.items)}`);
      if (Date.now() >= deadline) throw new Error(`timed out; items: ${JSON.stringify(this.items)}`);
      await Promise.race([new Promise<void>((r) => (this.wake = r)), Bun.sleep(deadline - Date.now())]);
    }
  }

  /** The first `n` events (comments left out). */
  events(n: number, ms?: number): Promise<SseItem[]> {
    return this.until((items) => {
      const events = items.filter((i) => i.comment === undefined);
      return events.length >= n ? events.slice(0, n) : undefined;
    }, ms);
  }

  /** Resolves when the stream ends (the server closed it). */
  async done(): Promise<void> {
    await this.reading;
  }

  close(): void {
    this.abort.abort();
  }
}

function parseBlock(block: string): SseItem {
  const item: SseItem = {};
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) item.comment = line.slice(1).trim();
    else {
      const at = line.indexOf(": ");
      (item as Record<string, string>)[line.slice(0, at)] = line.slice(at + 2);
    }
  }
  return item;
}
