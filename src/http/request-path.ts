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

/** What a path needs for canonicalPath to change it: an escape, a capital, `//`, `/.` or a trailing `/`. */
const ODD_SPELLING = /[%A-Z]|\/\/|\/\.|.\/$/;

/**
 * A path as a router that forgives its spelling could read it: percent-escapes decoded, letters in
 * lower case, doubled slashes one, dot segments resolved, no trailing slash. What the auth plugin
 * decides by (which routes need a key, and which scope), so that no spelling of a route the router
 * still matches (`/v1/sponsor/`, `//v1/Sponsor`, `/v1/%73ponsor/.`) is read as another path.
 */
export function canonicalPath(path: string): string {
  if (!ODD_SPELLING.test(path)) return path; // the usual case, as sent
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    /* a malformed escape: kept as sent */
  }
  const out: string[] = [];
  for (const segment of decoded.toLowerCase().split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") out.pop();
    else out.push(segment);
  }
  return `/${out.join("/")}`;
}
