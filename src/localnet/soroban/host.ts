/**
 * A minimal Soroban host for the built-in contracts: storage access checked against (or recorded
 * into) the footprint, instruction metering, events, and authorization (require_auth) with
 * source-account and address credentials, in enforce or recording mode.
 */
import {
  X,
  sha256,
  toHex,
  rawToAddress,
  text,
  type LedgerKeyW,
  type ScAddressW,
  type ScValW,
  type SorobanAuthW,
  type SorobanInvocationW,
  type ContractEventW,
  type DiagnosticEventW,
} from "../../stellar/xdr.ts";
import type { Account, ContractData, Overlay } from "../state.ts";
import { verifyEd25519 } from "../signatures.ts";
import { accountKey, keyId, contractDataKey, scAddressToString, TEMPORARY } from "./footprint.ts";
import { accountLedgerEntry } from "../entries.ts";
import { CURRENT_SOROBAN_SETTINGS } from "./fees.ts";

/** ScErrorType values. */
export const SCE = {
  contract: 0,
  wasmVm: 1,
  context: 2,
  storage: 3,
  object: 4,
  crypto: 5,
  events: 6,
  budget: 7,
  value: 8,
  auth: 9,
} as const;
/** ScErrorCode values. */
export const SCEC = {
  arithDomain: 0,
  indexBounds: 1,
  invalidInput: 2,
  missingValue: 3,
  existingValue: 4,
  exceededLimit: 5,
  invalidAction: 6,
  internalError: 7,
  unexpectedType: 8,
  unexpectedSize: 9,
} as const;
const SCE_NAMES = ["Contract", "WasmVm", "Context", "Storage", "Object", "Crypto", "Events", "Budget", "Value", "Auth"];
const SCEC_NAMES = [
  "ArithDomain",
  "IndexBounds",
  "InvalidInput",
  "MissingValue",
  "ExistingValue",
  "ExceededLimit",
  "InvalidAction",
  "InternalError",
  "UnexpectedType",
  "UnexpectedSize",
];

/** A trap of the host: `type` is an ScErrorType, `code` a contract code or ScErrorCode. */
export class HostError extends Error {
  constructor(
    readonly type: number,
    readonly code: number,
    readonly detail: string,
  ) {
    super(
      `HostError: Error(${SCE_NAMES[type]}, ${type === SCE.contract ? `#${code}` : SCEC_NAMES[code]})\n\n${detail}`,
    );
  }
  scError(): ScValW {
    return (
      this.type === SCE.contract
        ? { type: 2, error: { type: 0, contractCode: this.code } }
        : { type: 2, error: { type: this.type, code: this.code } }
    ) as ScValW;
  }
}

export interface HostContext {
  state: Overlay;
  ledgerSeq: number;
  networkId: Uint8Array;
  baseReserve: number;
  /** The operation's source account (source-account credentials authorize it). */
  source: string;
  mode: "enforce" | "record";
  /** enforce: the transaction's footprint (key ids) */
  footprint?: { readOnly: Set<string>; readWrite: Set<string> };
  /** enforce: the operation's authorization entries */
  auth: SorobanAuthW[];
  /** record: produce AddressV2 credentials (CAP-71) */
  useUpgradedAuth: boolean;
  maxEntryTtl: number;
}

export const sym = (s: string): ScValW => ({ type: 15, sym: text(s) }) as ScValW;
export const str = (s: string): ScValW => ({ type: 14, str: text(s) }) as ScValW;
export const u32 = (n: number): ScValW => ({ type: 3, u32: n }) as ScValW;
export const u64 = (n: bigint): ScValW => ({ type: 5, u64: n }) as ScValW;
export const addr = (a: ScAddressW): ScValW => ({ type: 18, address: a }) as ScValW;
export function i128(v: bigint): ScValW {
  const m = (1n << 64n) - 1n;
  return { type: 10, i128: { hi: BigInt.asIntN(64, v >> 64n), lo: v & m } } as ScValW;
}
export function fromI128(v: ScValW): bigint {
  if (v.type !== 10) throw new HostError(SCE.value, SCEC.unexpectedType, "expected an i128 value");
  return (v.i128.hi << 64n) | v.i128.lo;
}
export function asAddress(v: ScValW): ScAddressW {
  if (v.type !== 18) throw new HostError(SCE.value, SCEC.unexpectedType, "expected an address value");
  return v.address;
}

/** XDR bytes a LedgerEntry adds to its LedgerEntryData: lastModifiedLedgerSeq (4) and ext v0 (4). */
const LEDGER_ENTRY_OVERHEAD = 8;

export class Host {
  readonly readOnly = new Map<string, LedgerKeyW>();
  readonly readWrite = new Map<string, LedgerKeyW>();
  readonly events: ContractEventW[] = [];
  readonly diagnostics: DiagnosticEventW[] = [];
  readonly recordedAuth: SorobanAuthW[] = [];
  readonly createdEntries: { key: string; size: number; persistent: boolean; liveUntil: number }[] = [];
  instructions = 0;
  diskReadBytes = 0;
  writeBytes = 0;
  private readonly usedAuth = new Set<number>();
  private readonly readClassic = new Set<string>();
  constructor(readonly ctx: HostContext) {}

