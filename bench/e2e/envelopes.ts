/**
 * Fast signed payment envelopes for the load generator. The SDK builds one unsigned template (a
 * payment of 1 stroop to a sink account); every envelope is a copy with its source account and
 * sequence number written in place, hashed and signed with node:crypto's native ed25519
 * (`bench/keys.ts`). Building tens of thousands takes a second or two, where the SDK's builder and
 * pure-JS signer would take minutes.
 *
 * Layout of a TransactionEnvelope (ENVELOPE_TYPE_TX) with no signatures:
 * [0..4) envelope type, [4..8) muxed key type, [8..40) source key, [40..44) fee, [44..52) seqNum,
 * …, last 4 bytes: the signature count (0). The transaction itself is bytes [4, length - 4).
 */
import { createHash, sign } from "node:crypto";
import { Account, Asset, Operation, TransactionBuilder } from "@stellar/stellar-sdk";
import type { FastKey } from "../keys.ts";

const SOURCE_AT = 8;
const SEQ_AT = 44;
const ENVELOPE_TYPE_TX = Buffer.from([0, 0, 0, 2]);

export class EnvelopeFactory {
  private readonly template: Buffer;
  private readonly networkId: Buffer;

  constructor(passphrase: string, sink: string) {
    const tx = new TransactionBuilder(new Account(sink, "0"), { fee: "100", networkPassphrase: passphrase })
      .addOperation(Operation.payment({ destination: sink, asset: Asset.native(), amount: "0.0000001" }))
      .setTimeout(0)
      .build();
    this.template = Buffer.from(tx.toEnvelope().toXDR());
    this.networkId = createHash("sha256").update(passphrase).digest();
  }

  /** The base64 envelope of `key`'s payment with sequence number `seq`, signed by `key`. */
  build(key: FastKey, seq: bigint): string {
    const unsigned = Buffer.from(this.template);
    unsigned.set(key.raw, SOURCE_AT);
    unsigned.writeBigInt64BE(seq, SEQ_AT);
    const body = unsigned.subarray(4, unsigned.length - 4);
    const hash = createHash("sha256").update(this.networkId).update(ENVELOPE_TYPE_TX).update(body).digest();
    const signature = sign(null, hash, key.key);
    const signed = Buffer.alloc(unsigned.length + 4 + 4 + 64);
    unsigned.copy(signed, 0, 0, unsigned.length - 4);
    let at = unsigned.length - 4;
    at = signed.writeUInt32BE(1, at);
    signed.set(key.raw.subarray(28), at);
    at = signed.writeUInt32BE(64, at + 4);
    signed.set(signature, at);
    return signed.toString("base64");
  }
}
