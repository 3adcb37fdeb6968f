/**
 * The path and query of a request's URL, read by slicing: Bun's `request.url` is absolute and
 * already normalized (dot segments resolved), so this equals `new URL(url).pathname` (plus the
 * query) without parsing a URL on every request.
 */
export const pathAndQuery = (url: string): string => url.slice(url.indexOf("/", url.indexOf("//") + 2));

/** The path of a request's URL, without its query. */
export function requestPath(url: string): string {
  const rest = pathAndQuery(url);
  const q = rest.indexOf("?");
  return q < 0 ? rest : rest.slice(0, q);
}
