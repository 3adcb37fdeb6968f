/**
 * Load generator in its own thread: POSTs JSON bodies with a fixed concurrency and reports the
 * elapsed time, a count per outcome (the JSON-RPC result status, or the HTTP status) and when each
 * response arrived (epoch ms).
 */
declare const self: Worker;

export interface SendJob {
  url: string;
  bodies: string[];
  concurrency: number;
  outcome: "rpc-status" | "http-status";
  headers?: Record<string, string>;
}
export interface SendReport {
  ms: number;
  statuses: Record<string, number>;
  doneAt: number[];
}

self.onmessage = async (e: MessageEvent<SendJob>) => {
  const { url, bodies, concurrency, outcome, headers = {} } = e.data;
  const statuses: Record<string, number> = {};
  const doneAt: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
      const j = (await r.json()) as { result?: { status: string } };
      const s = outcome === "http-status" ? String(r.status) : (j.result?.status ?? "rpc-error");
      statuses[s] = (statuses[s] ?? 0) + 1;
      doneAt.push(performance.timeOrigin + performance.now());
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  postMessage({ ms: performance.now() - t0, statuses, doneAt } satisfies SendReport);
};
