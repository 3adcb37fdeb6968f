/**
 * A project actor's checkpoint as written and as restored: without its open holds, which die with
 * the process.
 */
import { projectMachine, type ProjectActor } from "../../../actors/projects/project.machine.ts";

/**
 * A checkpoint without the open holds: they die with the process (a restored actor is sent SYNC,
 * which clears them), and a busy project holds thousands, which each checkpoint would otherwise
 * walk and serialize (they are left out before the snapshot is persisted, not after).
 */
export function withoutHolds(actor: ProjectActor): unknown {
  const s = actor.getSnapshot();
  return projectMachine.getPersistedSnapshot({
    ...s,
    context: { ...s.context, holds: new Map(), held: 0n, testnetHeld: 0n },
  });
}

/** A checkpoint made ready to restore: an empty Map of holds (JSON keeps none; older checkpoints held a plain object). */
export function restorable(checkpoint: unknown): never {
  const c = checkpoint as { context: Record<string, unknown> };
  // older checkpoints have no testnet spend: none counted yet
  const testnetSpent = c.context.testnetSpent ?? 0n;
  return { ...c, context: { ...c.context, holds: new Map(), held: 0n, testnetSpent, testnetHeld: 0n } } as never;
}
