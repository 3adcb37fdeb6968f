/**
 * Every `details.reason` the relay answers, in one place: a snake_case code a client can branch on
 * (the prose is the error's `message`). docs/api.md lists them. A leaf module: anyone may import it.
 */
export const REASONS = {
  // the request's shape (VALIDATION_ERROR, from the route's schema: details.field names the field)
  unknown_field: "a field the request does not take (details.suggestion: the closest known name)",
  missing_field: "a required field is missing",
  wrong_type: "a value of the wrong type (a number for a string, an object for a list...)",
  not_allowed: "a value outside a list of words (details.allowed)",
  out_of_range: "a number below its minimum or above its maximum",
  bad_format: "a string not of its pattern or format",
  bad_length: "a string or list too short or too long",
  duplicate_items: "a list that names an item twice",
  invalid: "a value the schema refuses otherwise",
  // hostile or unreadable input (VALIDATION_ERROR, before any work)
  unsupported_content_type: "a body that is not JSON",
  invalid_json: "a body that is not valid JSON",
  too_deep: "a body nesting arrays and objects deeper than the limit (details.limit)",
  control_character: "a control character in a string of the body or in the URL",
  reserved_key: "a body key naming a member of Object.prototype (details.key)",
  // a transaction or operation (VALIDATION_ERROR, details.field: transaction or operation)
  not_base64: "the XDR is not base64",
  not_an_envelope: "the bytes are not a TransactionEnvelope",
  trailing_bytes: "bytes after the TransactionEnvelope",
  no_operations: "a transaction without operations",
  too_many_operations: "more operations than the protocol allows",
  no_signatures: "an unsigned transaction sent to be sponsored",
  soroban_single_operation: "a Soroban transaction with more than one operation",
  missing_soroban_data: "a Soroban transaction without sorobanData (simulate and assemble it first)",
  not_simulatable: "a transaction that is not one invokeHostFunction, extendFootprintTtl or restoreFootprint",
  transaction_or_operation: "both or neither of transaction and operation",
  not_an_operation: "the bytes are not an Operation",
  not_invoke_host_function: "an operation (func+auth mode) that is not invokeHostFunction",
  operation_source_account: "an operation (func+auth mode) that names a source account",
  relay_account_credentials: "an operation whose authorization uses one of the relay's own accounts",
  // other request fields
  bad_idempotency_key: "an X-Idempotency-Key that is not 1 to 255 visible ASCII characters",
  not_an_event_id: "a Last-Event-ID that is not an event id",
  bad_hash: "a transaction hash that is not 64 hexadecimal characters",
  bad_cursor: "a cursor this API did not answer",
  enum: "a status filter outside its list (as not_allowed)",
  zero_amount: "a credit change of zero",
  not_an_integer: "a number that must be whole",
  bad_time_window: "a policy whose activeFrom is not before its activeUntil",
  not_available: "a feature this relay is not set up for",
  empty: "an empty list where at least one item is needed (a key's scopes)",
  not_a_time: "a time that is not ISO 8601 with a time zone",
  in_the_past: "a time that has passed already (a key's expiresAt)",
  reason_required: "a negative credit adjustment without a reason",
  // webhook URLs
  invalid_url: "a webhook URL that is not a URL",
  unsupported_scheme: "a webhook URL that is not http(s)",
  private_address: "a webhook host that is or resolves to a non-public address",
  unresolvable_host: "a webhook host that does not resolve",
  // authorization (FORBIDDEN, UNAUTHORIZED)
  wrong_network: "an API key used on the other network (details.keyNetwork)",
  project_suspended: "the project is suspended",
  another_project:
    "the transaction's submission is another project's (or the anonymous relay's): its record stays theirs",
  sign_in_failures: "too many wrong admin tokens from this client IP (RATE_LIMIT_EXCEEDED)",
  cross_site: "a console change sent from another site",
  csrf_token: "a console change without its X-CSRF-Token",
  admin_api_disabled: "the admin API is off: ADMIN_TOKEN is not set (NOT_FOUND)",
  // why an event stream ended (its last comment line)
  suspended: "the stream's project was suspended",
  deleted: "the stream's project is gone",
  // the channels protocol's management requests
  unknown_api_key: "an apiKey that is not a live key of this relay",
  unknown_project: "an apiKey whose project is not loaded",
  // networks and channels (NETWORK_UNAVAILABLE, SUBMISSION_TIMEOUT)
  unreachable: "the network did not answer",
  timeout: "the network answered too slowly (RPC_TIMEOUT_MS)",
  bad_answer: "the network answered what cannot be used",
  rpc_error: "the network answered an error",
  no_channel_available: "no channel account can pay now",
  channels_busy: "every channel account is busy with a transaction of its own (details.waiting: how many wait)",
  channel_balance: "no channel account has the fee free now (they are being topped up)",
  funder_balance: "the funder cannot top up or create channel accounts: fund it",
  stopping:
    "the relay is stopping: a transaction held for its predecessor was not sent yet (it is kept, and sent when the relay resumes)",
  signer_unavailable: "the relay's PKCS#11 signer (details.signer) could not sign; nothing was sent",
  // order flow (SUBMISSION_FAILED with result_codes.transaction tx_bad_seq; RATE_LIMIT_EXCEEDED)
  sequence_gap: "held for its predecessor, which never came (details.waitingFor)",
  predecessor_rejected: "its predecessor was refused before any ledger (details.rejected)",
  too_many_held: "the project (or client IP) holds as many transactions for their predecessors as it may",
  too_many_held_for_account: "the source account has as many transactions held as it may",
  too_many_held_bytes:
    "the project (or client IP) holds as many bytes of transactions for their predecessors as it may",
  // sponsorship rules (SPONSORSHIP_DENIED)
  approval_unavailable: "the project's approval server did not answer usably and its policy says deny",
  fee_exceeds_channel_balance: "the fee is more than any channel account holds",
  starting: "the channel pool is starting",
  not_configured: "the network has no channel pool (no funder secret)",
  shutting_down: "the relay is shutting down",
  pending: "an earlier submission of this transaction has no outcome yet",
  network_unavailable: "the network did not confirm receiving the transaction",
  fee_cap_reached: "surge replacement reached the fee cap",
  insufficient_credits: "the project's credits (the channels protocol's fee budget)",
} as const;

export type Reason = keyof typeof REASONS;
