/**
 * PKCS#11 URIs (RFC 7512), the part the relay reads: the token's label (`token=`), a key's label
 * (`object=`) or id (`id=`) in its path; the module to load (`module-path=`) and the PIN
 * (`pin-source=file:/abs/path` or `pin-value=`) in its query. Percent-encoding is decoded
 * everywhere. A URI's description never holds its PIN.
 */

export interface Pkcs11Uri {
  /** The token's label (CKA_LABEL of its token info). */
  token: string;
  /** A key's label (CKA_LABEL), when the URI names one. */
  object?: string;
  /** A key's id (CKA_ID), when the URI names one. */
  id?: Buffer;
  /** The PKCS#11 module (a shared library) to load. */
  modulePath: string;
  /** Where the PIN comes from: a file (its one trailing newline ignored) or the URI itself. */
  pin: { file: string } | { value: string };
}

/** A PKCS#11 URI's fault, in words naming the setting (never its PIN). */
export class Pkcs11UriError extends Error {}

const fail = (setting: string, what: string) =>
  new Pkcs11UriError(
    `${setting} is not a usable PKCS#11 URI: ${what} (expected ` +
      "pkcs11:token=<label>;object=<label>?module-path=/path/to/module.so&pin-source=file:/path/to/pin)",
  );

function decode(setting: string, part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw fail(setting, `"${part.split("=")[0]}" has a malformed percent-encoding`);
  }
}

/** Parses `uri` (the value of `setting`); `needs`: what its path must name besides the token. */
export function parsePkcs11Uri(setting: string, uri: string, needs: "object" | "token"): Pkcs11Uri {
  if (!uri.startsWith("pkcs11:")) throw fail(setting, 'it does not start with "pkcs11:"');
  const [path = "", query = ""] = uri.slice("pkcs11:".length).split("?", 2);
  const attrs = new Map<string, string>();
  for (const part of path.split(";").filter(Boolean)) {
    const eq = part.indexOf("=");
    if (eq < 1) throw fail(setting, `"${part}" in its path is not name=value`);
    attrs.set(part.slice(0, eq), decode(setting, part.slice(eq + 1)));
  }
  const params = new Map<string, string>();
  for (const part of query.split("&").filter(Boolean)) {
    const eq = part.indexOf("=");
    if (eq < 1) throw fail(setting, `a query part is not name=value`);
    params.set(part.slice(0, eq), decode(setting, part.slice(eq + 1)));
  }
  const token = attrs.get("token");
  if (!token) throw fail(setting, "it names no token (token=<label>)");
  const modulePath = params.get("module-path");
  if (!modulePath) throw fail(setting, "it names no module (?module-path=/path/to/module.so)");
  const source = params.get("pin-source");
  const value = params.get("pin-value");
  if ((source === undefined) === (value === undefined))
    throw fail(setting, "it needs exactly one of pin-source=file:/path and pin-value=");
  if (source !== undefined && !source.startsWith("file:"))
    throw fail(setting, "pin-source must be file:/absolute/path");
  const file = source?.slice("file:".length).replace(/^\/\/(localhost)?(?=\/)/, "");
  if (file !== undefined && !file.startsWith("/")) throw fail(setting, "pin-source must be an absolute path");
  const object = attrs.get("object");
  const idText = attrs.get("id");
  if (needs === "object" && !object) throw fail(setting, "it names no key (object=<label>)");
  return {
    token,
    ...(object ? { object } : {}),
    ...(idText ? { id: Buffer.from(idText, "latin1") } : {}),
    modulePath,
    pin: file !== undefined ? { file } : { value: value! },
  };
}

/** How a URI is shown (start line, health, errors): its token and key, never its PIN. */
export const describeUri = (u: Pkcs11Uri): string => `pkcs11 token "${u.token}"${u.object ? ` key "${u.object}"` : ""}`;
