/**
 * A PKCS#11 token the relay signs with (an HSM, a cloud HSM's PKCS#11 library, SoftHSM2): its
 * module loaded once per process (through pkcs11js, a Node-API binding built at install), one
 * logged-in session, and its Ed25519 keys (CKK_EC_EDWARDS) found by label or id, or generated in it
 * (never extractable). Signatures are CKM_EDDSA over the bytes given (a transaction's hash), which
 * are valid Stellar signatures. A failed signature reopens the session, logs in again and is tried
 * once more; a second failure is 503 naming the token. Nothing here prints a PIN.
 */
import { readFileSync } from "node:fs";
import { unavailable } from "../errors.ts";
import { describeUri, type Pkcs11Uri } from "./uri.ts";

/** The part of pkcs11js the relay calls (typed here: the binding is an optional dependency). */
interface Binding {
  load(path: string): void;
  C_Initialize(): void;
  C_GetSlotList(tokenPresent: boolean): Buffer[];
  C_GetTokenInfo(slot: Buffer): { label: string };
  C_OpenSession(slot: Buffer, flags: number): Buffer;
  C_CloseSession(session: Buffer): void;
  C_Login(session: Buffer, userType: number, pin: string): void;
  C_FindObjectsInit(session: Buffer, template: Attribute[]): void;
  C_FindObjects(session: Buffer, max: number): Buffer[];
  C_FindObjectsFinal(session: Buffer): void;
  C_GetAttributeValue(session: Buffer, object: Buffer, template: Attribute[]): Attribute[];
  C_GenerateKeyPair(
    session: Buffer,
    mechanism: { mechanism: number },
    publicTemplate: Attribute[],
    privateTemplate: Attribute[],
  ): { publicKey: Buffer; privateKey: Buffer };
  C_SignInit(session: Buffer, mechanism: { mechanism: number }, key: Buffer): void;
  C_Sign(session: Buffer, data: Buffer, out: Buffer): Buffer;
}
interface Attribute {
  type: number;
  value?: number | boolean | string | Buffer;
}

// PKCS#11 v3 constants (pkcs11t.h)
const CKF_RW_SESSION = 0x2;
const CKF_SERIAL_SESSION = 0x4;
const CKU_USER = 1;
const CKA_CLASS = 0x0;
const CKA_TOKEN = 0x1;
const CKA_PRIVATE = 0x2;
const CKA_LABEL = 0x3;
const CKA_KEY_TYPE = 0x100;
const CKA_ID = 0x102;
const CKA_SENSITIVE = 0x103;
const CKA_SIGN = 0x108;
const CKA_VERIFY = 0x10a;
const CKA_EXTRACTABLE = 0x162;
const CKA_EC_PARAMS = 0x180;
const CKA_EC_POINT = 0x181;
const CKO_PUBLIC_KEY = 2;
const CKO_PRIVATE_KEY = 3;
const CKK_EC_EDWARDS = 0x40;
const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;
const CKM_EDDSA = 0x1057;
/** DER of the Ed25519 curve's OID (1.3.101.112), CKA_EC_PARAMS of a key generated here. */
const ED25519_OID = Buffer.from("06032b6570", "hex");

/** A start-time fault of a token: what it names is safe to print (never the PIN). */
export class Pkcs11Error extends Error {
  constructor(
    message: string,
    readonly kind: "binding" | "module" | "token" | "pin" | "object",
  ) {
    super(message);
  }
}

/** A key pair in the token: its id, label, Ed25519 public key (32 bytes) and private key's handle. */
export interface TokenKey {
  id: Buffer;
  label: string;
  publicKey: Buffer;
  handle: Buffer;
  /** The session its handle was found in (a reopened session finds it again before it signs). */
  session: number;
}

const modules = new Map<string, Binding>();

/** The module at `path`, loaded and initialized once per process. */
async function moduleAt(path: string): Promise<Binding> {
  const known = modules.get(path);
  if (known) return known;
  let PKCS11: new () => Binding;
  try {
    ({ PKCS11 } = (await import("pkcs11js")) as unknown as { PKCS11: new () => Binding });
  } catch {
    throw new Pkcs11Error(
      "PKCS#11 signing needs the pkcs11js binding, which was not built at install: install a C++ compiler, " +
        "make and python3, then run `npm_config_nodedir=/usr bun install` (docs/operations.md, keys in an HSM)",
      "binding",
    );
  }
  const p = new PKCS11();
  try {
    p.load(path);
    p.C_Initialize();
  } catch (e) {
    throw new Pkcs11Error(`cannot load the PKCS#11 module ${path}: ${codeOf(e)}`, "module");
  }
  modules.set(path, p);
  return p;
}

