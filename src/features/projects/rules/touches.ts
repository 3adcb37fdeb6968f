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

/** An ScAddress argument as G... or C... (a muxed M... as its account), or null. */
function address(v: xdr.ScVal | undefined): string | null {
  if (!v) return null;
  try {
    const native = scValToNative(v);
    if (typeof native !== "string") return null;
    if (/^[GC][A-Z2-7]{55}$/.test(native)) return native;
    return /^M[A-Z2-7]{68}$/.test(native) && account(native) !== native ? account(native) : null;
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
      // a pool share's trustline holds both of its assets
      return op.line instanceof Asset
        ? { ...base, asset: assetName(op.line) }
        : { ...base, assets: [op.line.assetA, op.line.assetB].map(assetName) };
    case "liquidityPoolDeposit":
    case "liquidityPoolWithdraw":
    case "claimClaimableBalance":
    case "clawbackClaimableBalance":
      // named by a pool's or a balance's id: which assets move is in the ledger, not in the operation
      return { ...base, assetUnknown: true };
    case "clawback":
      return { ...base, asset: assetName(op.asset), amount: op.amount };
    case "invokeHostFunction":
      return invocation(op.func, base);
    default:
      return base;
  }
}

/**
 * Where a token function (SEP-41, and a Stellar Asset Contract's admin functions) sends value: the index of
 * the argument that receives it, and how many arguments the function takes. `null`: value only leaves
 * (burned, clawed back): no destination.
 */
const TOKEN_RECEIVERS: Record<string, { args: number; to: number | null }> = {
  transfer: { args: 3, to: 1 }, // (from, to, amount)
  transfer_from: { args: 4, to: 2 }, // (spender, from, to, amount)
  approve: { args: 4, to: 1 }, // (from, spender, amount, live_until_ledger): the spender may take it
  mint: { args: 2, to: 0 }, // (to, amount)
  set_admin: { args: 1, to: 0 }, // (new_admin): who then controls the asset
  burn: { args: 2, to: null }, // (from, amount)
  burn_from: { args: 3, to: null }, // (spender, from, amount)
  clawback: { args: 2, to: null }, // (from, amount)
};

/**
 * A contract call's contract and function, and where it sends value when it is a token function
 * (`destinationUnknown` when it is not one: the relay cannot tell). Which asset it moves is the
 * contract's: `withAssetContracts` names it for a Stellar Asset Contract; any other is `assetUnknown`.
 */
function invocation(fn: xdr.HostFunction, base: { type: string }): OpSummary {
  if (fn.type !== "hostFunctionTypeInvokeContract") return { ...base, destinationUnknown: true, assetUnknown: true };
  const call = fn.invokeContract;
  const contract = Address.fromScAddress(call.contractAddress).toString();
  const name = call.functionName.toString();
  const token = TOKEN_RECEIVERS[name];
  const called: OpSummary = { ...base, contract, function: name, assetUnknown: true };
  if (!token || call.args.length !== token.args) return { ...called, destinationUnknown: true };
  if (token.to === null) return called;
  const to = address(call.args[token.to]);
  return to ? { ...called, destination: to } : { ...called, destinationUnknown: true };
}

/** Every operation of a transaction, summarized. */
export const summarizeAll = (ops: Operation[]): OpSummary[] => ops.map(summarize);

/**
 * The summaries with each call to the Stellar Asset Contract of an asset in `assets` (on the network of
 * `passphrase`) naming that asset: a contract's id is the hash of its asset and network, so the listed
 * assets' contracts are worked out, not looked up.
 */
export function withAssetContracts(ops: OpSummary[], assets: string[], passphrase: string): OpSummary[] {
  if (!ops.some((o) => o.contract)) return ops;
  const byContract = new Map<string, string>();
  for (const a of assets) {
    const [code, issuer] = a.split(":");
    const asset = a === "native" ? Asset.native() : issuer ? new Asset(code!, issuer) : null;
    if (asset) byContract.set(asset.contractId(passphrase), a);
  }
  return ops.map((o) => {
    const asset = o.contract ? byContract.get(o.contract) : undefined;
    if (!asset) return o;
    const { assetUnknown: _, ...known } = o;
    return { ...known, asset };
  });
}
