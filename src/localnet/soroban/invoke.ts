/** Runs a host function against the built-in contracts, with the diagnostic fn_call/fn_return events. */
import type { HostFunctionW, ScValW } from "../../stellar/xdr.ts";
import { xdrText } from "../../stellar/xdr.ts";
import { type Host, HostError, SCE, SCEC, sym } from "./host.ts";
import { builtinContracts, instanceKey, TEST_CONTRACT_ID, type BuiltinContract } from "./contracts.ts";
import { INSTRUCTIONS } from "./contracts.ts";

export const NO_WASM_MESSAGE =
  "localnet does not run WASM: uploading or deploying contracts is not supported; " +
  `use the built-in contracts (the native asset contract, or the test contract ${TEST_CONTRACT_ID})`;

export const NO_ASSET_CONTRACT_MESSAGE =
  "localnet does not deploy Stellar Asset Contracts for credit assets: only the native asset's is built in " +
  "(trustlines, credit payments and their events work through classic operations)";

/** Whether a host function deploys an asset's contract (a creation from an asset). */
function deploysAssetContract(fn: HostFunctionW): boolean {
  const f = fn as unknown as Record<string, { contractIdPreimage?: { type: number } } | undefined>;
  return (f.createContract ?? f.createContractV2)?.contractIdPreimage?.type === 1;
}

const cache = new Map<string, Map<string, BuiltinContract>>();
function contractsFor(passphrase: string): Map<string, BuiltinContract> {
  let m = cache.get(passphrase);
  if (!m) cache.set(passphrase, (m = builtinContracts(passphrase)));
  return m;
}

/** Invokes `fn`; throws HostError on a trap. */
export function invokeHostFunction(host: Host, fn: HostFunctionW, passphrase: string): ScValW {
  if (deploysAssetContract(fn)) throw new HostError(SCE.context, SCEC.invalidAction, NO_ASSET_CONTRACT_MESSAGE);
  if (fn.type !== 0) throw new HostError(SCE.context, SCEC.invalidAction, NO_WASM_MESSAGE);
  const { contractAddress, functionName, args } = fn.invokeContract;
  const name = xdrText(functionName);
  if (contractAddress.type !== 1)
    throw new HostError(SCE.value, SCEC.unexpectedType, "can only invoke a contract address");
  const id = contractAddress.contractId;
  host.charge(INSTRUCTIONS.invoke);
  host.diagnostic(null, [sym("fn_call"), { type: 13, bytes: id } as ScValW, sym(name)], {
    type: 16,
    vec: args,
  } as ScValW);
  const contract = contractsFor(passphrase).get(Buffer.from(id).toString("hex"));
  if (!contract) {
    host.contractData(instanceKey(contractAddress), false);
    throw new HostError(
      SCE.storage,
      SCEC.missingValue,
      "contract instance is missing: localnet only has its built-in contracts",
    );
  }
  const ret = contract.call(host, name, args);
  host.diagnostic(id, [sym("fn_return"), sym(name)], ret);
  return ret;
}
