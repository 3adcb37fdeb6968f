/**
 * What an API key may call (its scopes): sponsor (POST /v1/sponsor), simulate, estimate, read
 * (look-ups and the event stream). The admin API validates them, the store keeps them, each route
 * requires one.
 */
export const KEY_SCOPES = ["sponsor", "simulate", "estimate", "read"] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];
