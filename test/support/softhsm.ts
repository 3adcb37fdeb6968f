/**
 * A SoftHSM2 token made for a test (Debian's softhsm2 and opensc's pkcs11-tool, as docs/operations.md
 * shows them): its own token folder and configuration file (SOFTHSM2_CONF), a PIN file, and keys
 * generated with pkcs11-tool. `available` is false where softhsm2 or pkcs11js is not installed.
 */
import { dlopen, FFIType } from "bun:ffi";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./processes.ts";

export const SOFTHSM_MODULE = "/usr/lib/softhsm/libsofthsm2.so";
const binding = join(import.meta.dir, "..", "..", "node_modules", "pkcs11js", "build", "Release", "pkcs11.node");
export const softhsmAvailable =
  existsSync(SOFTHSM_MODULE) &&
  Bun.which("softhsm2-util") !== null &&
  Bun.which("pkcs11-tool") !== null &&
  existsSync(binding);

export interface TestToken {
  label: string;
  pin: string;
  pinFile: string;
  /** SOFTHSM2_CONF for every process that uses the token. */
  env: { SOFTHSM2_CONF: string };
  /** Its URI: with `object`, a key's; with `pin`, that PIN as pin-value instead of the file. */
  uri(o?: { object?: string; pin?: string }): string;
  /** Generates an Ed25519 key pair in the token with pkcs11-tool (as the docs say). */
  keypairgen(label: string, id: string): void;
  done(): void;
}

function run(cmd: string[], env: Record<string, string>): string {
  const r = Bun.spawnSync(cmd, { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const out = `${r.stdout.toString()}${r.stderr.toString()}`;
  if (r.exitCode !== 0) throw new Error(`${cmd[0]} failed (${r.exitCode}): ${out}`);
  return out;
}

export function makeToken(): TestToken {
  const dir = tempDir("relay-softhsm-");
  const tokens = join(dir.path, "tokens");
  mkdirSync(tokens);
  const conf = join(dir.path, "softhsm2.conf");
  writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const env = { SOFTHSM2_CONF: conf };
  const label = `relay-${crypto.randomUUID().slice(0, 8)}`;
  const pin = `${Math.floor(100000 + Math.random() * 899999)}`;
  const pinFile = join(dir.path, "pin");
  writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 });
  run(["softhsm2-util", "--init-token", "--free", "--label", label, "--pin", pin, "--so-pin", "87654321"], env);
  return {
    label,
    pin,
    pinFile,
    env,
    uri: (o = {}) =>
      `pkcs11:token=${label}${o.object ? `;object=${o.object}` : ""}?module-path=${SOFTHSM_MODULE}&` +
      (o.pin !== undefined ? `pin-value=${o.pin}` : `pin-source=file:${pinFile}`),
    keypairgen: (keyLabel, id) =>
      void run(
        [
          "pkcs11-tool",
          "--module",
          SOFTHSM_MODULE,
          "--token-label",
          label,
          "--login",
          "--pin",
          pin,
          "--keypairgen",
          "--key-type",
          "EC:edwards25519",
          "--id",
          id,
          "--label",
          keyLabel,
        ],
        env,
      ),
    done: dir.done,
  };
}

/**
 * Points this process's PKCS#11 module at `token` (before the module is loaded): SOFTHSM2_CONF set in
 * the C environment, which the module reads (Bun's process.env does not reach it).
 */
export function useInThisProcess(token: TestToken): void {
  const libc = dlopen("libc.so.6", {
    setenv: { args: [FFIType.cstring, FFIType.cstring, FFIType.i32], returns: FFIType.i32 },
  });
  const c = (s: string) => Buffer.from(`${s}\0`);
  libc.symbols.setenv(c("SOFTHSM2_CONF"), c(token.env.SOFTHSM2_CONF), 1);
  libc.close();
}
