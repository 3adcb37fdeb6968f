/**
 * The built-in contracts of localnet (it runs no WASM):
 * - the native asset's Stellar Asset Contract at its real contract id for the network passphrase
 *   (transfer, balance, decimals, name, symbol);
 * - a test contract at a fixed id (TEST_CONTRACT_ID) with echo(value), panic() and burn(n).
 * Instruction costs are a fixed model (INSTRUCTIONS below), not measured.
 */
import { Asset, StrKey } from "@stellar/stellar-sdk";
import { X, sha256 } from "../../stellar/xdr.ts";
import type { ScValW, ScAddressW } from "../../stellar/xdr.ts";
import { availableBalance } from "../state.ts";
import { type Host, HostError, SCE, SCEC, sym, str, u32, u64, i128, fromI128, asAddress, addr } from "./host.ts";
import { contractDataKey, keyId, scAddressToString, PERSISTENT } from "./footprint.ts";
import { CURRENT_SOROBAN_SETTINGS } from "./fees.ts";

/** Modelled instruction costs. */
export const INSTRUCTIONS = {
  invoke: 250_000,
  sacTransfer: 900_000,
  sacRead: 120_000,
  echo: 60_000,
  panic: 40_000,
  burnBase: 50_000,
} as const;

/** The test contract's id: sha256("stellar-sponsor-relay/localnet/test-contract"). */
export const TEST_CONTRACT_HASH = sha256(new TextEncoder().encode("stellar-sponsor-relay/localnet/test-contract"));
export const TEST_CONTRACT_ID = StrKey.encodeContract(TEST_CONTRACT_HASH);
const TEST_WASM_HASH = sha256(new TextEncoder().encode("stellar-sponsor-relay/localnet/test-contract/wasm"));

/** SAC contract error codes (soroban-env-host ContractError). */
const SacError = { operationNotSupported: 2, accountMissing: 6, negativeAmount: 8, balance: 10, overflow: 12 } as const;
const I64_MAX = (1n << 63n) - 1n;

export interface BuiltinContract {
  id: Uint8Array;
  address: ScAddressW;
  call(host: Host, fn: string, args: ScValW[]): ScValW;
}

const instanceKeyVal = { type: 20 } as ScValW;
export const instanceKey = (a: ScAddressW) => contractDataKey(a, instanceKeyVal, PERSISTENT);

function argCount(args: ScValW[], n: number, fn: string): void {
  if (args.length !== n)
    throw new HostError(SCE.value, SCEC.unexpectedSize, `${fn} takes ${n} argument(s), got ${args.length}`);
}

function sac(id: Uint8Array): BuiltinContract {
  const address = { type: 1, contractId: id } as ScAddressW;
  const nativeTopic = str("native");
  return {
    id,
    address,
    call(host, fn, args) {
      host.contractData(instanceKey(address), false);
      switch (fn) {
        case "decimals":
          argCount(args, 0, fn);
          host.charge(INSTRUCTIONS.sacRead);
          return u32(7);
        case "name":
        case "symbol":
          argCount(args, 0, fn);
          host.charge(INSTRUCTIONS.sacRead);
          return str("native");
        case "balance": {
          argCount(args, 1, fn);
          host.charge(INSTRUCTIONS.sacRead);
          const who = asAddress(args[0]);
          if (who.type !== 0)
            throw new HostError(
              SCE.contract,
              SacError.operationNotSupported,
              "localnet models native balances of accounts only",
            );
          const acc = host.account(scAddressToString(who), false);
          if (!acc) throw new HostError(SCE.contract, SacError.accountMissing, "account is missing");
          return i128(acc.balance);
        }
        case "transfer": {
          argCount(args, 3, fn);
          host.charge(INSTRUCTIONS.sacTransfer);
          const from = asAddress(args[0]),
            to = asAddress(args[1]);
          const amount = fromI128(args[2]);
          if (amount < 0n) throw new HostError(SCE.contract, SacError.negativeAmount, "negative amount is not allowed");
          host.requireAuth(from, address, fn, args);
          if (from.type !== 0 || to.type !== 0)
            throw new HostError(
              SCE.contract,
              SacError.operationNotSupported,
              "localnet models native transfers between accounts only",
            );
          const src = host.account(scAddressToString(from), true);
          const dst = host.account(scAddressToString(to), true);
          if (!src || !dst) throw new HostError(SCE.contract, SacError.accountMissing, "account is missing");
          if (src.id !== dst.id) {
            if (availableBalance(src, host.ctx.baseReserve) < amount)
              throw new HostError(SCE.contract, SacError.balance, "balance is not sufficient to spend");
            if (dst.balance + amount > I64_MAX)
              throw new HostError(SCE.contract, SacError.overflow, "balance overflow");
            src.balance -= amount;
            dst.balance += amount;
          }
          host.wroteAccount(src);
          if (src.id !== dst.id) host.wroteAccount(dst);
          host.emit(id, [sym("transfer"), addr(from), addr(to), nativeTopic], i128(amount));
          return { type: 1 } as ScValW;
        }
        default:
          throw new HostError(
            SCE.contract,
            SacError.operationNotSupported,
            `function ${fn} of the native asset contract is not supported by localnet`,
          );
      }
    },
  };
}

