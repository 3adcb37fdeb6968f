/**
 * The classic events' hand-written XDR (src/localnet/classic-events.ts) is byte for byte the SDK's
 * encoding of the same event: transfers, mints, burns, muxed destinations, short and long codes.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { Keypair, Networks } from "@stellar/stellar-sdk";
import { eventXdr, movementEvent } from "../../src/localnet/classic-events.ts";
import { X, networkId, toB64 } from "../../src/stellar/xdr.ts";

const NET = networkId(Networks.TESTNET);
const issuer = Keypair.random().publicKey();
const [a, b] = [Keypair.random().publicKey(), Keypair.random().publicKey()];

test("each movement's XDR is what the SDK's schema encodes for it", () => {
  fc.assert(
    fc.property(
      fc.constantFrom("native", `USD:${issuer}`, `LONGCODE123:${issuer}`, `X:${issuer}`),
      fc.constantFrom<[string, string]>([a, b], [issuer, a], [a, issuer]),
      fc.bigInt({ min: 1n, max: (1n << 63n) - 1n }),
      fc.option(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n })),
      (asset, [from, to], amount, toMuxedId) => {
        const e = movementEvent({ from, to, asset, amount, toMuxedId }, NET);
        expect(eventXdr(e)).toBe(toB64(X.contractEvent.encode(e)));
      },
    ),
    { numRuns: 300 },
  );
});
