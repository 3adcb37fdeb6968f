/**
 * The client IP of a request: anonymous callers' rate limits and idempotency scope are keyed by
 * it. With TRUST_PROXY, the address the (one) trusted proxy saw: the last X-Forwarded-For entry
 * (the leftmost entries are whatever the client sent).
 */
export function clientIp(
  request: Request,
  server: { requestIP(r: Request): { address: string } | null } | null,
  trustProxy: boolean,
): string {
  if (trustProxy) {
    const forwarded = request.headers.get("x-forwarded-for")?.split(",").at(-1)?.trim();
    if (forwarded) return forwarded;
  }
  return server?.requestIP(request)?.address ?? "unknown";
}