  charge(instructions: number): void {
    this.instructions += instructions;
  }

  private touch(key: LedgerKeyW, write: boolean): string {
    const id = keyId(key);
    const fp = this.ctx.footprint;
    if (fp) {
      const inRw = fp.readWrite.has(id);
      if (write ? !inRw : !inRw && !fp.readOnly.has(id)) {
        throw new HostError(
          SCE.storage,
          SCEC.exceededLimit,
          `trying to ${write ? "write" : "access"} a ledger entry outside of the footprint`,
        );
      }
    }
    if (write) {
      this.readWrite.set(id, key);
      this.readOnly.delete(id);
    } else if (!this.readWrite.has(id)) this.readOnly.set(id, key);
    return id;
  }

  /** Reads (and for `write`, loads for change) a classic account. */
  account(id: string, write: boolean): Account | undefined {
    const key = accountKey(id);
    const kid = this.touch(key, write);
    const a = write ? this.ctx.state.loadAccount(id) : this.ctx.state.account(id);
    if (a && !this.readClassic.has(kid)) {
      this.readClassic.add(kid);
      this.diskReadBytes += accountLedgerEntry(a).length;
    }
    return a;
  }
  /** Marks an account as written (counts its size in write bytes). */
  wroteAccount(a: Account): void {
    this.writeBytes += accountLedgerEntry(a).length;
  }

  contractData(key: LedgerKeyW, write: boolean): ContractData | undefined {
    return this.ctx.state.contractData(this.touch(key, write));
  }
  /** Writes a contract data entry; `entry` is its LedgerEntryData XDR. */
  putContractData(key: LedgerKeyW, entry: Uint8Array, liveUntil: number, persistent: boolean): void {
    const id = this.touch(key, true);
    // sizes are of the whole LedgerEntry, as for accounts: the data plus lastModifiedLedgerSeq and ext v0
    const size = entry.length + LEDGER_ENTRY_OVERHEAD;
    if (!this.ctx.state.contractData(id)) this.createdEntries.push({ key: id, size, persistent, liveUntil });
    this.ctx.state.putContractData({ key: id, entry, liveUntil, lastModified: this.ctx.ledgerSeq });
    this.writeBytes += size;
  }

  emit(contractId: Uint8Array, topics: ScValW[], data: ScValW): void {
    const event = { ext: { v: 0 }, contractId, type: 1, body: { v: 0, v0: { topics, data } } } as ContractEventW;
    this.events.push(event);
    this.diagnostics.push({ inSuccessfulContractCall: true, event });
  }
  diagnostic(contractId: Uint8Array | null, topics: ScValW[], data: ScValW): void {
    this.diagnostics.push({
      inSuccessfulContractCall: true,
      event: { ext: { v: 0 }, contractId, type: 2, body: { v: 0, v0: { topics, data } } } as ContractEventW,
    });
  }

  /** address.require_auth() for the invocation `contract.fn(args)`. */
  requireAuth(address: ScAddressW, contract: ScAddressW, fn: string, args: ScValW[]): void {
    const invocation: SorobanInvocationW = {
      function: { type: 0, contractFn: { contractAddress: contract, functionName: text(fn), args } },
      subInvocations: [],
    } as SorobanInvocationW;
    const who = scAddressToString(address);
    if (this.ctx.mode === "record") {
      this.recordAuth(address, who, invocation);
      return;
    }
    const want = toHex(
      X.sorobanAuth.encode({ credentials: { type: 0 }, rootInvocation: invocation } as SorobanAuthW).subarray(4),
    );
    for (let i = 0; i < this.ctx.auth.length; i++) {
      if (this.usedAuth.has(i)) continue;
      const e = this.ctx.auth[i];
      if (
        toHex(
          X.sorobanAuth
            .encode({ credentials: { type: 0 }, rootInvocation: e.rootInvocation } as SorobanAuthW)
            .subarray(4),
        ) !== want
      )
        continue;
      const c = e.credentials;
      if (c.type === 0) {
        if (who !== this.ctx.source) continue;
      } else if (c.type === 1 || c.type === 2) {
        const cred = c.type === 1 ? c.address : c.addressV2;
        if (scAddressToString(cred.address) !== who) continue;
        this.checkAddressCredentials(cred, c.type === 2, e.rootInvocation, who);
      } else {
        throw new HostError(SCE.auth, SCEC.invalidInput, "authorization with delegates is not supported by localnet");
      }
      this.usedAuth.add(i);
      return;
    }
    throw new HostError(SCE.auth, SCEC.invalidAction, `Unauthorized function call for address ${who}`);
  }