/** A PKCS#11 error's code name (CKR_...), or its message. */
const codeOf = (e: unknown): string => (e instanceof Error ? e.message.split(/[:\s]/)[0]! || e.message : String(e));

export class Pkcs11Token {
  private session: Buffer;
  /** Sessions opened so far: a key's handle from an earlier one is found again. */
  private sessions = 1;
  private readonly keys = new Map<string, TokenKey>();

  private constructor(
    private readonly p: Binding,
    private readonly slot: Buffer,
    private readonly uri: Pkcs11Uri,
  ) {
    this.session = this.login();
  }

  /** Loads the module, finds the token by label and logs in: a fault is a Pkcs11Error naming it. */
  static async open(uri: Pkcs11Uri): Promise<Pkcs11Token> {
    const p = await moduleAt(uri.modulePath);
    const slot = p.C_GetSlotList(true).find((s) => p.C_GetTokenInfo(s).label.trimEnd() === uri.token);
    if (!slot) throw new Pkcs11Error(`no PKCS#11 token labelled "${uri.token}" in ${uri.modulePath}`, "token");
    return new Pkcs11Token(p, slot, uri);
  }

  /** The token's label. */
  get label(): string {
    return this.uri.token;
  }

  /** How it is shown: `pkcs11 token "<label>"`. */
  get description(): string {
    return describeUri({ ...this.uri, object: undefined });
  }

  /** The key pair labelled `label` (its private and public key objects): a Pkcs11Error if it is not there. */
  key(label: string): TokenKey {
    const found = this.find(CKA_LABEL, label);
    if (!found)
      throw new Pkcs11Error(`the PKCS#11 token "${this.label}" has no Ed25519 key labelled "${label}"`, "object");
    return found;
  }

  /** The key pair whose CKA_ID is `id`, or null. */
  keyById(id: Buffer): TokenKey | null {
    return this.find(CKA_ID, id);
  }

  /**
   * Generates an Ed25519 key pair in the token: token objects, the private half sensitive and not
   * extractable, both halves with the label and the id given.
   */
  generate(label: string, id: Buffer): TokenKey {
    const both = [
      { type: CKA_TOKEN, value: true },
      { type: CKA_LABEL, value: label },
      { type: CKA_ID, value: id },
    ];
    const { privateKey } = this.p.C_GenerateKeyPair(
      this.session,
      { mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN },
      [...both, { type: CKA_EC_PARAMS, value: ED25519_OID }, { type: CKA_VERIFY, value: true }],
      [
        ...both,
        { type: CKA_PRIVATE, value: true },
        { type: CKA_SENSITIVE, value: true },
        { type: CKA_EXTRACTABLE, value: false },
        { type: CKA_SIGN, value: true },
      ],
    );
    const key = { id, label, publicKey: this.publicKeyOf(CKA_ID, id), handle: privateKey, session: this.sessions };
    this.keys.set(id.toString("hex"), key);
    return key;
  }

  /** Signs `data` with `key` (CKM_EDDSA); after a failure, once more on a new session; then 503. */
  sign(key: TokenKey, data: Buffer): Buffer {
    try {
      if (key.session !== this.sessions) this.refind(key);
      return this.signOnce(key, data);
    } catch {
      try {
        this.reopen();
        this.refind(key);
        return this.signOnce(key, data);
      } catch (e) {
        throw unavailable(
          `the relay's signer (${this.description}) could not sign: ${codeOf(e)}; nothing was sent`,
          { reason: "signer_unavailable", signer: this.description },
          5,
        );
      }
    }
  }

  /** What the private key of `key` says of itself (CKA_SENSITIVE, CKA_EXTRACTABLE, CKA_TOKEN). */
  protections(key: TokenKey): { sensitive: boolean; extractable: boolean; token: boolean } {
    const [s, x, t] = this.p.C_GetAttributeValue(this.session, key.handle, [
      { type: CKA_SENSITIVE },
      { type: CKA_EXTRACTABLE },
      { type: CKA_TOKEN },
    ]);
    const yes = (a?: Attribute) => Buffer.isBuffer(a?.value) && a.value[0] === 1;
    return { sensitive: yes(s), extractable: yes(x), token: yes(t) };
  }

  private signOnce(key: TokenKey, data: Buffer): Buffer {
    this.p.C_SignInit(this.session, { mechanism: CKM_EDDSA }, key.handle);
    return Buffer.from(this.p.C_Sign(this.session, data, Buffer.alloc(64)));
  }

