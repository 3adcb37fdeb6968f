/** Who is calling: the scope of idempotency keys and (later) rate limits. Anonymous callers are keyed by client IP. */
export function clientIp(request: Request, server: { requestIP(r: Request): { address: string } | null } | null, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get("x-forwarded-for")?.split(",")[0]?.trim();
    if (forwarded) return forwarded;
  }
  return server?.requestIP(request)?.address ?? "unknown";
}
