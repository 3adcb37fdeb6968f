/** Network parameters of the Stellar protocol, as the public networks (and the embedded localnet) set them; stroops. */

/** The lowest inclusion fee per operation a transaction may bid. */
export const BASE_FEE = 100n;

/** The base reserve: an account must hold (2 + its subentries) of them. */
export const BASE_RESERVE = 5_000_000n;

/** The most operations one transaction may have. */
export const MAX_OPS_PER_TX = 100;