  /** Opens a read-write session and logs in as the user: a wrong PIN is a Pkcs11Error saying PIN. */
  private login(): Buffer {
    const session = this.p.C_OpenSession(this.slot, CKF_SERIAL_SESSION | CKF_RW_SESSION);
    try {
      this.p.C_Login(session, CKU_USER, this.pin());
    } catch (e) {
      const code = codeOf(e);
      if (code === "CKR_USER_ALREADY_LOGGED_IN") return session;
      this.p.C_CloseSession(session);
      if (e instanceof Pkcs11Error) throw e;
      if (code.startsWith("CKR_PIN"))
        throw new Pkcs11Error(`the PIN of PKCS#11 token "${this.label}" was refused (${code})`, "pin");
      throw new Pkcs11Error(`cannot log in to PKCS#11 token "${this.label}": ${code}`, "token");
    }
    return session;
  }

  /** The key's handle in the current session. */
  private refind(key: TokenKey): void {
    const again = this.find(CKA_ID, key.id);
    if (!again) throw new Error(`CKR_KEY_HANDLE_INVALID (the key "${key.label}" is not in the token)`);
    key.handle = again.handle;
    key.session = this.sessions;
  }

  /** A new session, logged in (the PIN read again); the keys' handles are found again as they are used. */
  private reopen(): void {
    this.keys.clear();
    this.sessions++;
    try {
      this.p.C_CloseSession(this.session);
    } catch {
      // already gone
    }
    this.session = this.login();
  }

  private pin(): string {
    const { pin } = this.uri;
    if ("value" in pin) return pin.value;
    try {
      return readFileSync(pin.file, "utf8").replace(/\r?\n$/, "");
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code ?? "unreadable";
      throw new Pkcs11Error(`the PIN file of PKCS#11 token "${this.label}" cannot be read (${why})`, "pin");
    }
  }

  /** A key pair by one attribute of its private half, its public key read from its public half. */
  private find(type: number, value: string | Buffer): TokenKey | null {
    const cacheKey = type === CKA_ID ? (value as Buffer).toString("hex") : null;
    const cached = cacheKey ? this.keys.get(cacheKey) : undefined;
    if (cached) return cached;
    const [handle] = this.objects([
      { type: CKA_CLASS, value: CKO_PRIVATE_KEY },
      { type: CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
      { type, value },
    ]);
    if (!handle) return null;
    const [id, label] = this.p.C_GetAttributeValue(this.session, handle, [{ type: CKA_ID }, { type: CKA_LABEL }]);
    const idBytes = Buffer.from((id?.value as Buffer | undefined) ?? Buffer.alloc(0));
    const labelText = Buffer.isBuffer(label?.value) ? label.value.toString("utf8") : String(label?.value ?? "");
    const publicKey = this.publicKeyOf(type, value);
    const key = { id: idBytes, label: labelText, publicKey, handle, session: this.sessions };
    if (idBytes.length) this.keys.set(idBytes.toString("hex"), key);
    return key;
  }

  /** The Ed25519 public key (32 bytes) of the public key object with this attribute. */
  private publicKeyOf(type: number, value: string | Buffer): Buffer {
    const [pub] = this.objects([
      { type: CKA_CLASS, value: CKO_PUBLIC_KEY },
      { type, value },
    ]);
    const shown = typeof value === "string" ? `"${value}"` : `id ${value.toString("hex")}`;
    if (!pub) throw new Pkcs11Error(`the PKCS#11 token "${this.label}" has no public key object ${shown}`, "object");
    const [point] = this.p.C_GetAttributeValue(this.session, pub, [{ type: CKA_EC_POINT }]);
    const raw = Buffer.from((point?.value as Buffer | undefined) ?? Buffer.alloc(0));
    // a DER OCTET STRING (04 20 <key>), as most tokens write it, or the 32 bytes themselves
    const key = raw.length === 34 && raw[0] === 0x04 && raw[1] === 0x20 ? raw.subarray(2) : raw;
    if (key.length !== 32)
      throw new Pkcs11Error(`the public key ${shown} in token "${this.label}" is not an Ed25519 key`, "object");
    return key;
  }

  private objects(template: Attribute[]): Buffer[] {
    this.p.C_FindObjectsInit(this.session, template);
    try {
      return this.p.C_FindObjects(this.session, 2);
    } finally {
      this.p.C_FindObjectsFinal(this.session);
    }
  }
}
