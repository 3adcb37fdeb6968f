/**
 * Fee-source leases of submissions answered 504 whose fee-bump may still be queued, by submission
 * id: the channel keeps the hold until the submission is resolved (a retry takes the lease back).
 */
import type { Confirmed } from "../../network/ledger-watcher.ts";
import type { FeeLease } from "../pool/channel-pool.ts";

export class ParkedLeases {
  private readonly leases = new Map<string, FeeLease>();

  /** Keeps a fee-bump's lease past a 504 (one per submission). */
  park(id: string, lease: FeeLease): void {
    this.leases.get(id)?.end(0n);
    this.leases.set(id, lease);
  }
  /** Ends a parked lease once its submission is resolved: with the fee, if its channel paid it. */
  unpark(id: string, found: Confirmed | null): void {
    const lease = this.leases.get(id);
    if (!lease) return;
    this.leases.delete(id);
    const paid = found && (!("feeSource" in found) || found.feeSource === lease.keypair.publicKey());
    lease.end(paid ? found.feeCharged : 0n);
  }
  /** Takes a submission's parked lease (a retry sends with it), or null. */
  take(id: string): FeeLease | null {
    const lease = this.leases.get(id) ?? null;
    this.leases.delete(id);
    return lease;
  }

  /** Puts back a lease `take` gave, when the retry could not use it. */
  putBack(id: string, lease: FeeLease): void {
    this.leases.set(id, lease);
  }
}
