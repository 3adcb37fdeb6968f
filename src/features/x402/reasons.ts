/**
 * The x402 reason codes the facilitator answers (`invalidReason` of /x402/verify, `errorReason` of
 * /x402/settle): those of the `exact` scheme on Stellar (x402's scheme spec and `@x402/stellar`'s
 * reference facilitator), plus the few this relay adds, marked. docs/x402.md lists them.
 */
export const X402_REASONS = {
  invalid_x402_version: "x402Version is not 2 (the body's or the payload's)",
  unsupported_scheme: "the scheme is not exact",
  network_mismatch: "the payload's accepted network is not the requirements' network",
  invalid_network: "not stellar:pubnet or stellar:testnet, or a network this relay does not serve",
  invalid_payment_requirements: "relay: the requirements lack a field or have one of the wrong form",
  invalid_exact_stellar_payload_malformed: "payload.transaction is missing or not a transaction envelope",
  invalid_exact_stellar_payload_wrong_operation:
    "not exactly one invokeHostFunction calling a contract, or an operation with a source account of its own",
  invalid_exact_stellar_payload_unsafe_tx_or_op_source: "a relay account is the transaction's or operation's source",
  invalid_exact_stellar_payload_wrong_asset: "the invoked contract is not the required asset",
  invalid_exact_stellar_payload_wrong_function_name: "not transfer(from, to, amount)",
  invalid_exact_stellar_payload_facilitator_is_payer: "a relay account is the transfer's from",
  invalid_exact_stellar_payload_wrong_recipient: "to is not payTo",
  invalid_exact_stellar_payload_wrong_amount: "amount is not the required amount",
  invalid_exact_stellar_payload_no_auth_entries: "no authorization entries",
  invalid_exact_stellar_payload_unsupported_credential_type:
    "source-account credentials (address, AddressV2 and with-delegates credentials are accepted)",
  invalid_exact_stellar_payload_facilitator_in_auth: "a relay account in an authorization entry (delegates included)",
  invalid_exact_stellar_payload_has_subinvocations: "an authorization entry authorizes more than the transfer",
  invalid_exact_stellar_signature_expiration_too_far:
    "an entry expires later than currentLedger + ceil(maxTimeoutSeconds / 5) + 2",
  invalid_exact_stellar_signature_expired: "relay: an entry expires before a settlement can land (next ledger + 1)",
  invalid_exact_stellar_payload_missing_payer_signature: "the payer's entry is not signed",
  invalid_exact_stellar_payload_unexpected_pending_signatures: "another address's entry is not signed",
  invalid_exact_stellar_payload_simulation_failed:
    "the simulation (enforcing the signatures) failed: an underfunded payer, a bad signature, a spent nonce...",
  invalid_exact_stellar_payload_event_not_transfer: "the simulation emits a contract event that is not a transfer",
  invalid_exact_stellar_payload_event_wrong_asset: "a transfer event of another contract",
  invalid_exact_stellar_payload_no_transfer_events: "the simulation emits no transfer event",
  invalid_exact_stellar_payload_multiple_transfers: "the simulation emits more than one transfer event",
  invalid_exact_stellar_payload_event_wrong_from: "the transfer event's from is not the payer",
  invalid_exact_stellar_payload_event_wrong_to: "the transfer event's to is not payTo",
  invalid_exact_stellar_payload_event_wrong_amount: "the transfer event's amount is not the required amount",
  pay_to_not_declared:
    "relay: payTo is not among the addresses the settling project accepts payments to (its x402.payTo)",
  invalid_exact_stellar_payload_already_settled:
    "relay: this payment was settled already, or a settlement of it is running",
  settle_exact_stellar_transaction_submission_failed:
    "the relay refused or could not submit the settlement (errorMessage: its error code: credits, policy, limits...)",
  settle_exact_stellar_transaction_failed: "the settlement's transaction failed on chain (transaction: its hash)",
  unexpected_verify_error: "the network could not be asked (a retry may succeed)",
  unexpected_settle_error:
    "the settlement's outcome is not known yet (transaction: its hash when sent); settle again to learn it",
} as const;

export type X402Reason = keyof typeof X402_REASONS;
