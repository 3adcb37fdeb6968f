/**
 * What a transaction touches, operation by operation: where value goes (destinations), which assets
 * move, which contract functions it invokes. The policy's allowlists check it (actors/projects/policy.ts),
 * and an approval request describes the transaction with it.
 */
import { Address, Asset, StrKey, scValToNative, type Transaction, type xdr } from "@stellar/stellar-sdk";
import type { OpSummary } from "../../../../actors/projects/policy.ts";

/** One decoded operation, as the SDK gives it. */
type Operation = Transaction["operations"][number];

/** "native" or "CODE:ISSUER". */
const assetName = (a: Asset): string => (a.isNative() ? "native" : `${a.getCode()}:${a.getIssuer()}`);

/** A G-address for an M-address (its account), else the address as it is. */
function account(address: string): string {
  if (!address.startsWith("M")) return address;
  try {
    return StrKey.encodeEd25519PublicKey(StrKey.decodeMed25519PublicKey(address).subarray(0, 32));
  } catch {
    return address;
  }
}

/** An ScAddress argument as G... or C..., or null. */
function address(v: xdr.ScVal | undefined): string | null {
  if (!v) return null;
  try {
    const native = scValToNative(v);
    return typeof native === "string" && /^[GC][A-Z2-7]{55}$/.test(native) ? native : null;
  } catch {
    return null;
  }
}

/** One operation's summary: its type, and where its value goes, which asset and how much, or which function. */
export function summarize(op: Operation): OpSummary {
  const base = { type: op.type as string };
  switch (op.type) {
    case "payment":
      return { ...base, destination: account(op.destination), asset: assetName(op.asset), amount: op.amount };
    case "pathPaymentStrictReceive":
      return {
        ...base,
        destination: account(op.destination),
        asset: assetName(op.destAsset),
        amount: op.destAmount,
        assets: [op.sendAsset, ...op.path, op.destAsset].map(assetName),
      };
    case "pathPaymentStrictSend":
      return {
        ...base,
        destination: account(op.destination),
        asset: assetName(op.destAsset),
        amount: op.sendAmount,
        assets: [op.sendAsset, ...op.path, op.destAsset].map(assetName),
      };
    case "createAccount":
      return { ...base, destination: op.destination, asset: "native", amount: op.startingBalance };
    case "accountMerge":
      return { ...base, destination: account(op.destination), asset: "native" };
    case "createClaimableBalance":
      return {
        ...base,
        destinations: op.claimants.map((c) => c.destination),
        asset: assetName(op.asset),
        amount: op.amount,
      };
    case "manageSellOffer":
    case "manageBuyOffer":
    case "createPassiveSellOffer":
      return { ...base, assets: [assetName(op.selling), assetName(op.buying)] };
    case "changeTrust":
      return op.line instanceof Asset ? { ...base, asset: assetName(op.line) } : base;
    case "clawback":
      return { ...base, asset: assetName(op.asset), amount: op.amount };
    case "invokeHostFunction":
      return invocation(op.func, base);
    default:
      return base;
  }
}

/** A contract call's contract and function; a token `transfer(from, to, amount)` also names `to` as its destination. */
function invocation(fn: xdr.HostFunction, base: { type: string }): OpSummary {
  if (fn.type !== "hostFunctionTypeInvokeContract") return base;
  const call = fn.invokeContract;
  const contract = Address.fromScAddress(call.contractAddress).toString();
  const name = call.functionName.toString();
  const to = name === "transfer" && call.args.length === 3 ? address(call.args[1]) : null;
  return { ...base, contract, function: name, ...(to ? { destination: to } : {}) };
}

/** Every operation of a transaction, summarized. */
export const summarizeAll = (ops: Operation[]): OpSummary[] => ops.map(summarize);
