/**
 * The path and query of a request's URL, read by slicing: Bun's `request.url` is absolute and
 * already normalized (dot segments resolved), so this equals `new URL(url).pathname` (plus the
 * query) without parsing a URL on every request. Without a usable Host header (none, empty, or one
 * holding `/`, `?`, `#` or `@`) Bun's `request.url` is the path alone: it is taken as it is (read as
 * a URL, its first segment would pass for a host, and `/v1/admin/x` for `/admin/x`).
 */
export const pathAndQuery = (url: string): string => {
  if (url.startsWith("/")) return url;
  const slash = url.indexOf("/", url.indexOf("//") + 2);
  return slash < 0 ? "/" : url.slice(slash);
};

/** The path of a request's URL, without its query. */
export function requestPath(url: string): string {
  const rest = pathAndQuery(url);
  const q = rest.indexOf("?");
  return q < 0 ? rest : rest.slice(0, q);
}
