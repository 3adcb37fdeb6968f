/**
 * Localnet persistence: each close appends a journal line of what it changed; a restart replays the
 * snapshot and the journal (a torn last line is ignored), and the journal is folded into a new snapshot.
 */
import { afterEach, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Account, Asset, Keypair, Networks, Operation, TransactionBuilder } from "@stellar/stellar-sdk";
import { Localnet } from "../../src/localnet/ledger.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const open = (dataDir: string) => new Localnet({ passphrase: Networks.STANDALONE, ledgerCloseMs: 0, dataDir });

/** Creates `dest` with `xlm` lumens from the root account, in a ledger of its own. */
function create(net: Localnet, dest: string, xlm: string): void {
  const root = net.account(net.root.publicKey())!;
  const tx = new TransactionBuilder(new Account(net.root.publicKey(), root.seqNum.toString()), {
    fee: "100",
    networkPassphrase: net.passphrase,
  })
    .addOperation(Operation.createAccount({ destination: dest, startingBalance: xlm }))
    .setTimeout(0)
    .build();
  tx.sign(net.root);
  net.submitXdr(tx.toEnvelope().toXdr());
  net.closeLedger();
}

test("a restart replays the journal: accounts, ledgers and transactions are back", () => {
  const dir = mkdtempSync(join(tmpdir(), "localnet-persist-"));
  dirs.push(dir);
  const a = open(dir);
  const users = [Keypair.random(), Keypair.random(), Keypair.random()];
  for (const [i, u] of users.entries()) create(a, u.publicKey(), String(10 + i));
  const journal = readdirSync(dir).find((f) => f.endsWith(".journal"))!;
  expect(statSync(join(dir, journal)).size).toBeGreaterThan(0); // the closes after the first went to the journal
  const latest = a.latestLedger;
  const hashes = a.ledgers.flatMap((l) => l.txHashes);
  a.stop();

  appendFileSync(join(dir, journal), '{"header": {"sequ'); // a crash in the middle of a line
  const b = open(dir);
  expect(b.latestLedger.sequence).toBe(latest.sequence);
  expect(b.latestLedger.hash).toBe(latest.hash);
  for (const [i, u] of users.entries()) expect(b.account(u.publicKey())?.balance).toBe(BigInt(10 + i) * 10_000_000n);
  for (const h of hashes) expect(b.records.get(h)?.hash).toBe(h);
  // and it goes on from there
  create(b, Keypair.random().publicKey(), "5");
  expect(b.latestLedger.sequence).toBe(latest.sequence + 1);
  b.stop();
});

test("a deleted account stays deleted after a restart", () => {
  const dir = mkdtempSync(join(tmpdir(), "localnet-persist-"));
  dirs.push(dir);
  const a = open(dir);
  const u = Keypair.random();
  create(a, Keypair.random().publicKey(), "10"); // the first close writes the snapshot
  create(a, u.publicKey(), "10");
  const acc = a.account(u.publicKey())!;
  const merge = new TransactionBuilder(new Account(u.publicKey(), acc.seqNum.toString()), {
    fee: "100",
    networkPassphrase: a.passphrase,
  })
    .addOperation(Operation.accountMerge({ destination: a.root.publicKey() }))
    .setTimeout(0)
    .build();
  merge.sign(u);
  a.submitXdr(merge.toEnvelope().toXdr());
  a.closeLedger();
  expect(a.account(u.publicKey())).toBeUndefined();
  a.stop();
  expect(open(dir).account(u.publicKey())).toBeUndefined();
});

test("trustlines, their balances and sponsorships survive a restart", () => {
  const dir = mkdtempSync(join(tmpdir(), "localnet-persist-"));
  dirs.push(dir);
  const a = open(dir);
  const [issuer, holder] = [Keypair.random(), Keypair.random()];
  create(a, issuer.publicKey(), "100");
  create(a, holder.publicKey(), "100");
  const usd = new Asset("USD", issuer.publicKey());
  const send = (source: Keypair, ops: ReturnType<typeof Operation.payment>[], signers = [source]) => {
    const acc = a.account(source.publicKey())!;
    const b = new TransactionBuilder(new Account(source.publicKey(), acc.seqNum.toString()), {
      fee: "100",
      networkPassphrase: a.passphrase,
    });
    for (const op of ops) b.addOperation(op);
    const tx = b.setTimeout(0).build();
    for (const s of signers) tx.sign(s);
    a.submitXdr(tx.toEnvelope().toXdr());
    a.closeLedger();
  };
  send(
    issuer,
    [
      Operation.beginSponsoringFutureReserves({ sponsoredId: holder.publicKey() }),
      Operation.changeTrust({ asset: usd, source: holder.publicKey() }),
      Operation.endSponsoringFutureReserves({ source: holder.publicKey() }),
    ],
    [issuer, holder],
  );
  send(issuer, [Operation.payment({ destination: holder.publicKey(), asset: usd, amount: "12.5" })]);
  const line = a.account(holder.publicKey())!.trustlines.get(`USD:${issuer.publicKey()}`)!;
  expect([line.balance, line.sponsor]).toEqual([125_000_000n, issuer.publicKey()]);
  a.stop();
  const b = open(dir);
  const again = b.account(holder.publicKey())!;
  expect(again.trustlines.get(`USD:${issuer.publicKey()}`)).toEqual(line);
  expect([again.numSubEntries, again.numSponsored, b.account(issuer.publicKey())!.numSponsoring]).toEqual([1, 1, 1]);
  b.stop();
});
