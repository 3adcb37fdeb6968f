/**
 * PKCS#11 URIs as the settings take them, and a SoftHSM2 token as the relay signs with it: a key
 * generated in it signs valid Stellar signatures, a session closed under it is reopened (the PIN file
 * read again), and a key gone from the token is 503 naming the token, not a wrong signature.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Keypair } from "@stellar/stellar-sdk";
import { RelayError } from "../../src/kernel/errors.ts";
import { Pkcs11Error, Pkcs11Token } from "../../src/kernel/pkcs11/token.ts";
import { describeUri, parsePkcs11Uri } from "../../src/kernel/pkcs11/uri.ts";
import { TokenKeypair } from "../../src/stellar/token-keypair.ts";
import { makeToken, SOFTHSM_MODULE, softhsmAvailable, type TestToken, useInThisProcess } from "../support/softhsm.ts";

test("a URI: token, key and module, the PIN from a file or the URI, percent-decoded; faults named, no PIN shown", () => {
  const u = parsePkcs11Uri(
    "X",
    "pkcs11:token=My%20HSM;object=funder%3B1?module-path=/usr/lib/x.so&pin-source=file:/run/pin",
    "object",
  );
  expect(u).toEqual({ token: "My HSM", object: "funder;1", modulePath: "/usr/lib/x.so", pin: { file: "/run/pin" } });
  expect(parsePkcs11Uri("X", "pkcs11:token=t?module-path=/m.so&pin-value=12%2634", "token").pin).toEqual({
    value: "12&34",
  });
  expect(describeUri(u)).toBe('pkcs11 token "My HSM" key "funder;1"');
  const bad = (uri: string, needs: "object" | "token" = "object") => {
    try {
      parsePkcs11Uri("MAINNET_FUNDER_SIGNER", uri, needs);
    } catch (e) {
      return (e as Error).message;
    }
    return "accepted";
  };
  expect(bad("token=t")).toContain('does not start with "pkcs11:"');
  expect(bad("pkcs11:object=k?module-path=/m.so&pin-value=1")).toContain("names no token");
  expect(bad("pkcs11:token=t?module-path=/m.so&pin-value=1")).toContain("names no key (object=<label>)");
  expect(bad("pkcs11:token=t;object=k?pin-value=1")).toContain("names no module");
  expect(bad("pkcs11:token=t;object=k?module-path=/m.so")).toContain("exactly one of pin-source");
  expect(bad("pkcs11:token=t;object=k?module-path=/m.so&pin-source=file:pin")).toContain("absolute path");
  const both = bad("pkcs11:token=t;object=k?module-path=/m.so&pin-source=file:/p&pin-value=secret-77");
  expect(both).toContain("exactly one of");
  expect(both).not.toContain("secret-77");
  expect(bad("pkcs11:token=t?module-path=/m.so&pin-value=1", "token")).toBe("accepted");
});

let token: TestToken;
let hsm: Pkcs11Token;
beforeAll(async () => {
  if (!softhsmAvailable) return;
  token = makeToken();
  useInThisProcess(token); // the module, loaded here, reads its configuration from the C environment
  hsm = await Pkcs11Token.open(parsePkcs11Uri("T", token.uri(), "token"));
});
afterAll(() => token?.done());

test.skipIf(!softhsmAvailable)(
  "a key generated in the token signs what Stellar verifies; it is not extractable",
  () => {
    const key = hsm.generate("unit-1", Buffer.from("a1", "hex"));
    const kp = new TokenKeypair(hsm, key);
    const data = Buffer.alloc(32, 7);
    expect(Keypair.fromPublicKey(kp.publicKey()).verify(data, kp.sign(data))).toBe(true);
    expect(() => kp.secret()).toThrow();
    expect(hsm.protections(key)).toEqual({ sensitive: true, extractable: false, token: true });
    expect(hsm.keyById(Buffer.from("a1", "hex"))?.publicKey).toEqual(key.publicKey);
    expect(() => hsm.key("no-such-key")).toThrow(Pkcs11Error);
  },
);

test.skipIf(!softhsmAvailable)(
  "a session closed under it is reopened and the signature made; a key gone is 503",
  () => {
    const key = hsm.generate("unit-2", Buffer.from("a2", "hex"));
    const kp = new TokenKeypair(hsm, key);
    const inner = hsm as unknown as { p: { C_CloseSession(s: Buffer): void }; session: Buffer };
    inner.p.C_CloseSession(inner.session); // as if the token had dropped it
    const data = Buffer.alloc(32, 9);
    expect(Keypair.fromPublicKey(kp.publicKey()).verify(data, kp.sign(data))).toBe(true);

    const r = Bun.spawnSync(
      [
        "pkcs11-tool",
        "--module",
        SOFTHSM_MODULE,
        "--token-label",
        token.label,
        "--login",
        "--pin",
        token.pin,
        "--delete-object",
        "--type",
        "privkey",
        "--id",
        "a2",
      ],
      { env: { ...process.env, ...token.env } },
    );
    expect(r.exitCode).toBe(0);
    inner.p.C_CloseSession(inner.session);
    let error: unknown;
    try {
      kp.sign(data);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RelayError);
    const data503 = (error as RelayError).data();
    expect(data503.code).toBe("NETWORK_UNAVAILABLE");
    expect(data503.details).toMatchObject({ reason: "signer_unavailable", signer: `pkcs11 token "${token.label}"` });
    expect(JSON.stringify(data503)).not.toContain(token.pin);
  },
);
