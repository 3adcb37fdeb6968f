/**
 * Submissions as resources: GET /v1/transactions/{hash} (either hash; scoped to the caller's
 * project and its key's network, or to anonymous testnet submissions for anonymous callers; `wait`
 * holds the request until the status is settled) and the admin API's list, newest first with a cursor.
 */
import { SETTLED_STATUSES, STATUSES, type SubmissionStatus } from "../../../actors/sponsor/submission.machine.ts";
import { RelayError, validationError } from "../../kernel/errors.ts";
import type { Static } from "@sinclair/typebox";
import type { FoundSubmission, SubmissionViews, SubmissionView } from "./submission-views.repo.ts";
import type { TransactionList, TransactionView } from "./transaction.model.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import { WaiterSlots, Waker } from "./waiters.ts";

export const MAX_WAIT_SECONDS = 30;
const HASH = /^[0-9a-f]{64}$/;

/**
 * Whose submissions a look-up may see: a project's (or the anonymous relay's, projectId null) on one
 * network, its key's (an sr_test_ key never sees mainnet); or, for the admin API, all.
 */
export type Caller = { projectId: string | null; network: NetworkName; ip?: string } | { all: true };

/** What wakes a waiting look-up: the event feed's transaction.status events of its hash. */
export interface HashWatch {
  watchHashes(hashes: string[], wake: (e: { data: unknown }) => void): () => void;
}

export interface WaitOptions {
  /** Tells a waiting look-up its transaction's status changed (none: it reads every `pollMs`). */
  watch?: HashWatch;
  /** How often a waiting look-up reads the submission anyway (WAIT_POLL_MS; default 2 s). */
  pollMs?: number;
  /** Look-ups that may wait at once per project, and per client IP without a key, on this instance. */
  perProject?: number;
  perIp?: number;
  /** The transactions this instance holds for their predecessors (order flow). */
  orders?: { waitingFor(network: NetworkName, innerHash: string): HeldView | null };
  /** The outcomes this process answered: a read after an answer waits for their write. */
  outcomes?: { written(): Promise<void> };
  /** The relay's shutdown: a waiting look-up then answers the current status at once. */
  lifecycle?: { readonly draining: boolean };
}

import type { HeldView } from "../sponsor/order/sequence-gate.ts";
import { waitsFor } from "../../../actors/sponsor/account.machine.ts";

const notFound = () => new RelayError("NOT_FOUND", "no transaction with this hash is visible to this caller");

export class TransactionsService {
  constructor(
    private readonly views: SubmissionViews,
    private readonly wait: WaitOptions = {},
  ) {
    this.slots = new WaiterSlots({ perProject: wait.perProject ?? 100, perIp: wait.perIp ?? 10 });
  }

  private readonly slots: WaiterSlots;

  /**
   * The caller's submission with this hash (inner or fee-bump), after waiting up to `waitSeconds` for
   * it to settle: woken by its status events (the event feed), read again every `pollMs` anyway.
   */
  async lookup(caller: Caller, hash: string, waitSeconds = 0, signal?: AbortSignal): Promise<TransactionView> {
    const h = hash.toLowerCase();
    if (!HASH.test(h))
      throw validationError("a transaction hash is 64 hexadecimal characters", { field: "hash", reason: "bad_hash" });
    const scoped = "all" in caller ? null : caller;
    const waits = waitSeconds > 0 && scoped !== null;
    const release = scoped && waits ? this.slots.take(scoped) : () => {};
    const waker = new Waker();
    // only a final status ends the wait: the events of other changes wake nobody
    const onEvent = (e: { data: unknown }) => {
      if (SETTLED_STATUSES.includes((e.data as { status?: string } | null)?.status as SubmissionStatus)) waker.wake();
    };
    // watched before the first read: a change committed after it wakes the waiter
    const unwatch = [waits && this.wait.watch ? this.wait.watch.watchHashes([h], onEvent) : () => {}];
    try {
      const deadline = Date.now() + Math.min(waitSeconds, MAX_WAIT_SECONDS) * 1000;
      const over = () => Date.now() >= deadline || signal?.aborted === true || this.wait.lifecycle?.draining === true;
      for (let first = true; ; first = false) {
        await this.wait.outcomes?.written();
        const found = await this.views.byHash(h);
        if (!found || !visible(caller, found)) throw notFound();
        const settled = SETTLED_STATUSES.includes(found.view.status as SubmissionStatus);
        if (settled || !waits || over()) {
          const waitingFor = settled ? null : this.waitingFor(found);
          return {
            ...found.view,
            ...(waitingFor ? { waitingFor } : {}),
            attempts: await this.views.attempts(found.id),
          };
        }
        // the other hash's events too (a fee-bump's hash changes when it is sent again: the inner one does not)
        if (first && this.wait.watch)
          unwatch.push(this.wait.watch.watchHashes([found.view.hash, found.view.innerHash], onEvent));
        await waker.sleep(Math.min(this.wait.pollMs ?? 2000, deadline - Date.now()), over);
      }
    } finally {
      for (const off of unwatch) off();
      release();
    }
  }

  /**
   * What a pending submission waits for (order flow): its predecessor's number, from its row while it
   * is held (on any instance), or from this instance's order when it was sent and is held again.
   */
  private waitingFor(found: FoundSubmission): HeldView["waitingFor"] | null {
    if (found.held) {
      const { account, sequence } = found.held;
      return { account, sequence, waitingFor: waitsFor(BigInt(sequence)).toString() };
    }
    const network = found.view.network as NetworkName;
    return this.wait.orders?.waitingFor(network, found.view.innerHash)?.waitingFor ?? null;
  }

  /** The admin API's look-up: any project's submission by either hash, with its attempts and project. */
  async adminLookup(hash: string): Promise<TransactionView & { projectId: string | null }> {
    const view = await this.lookup({ all: true }, hash);
    const found = await this.views.byHash(hash.toLowerCase());
    return { ...view, projectId: found?.projectId ?? null };
  }

  /** The admin list: newest first, `limit` per page, `cursor` from the previous page's `nextCursor`. */
  async list(q: {
    project?: string;
    status?: string;
    network?: string;
    limit?: number;
    cursor?: string;
  }): Promise<Static<typeof TransactionList>> {
    if (q.status !== undefined && !STATUSES.includes(q.status as SubmissionStatus))
      throw validationError(`status must be one of ${STATUSES.join(", ")}`, { field: "status", reason: "enum" });
    const limit = q.limit ?? 50;
    await this.wait.outcomes?.written();
    const rows = await this.views.list({
      projectId: q.project,
      status: q.status,
      network: q.network,
      limit,
      before: q.cursor === undefined ? undefined : readCursor(q.cursor),
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      transactions: page.map((r) => ({ ...r.view, projectId: r.projectId })),
      nextCursor: rows.length > limit && last ? writeCursor(last.createdAt, last.id) : null,
    };
  }
}

/** Another project's, another network's and an unknown submission are the same 404. */
function visible(caller: Caller, s: { projectId: string | null; view: SubmissionView }): boolean {
  if ("all" in caller) return true;
  return s.projectId === caller.projectId && s.view.network === caller.network;
}

const writeCursor = (createdAt: string, id: string) =>
  Buffer.from(JSON.stringify([createdAt, id])).toString("base64url");

function readCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, "base64url").toString()) as unknown[];
    if (typeof createdAt === "string" && typeof id === "string" && !Number.isNaN(Date.parse(createdAt)))
      return { createdAt, id };
  } catch {}
  throw validationError("cursor is not one this API answered", { field: "cursor", reason: "bad_cursor" });
}
