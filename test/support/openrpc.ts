import { readFileSync } from "node:fs";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";

/** The parts of an OpenRPC document this helper reads. */
interface OpenRpcDocument {
  methods: { name: string; result: { schema: object } }[];
}

/** Key under which the whole document is registered with ajv, so `#/components/...` refs resolve. */
const DOCUMENT_ID = "stellar-rpc.openrpc.json";

const document: OpenRpcDocument = JSON.parse(
  readFileSync(new URL("../fixtures/stellar-rpc.openrpc.json", import.meta.url), "utf8"),
);

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(document, DOCUMENT_ID);

const validators = new Map<string, ValidateFunction>();

/** Names of the methods present in the OpenRPC document. */
export const openRpcMethods: string[] = document.methods.map((method) => method.name);

function validatorFor(method: string): ValidateFunction {
  const cached = validators.get(method);
  if (cached) return cached;
  const index = openRpcMethods.indexOf(method);
  if (index < 0) throw new Error(`Unknown Stellar RPC method in OpenRPC document: ${method}`);
  const validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/methods/${index}/result/schema` });
  validators.set(method, validate);
  return validate;
}

function describe(error: ErrorObject): string {
  const where = error.instancePath || "(result)";
  const allowed = error.keyword === "enum" ? ` ${JSON.stringify(error.params.allowedValues)}` : "";
  return `${where} ${error.message ?? error.keyword}${allowed}`;
}

/**
 * Validate a JSON-RPC `result` against the OpenRPC `result.schema` of `method`.
 * @returns human-readable errors such as `/latestLedger must be number`; empty when valid.
 * @throws Error when `method` is not in the OpenRPC document.
 */
export function validateRpcResult(method: string, result: unknown): string[] {
  const validate = validatorFor(method);
  return validate(result) ? [] : (validate.errors ?? []).map(describe);
}