function testContract(): BuiltinContract {
  const address = { type: 1, contractId: TEST_CONTRACT_HASH } as ScAddressW;
  return {
    id: TEST_CONTRACT_HASH,
    address,
    call(host, fn, args) {
      host.contractData(instanceKey(address), false);
      switch (fn) {
        case "echo":
          argCount(args, 1, fn);
          host.charge(INSTRUCTIONS.echo);
          return args[0];
        case "panic":
          argCount(args, 0, fn);
          host.charge(INSTRUCTIONS.panic);
          throw new HostError(SCE.contract, 1, "test contract panicked on request");
        case "burn": {
          argCount(args, 1, fn);
          const a = args[0];
          const n = a.type === 3 ? BigInt(a.u32) : a.type === 5 ? a.u64 : -1n;
          if (n < 0n) throw new HostError(SCE.value, SCEC.unexpectedType, "burn takes a u32 or u64 instruction count");
          if (n > BigInt(CURRENT_SOROBAN_SETTINGS.txMaxInstructions))
            throw new HostError(SCE.budget, SCEC.exceededLimit, "instruction budget exceeded");
          host.charge(INSTRUCTIONS.burnBase + Number(n));
          return u64(n);
        }
        default:
          throw new HostError(SCE.context, SCEC.missingValue, `trying to invoke non-existent contract function ${fn}`);
      }
    },
  };
}

/** The built-in contracts of a network, by contract id (hex). */
export function builtinContracts(passphrase: string): Map<string, BuiltinContract> {
  const sacId = StrKey.decodeContract(Asset.native().contractId(passphrase));
  const list = [sac(sacId), testContract()];
  return new Map(list.map((c) => [Buffer.from(c.id).toString("hex"), c]));
}

/** Writes the contract instance entries of the built-ins into a fresh ledger. */
export function installBuiltins(net: {
  passphrase: string;
  putContractData(d: { key: string; entry: Uint8Array; liveUntil: number; lastModified: number }): void;
  header: { sequence: number };
}): void {
  for (const c of builtinContracts(net.passphrase).values()) {
    const executable = c.id === TEST_CONTRACT_HASH ? { type: 0, wasmHash: TEST_WASM_HASH } : { type: 1 };
    const entry = X.ledgerEntryData.encode({
      type: 6,
      contractData: {
        ext: { v: 0 },
        contract: c.address,
        key: instanceKeyVal,
        durability: PERSISTENT,
        val: { type: 19, instance: { executable, storage: null } },
      },
    } as never);
    net.putContractData({
      key: keyId(instanceKey(c.address)),
      entry,
      liveUntil: net.header.sequence + CURRENT_SOROBAN_SETTINGS.maxEntryTtl - 1,
      lastModified: net.header.sequence,
    });
  }
}
