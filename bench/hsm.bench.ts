/**
 * `bun run bench:hsm`: what keys in a PKCS#11 token cost (docs/performance.md, keys in an HSM). A
 * SoftHSM2 token is made for the run (test/support/softhsm.ts). First the signing rate on one core,
 * a native seed's (node:crypto ed25519) beside the token's (CKM_EDDSA through pkcs11js), for
 * BENCH_SIGN_SECONDS (default 3) each; then bench:e2e's `fast` step (1,000 req/s on Postgres by
 * default, bench:compare's load) with the channels' keys sealed and in the token (CHANNEL_KEYS=pkcs11),
 * alternating for BENCH_ROUNDS (default 2) pairs, and the ratio of the relay's CPU per answer. Needs
 * softhsm2, opensc and the pkcs11js binding (`npm_config_nodedir=/usr bun install`).
 */
import { Keypair } from "@stellar/stellar-sdk";
import { Pkcs11Token } from "../src/kernel/pkcs11/token.ts";
import { parsePkcs11Uri } from "../src/kernel/pkcs11/uri.ts";
import { signingKey } from "../src/stellar/envelope.ts";
import { TokenKeypair } from "../src/stellar/token-keypair.ts";
import { makeToken, softhsmAvailable, useInThisProcess } from "../test/support/softhsm.ts";
import { fastRun, printRatios, printRows, type Row } from "./e2e/runs.ts";

if (!softhsmAvailable) {
  console.error("bench:hsm needs softhsm2, opensc (pkcs11-tool) and the pkcs11js binding: see docs/operations.md");
  process.exit(2);
}
const seconds = Number(process.env.BENCH_SIGN_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const token = makeToken();
try {
  useInThisProcess(token);
  const hsm = await Pkcs11Token.open(parsePkcs11Uri("bench", token.uri(), "token"));
  const inToken = new TokenKeypair(hsm, hsm.generate("bench-1", Buffer.from("b1", "hex")));
  const rate = (sign: (hash: Buffer) => Buffer) => {
    const hash = Buffer.alloc(32, 1);
    let n = 0;
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) {
      for (let i = 0; i < 100; i++) sign(hash);
      n += 100;
    }
    return n / seconds;
  };
  const native = signingKey(Keypair.random());
  const token_ = signingKey(inToken);
  const seed = rate((h) => native.sign(h));
  const pkcs11 = rate((h) => token_.sign(h));
  console.log(`signatures per second on one core: seed ${seed.toFixed(0)}, SoftHSM2 token ${pkcs11.toFixed(0)}`);

  const inTokenEnv = { CHANNEL_KEYS: "pkcs11", CHANNEL_SIGNER: token.uri(), ...token.env };
  const rows: Row[] = [];
  for (let i = 0; i < rounds; i++) {
    rows.push(await fastRun(`sealed #${i + 1}`));
    rows.push(await fastRun(`pkcs11 #${i + 1}`, { relayEnv: inTokenEnv }));
  }
  console.log(`\nbench:hsm: channel keys sealed and in a SoftHSM2 token, ${rounds} rounds, alternating`);
  printRows(rows);
  const of = (prefix: string) => rows.filter((r) => r.who.startsWith(prefix)).flatMap((r) => r.phases);
  printRatios(of("sealed"), of("pkcs11"), { after: "pkcs11", before: "sealed" });
} finally {
  token.done();
}
