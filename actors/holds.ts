/**
 * Open holds by id and their running total, for the machines that keep them (a channel's fees in
 * flight, a project's reservations). A busy relay keeps thousands open: copying the record or
 * summing it on every event made each event cost O(open holds). The owning machine updates the
 * record in place, in its own assign (nothing else holds a reference to it: persisted snapshots are
 * serialized copies), and keeps the total beside it; both functions answer the new total.
 */
export function putHold<T>(holds: Record<string, T>, total: bigint, id: string, hold: T, amount: (h: T) => bigint) {
  const old = holds[id];
  holds[id] = hold;
  return total - (old === undefined ? 0n : amount(old)) + amount(hold);
}

export function dropHold<T>(holds: Record<string, T>, total: bigint, id: string, amount: (h: T) => bigint): bigint {
  const old = holds[id];
  if (old === undefined) return total;
  delete holds[id];
  return total - amount(old);
}
