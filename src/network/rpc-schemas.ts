/**
 * The shapes of the Stellar RPC answers the relay reads (the official OpenRPC document's, reduced to
 * the fields it uses; other fields may be present). An answer that does not match is not used.
 */
import { Type } from "@sinclair/typebox";

const Seq = Type.Integer({ minimum: 1, maximum: 2 ** 32 - 1 });
const B64 = Type.String({ pattern: "^[A-Za-z0-9+/]*={0,2}$" });
const Hex64 = Type.String({ pattern: "^[0-9a-fA-F]{64}$" });
const Stroops = Type.String({ pattern: "^[0-9]{1,19}$" });

export const LatestLedger = Type.Object({ sequence: Seq });

export const NetworkInfo = Type.Object({ passphrase: Type.String({ minLength: 1 }) });

export const TransactionsPage = Type.Object({
  transactions: Type.Union([
    Type.Array(
      Type.Object({
        status: Type.String(),
        txHash: Hex64,
        ledger: Seq,
        resultXdr: B64,
        applicationOrder: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 ** 20 - 1 })),
      }),
    ),
    Type.Null(),
  ]),
  latestLedger: Seq,
  /** The latest ledger's close time (unix seconds): when time bounds have passed. */
  latestLedgerCloseTimestamp: Type.Optional(Type.Integer({ minimum: 0 })),
  cursor: Type.String(),
});

export const TransactionInfo = Type.Object({
  status: Type.Union([Type.Literal("SUCCESS"), Type.Literal("FAILED"), Type.Literal("NOT_FOUND")]),
  latestLedger: Seq,
  ledger: Type.Optional(Seq),
  resultXdr: Type.Optional(B64),
  envelopeXdr: Type.Optional(B64),
});

export const SendResult = Type.Object({
  status: Type.Union([
    Type.Literal("PENDING"),
    Type.Literal("DUPLICATE"),
    Type.Literal("TRY_AGAIN_LATER"),
    Type.Literal("ERROR"),
  ]),
  hash: Hex64,
  latestLedger: Seq,
  errorResultXdr: Type.Optional(B64),
});

const Distribution = Type.Record(Type.String(), Type.Union([Stroops, Type.Number()]));
export const FeeStats = Type.Object({
  inclusionFee: Distribution,
  sorobanInclusionFee: Distribution,
  latestLedger: Seq,
});

export const LedgerEntries = Type.Object({
  entries: Type.Union([Type.Array(Type.Object({ key: B64, xdr: B64 })), Type.Null()]),
  latestLedger: Seq,
});

export const Simulation = Type.Object({
  latestLedger: Seq,
  error: Type.Optional(Type.String()),
  events: Type.Optional(Type.Array(B64)),
  transactionData: Type.Optional(B64),
  minResourceFee: Type.Optional(Stroops),
  results: Type.Optional(Type.Array(Type.Object({ auth: Type.Optional(Type.Array(B64)), xdr: B64 }))),
});
