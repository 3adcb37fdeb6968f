/**
 * The image's HEALTHCHECK: exits 0 when the relay in this container is ready to sponsor
 * (GET /health/ready on PORT answers 200), else 1. The image has no curl; Bun's fetch does it.
 */
const port = process.env.PORT ?? "3000";
const ready = await fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(2500) })
  .then((r) => r.ok)
  .catch(() => false);
process.exit(ready ? 0 : 1);
export {};