  private recordAuth(address: ScAddressW, who: string, invocation: SorobanInvocationW): void {
    if (who === this.ctx.source) {
      this.recordedAuth.push({ credentials: { type: 0 }, rootInvocation: invocation } as SorobanAuthW);
      return;
    }
    // a random non-negative nonce, consumed as enforcing mode will (soroban-env-host
    // AccountAuthorizationTracker::new_recording), so its write and rent are part of the resources
    const nonce = BigInt.asUintN(63, BigInt(`0x${toHex(crypto.getRandomValues(new Uint8Array(8)))}`));
    const cred = { address, nonce, signatureExpirationLedger: 0, signature: { type: 1 } };
    this.recordedAuth.push({
      credentials: this.ctx.useUpgradedAuth ? { type: 2, addressV2: cred } : { type: 1, address: cred },
      rootInvocation: invocation,
    } as SorobanAuthW);
    this.consumeNonce(address, nonce, 0);
  }

  /** Host::consume_nonce: writes the temporary nonce entry, live until at least the minimum temporary TTL. */
  private consumeNonce(address: ScAddressW, nonce: bigint, liveUntilLedger: number): void {
    const nonceKey = contractDataKey(address, { type: 21, nonceKey: { nonce } } as ScValW, TEMPORARY);
    if (this.contractData(nonceKey, true))
      throw new HostError(SCE.auth, SCEC.existingValue, "nonce already exists for address");
    const entry = X.ledgerEntryData.encode({
      type: 6,
      contractData: {
        ext: { v: 0 },
        contract: address,
        key: { type: 21, nonceKey: { nonce } },
        durability: TEMPORARY,
        val: { type: 1 },
      },
    } as never);
    const minLiveUntil = this.ctx.ledgerSeq + CURRENT_SOROBAN_SETTINGS.minTemporaryTtl - 1;
    this.putContractData(nonceKey, entry, Math.max(liveUntilLedger, minLiveUntil), false);
  }

  private checkAddressCredentials(
    cred: { address: ScAddressW; nonce: bigint; signatureExpirationLedger: number; signature: ScValW },
    v2: boolean,
    invocation: SorobanInvocationW,
    who: string,
  ): void {
    const { ledgerSeq, networkId, maxEntryTtl } = this.ctx;
    if (cred.signatureExpirationLedger < ledgerSeq || cred.signatureExpirationLedger > ledgerSeq + maxEntryTtl - 1) {
      throw new HostError(
        SCE.auth,
        SCEC.invalidInput,
        `signature expiration ledger ${cred.signatureExpirationLedger} is out of range at ledger ${ledgerSeq}`,
      );
    }
    if (cred.address.type !== 0)
      throw new HostError(
        SCE.auth,
        SCEC.invalidAction,
        "contract (__check_auth) credentials are not supported by localnet",
      );
    const preimage = v2
      ? {
          type: 10,
          sorobanAuthorizationWithAddress: {
            networkId,
            nonce: cred.nonce,
            signatureExpirationLedger: cred.signatureExpirationLedger,
            address: cred.address,
            invocation,
          },
        }
      : {
          type: 9,
          sorobanAuthorization: {
            networkId,
            nonce: cred.nonce,
            signatureExpirationLedger: cred.signatureExpirationLedger,
            invocation,
          },
        };
    const payload = sha256(X.hashIdPreimage.encode(preimage as never));
    const account = this.account(who, false);
    if (!account) throw new HostError(SCE.auth, SCEC.missingValue, `account ${who} does not exist`);
    const sigs = cred.signature.type === 16 ? (cred.signature.vec ?? []) : [];
    if (sigs.length === 0) throw new HostError(SCE.auth, SCEC.invalidAction, `missing signature for address ${who}`);
    let weight = 0;
    let prev = "";
    for (const s of sigs) {
      const m = s.type === 17 ? (s.map ?? []) : [];
      const field = (name: string) => m.find((e) => e.key.type === 15 && String(e.key.sym) === name)?.val;
      const pk = field("public_key"),
        sig = field("signature");
      if (pk?.type !== 13 || sig?.type !== 13)
        throw new HostError(SCE.auth, SCEC.unexpectedType, "malformed account signature");
      const signer = rawToAddress(pk.bytes);
      if (signer <= prev) throw new HostError(SCE.auth, SCEC.invalidInput, "signatures must be sorted by public key");
      prev = signer;
      if (!verifyEd25519(signer, payload, sig.bytes))
        throw new HostError(SCE.crypto, SCEC.invalidInput, `signature verification failed for ${signer}`);
      const w = signer === who ? account.thresholds[0] : (account.signers.find((x) => x.key === signer)?.weight ?? 0);
      if (w === 0) throw new HostError(SCE.auth, SCEC.invalidAction, `${signer} is not a signer of ${who}`);
      weight += w;
    }
    if (weight < account.thresholds[2])
      throw new HostError(
        SCE.auth,
        SCEC.invalidAction,
        `signature weight ${weight} is below the medium threshold of ${who}`,
      );
    this.consumeNonce(cred.address, cred.nonce, cred.signatureExpirationLedger);
  }
}
