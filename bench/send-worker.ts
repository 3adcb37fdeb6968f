/** Load generator: POSTs sendTransaction requests with a fixed concurrency and reports timings. */
declare const self: Worker;

self.onmessage = async (e: MessageEvent<{ url: string; bodies: string[]; concurrency: number }>) => {
  const { url, bodies, concurrency } = e.data;
  const statuses: Record<string, number> = {};
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
      const j = (await r.json()) as { result?: { status: string }; error?: { message: string } };
      const s = j.result?.status ?? `rpc-error`;
      statuses[s] = (statuses[s] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  postMessage({ ms: performance.now() - t0, statuses });
};
