/**
 * A project actor's checkpoint: what is written (without its open holds, which die with the process,
 * and with its rate-limit bucket, kept beside the actor: rate-bucket.ts, so that a restart does not
 * fill a client's bucket again), when, and how an actor is restored from it.
 */
import { createActor } from "xstate";
import { projectMachine, type ProjectActor, type ProjectInput } from "../../../actors/projects/project.machine.ts";
import type { Bucket } from "../../../actors/projects/rate-bucket.ts";
import type { CheckpointStore } from "../../store/checkpoints.ts";
import type { Logger } from "../../kernel/log.ts";

/**
 * A checkpoint without the open holds: they die with the process (a restored actor is sent SYNC,
 * which clears them), and a busy project holds thousands, which each checkpoint would otherwise
 * walk and serialize (they are left out before the snapshot is persisted, not after). The bucket
 * is written in the context, where older versions kept it.
 */
export function withoutHolds(actor: ProjectActor, bucket: Bucket | undefined): unknown {
  const s = actor.getSnapshot();
  return projectMachine.getPersistedSnapshot({
    ...s,
    context: { ...s.context, holds: new Map(), held: 0n, testnetHeld: 0n, ...bucket },
  });
}

/**
 * A checkpoint made ready to restore, and the bucket it kept (null: none, a full one then): an empty
 * Map of holds (JSON keeps none; older checkpoints held a plain object).
 */
export function restorable(checkpoint: unknown): { snapshot: never; bucket: Bucket | null } {
  const c = checkpoint as { context: Record<string, unknown> };
  const { tokens, refilledAt, ...context } = c.context;
  // older checkpoints have no testnet spend: none counted yet
  const testnetSpent = context.testnetSpent ?? 0n;
  const snapshot = { ...c, context: { ...context, holds: new Map(), held: 0n, testnetSpent, testnetHeld: 0n } };
  const kept = typeof tokens === "number" && typeof refilledAt === "number";
  return { snapshot: snapshot as never, bucket: kept ? { tokens, refilledAt } : null };
}

/** An actor started from its checkpoint (none: a new one), and the bucket the checkpoint kept. */
export function restore(checkpoint: unknown, input: ProjectInput): { actor: ProjectActor; bucket: Bucket | null } {
  const restored = checkpoint ? restorable(checkpoint) : null;
  const actor = createActor(projectMachine, restored ? { snapshot: restored.snapshot, input } : { input });
  actor.start();
  return { actor, bucket: restored?.bucket ?? null };
}

/**
 * When the actors' checkpoints are written: `debounceMs` after a change of the actor or of its bucket
 * (one write for the changes meanwhile), each under its key, for `ttl` seconds when it has one.
 */
export class CheckpointWriter {
  private readonly places = new WeakMap<ProjectActor, { key: string; ttl?: number }>();
  private readonly due = new Map<ProjectActor, ReturnType<typeof setTimeout>>();

  /** `bucket`: an actor's rate-limit bucket; `before`: what is owed to an actor before it is written. */
  constructor(
    private readonly store: CheckpointStore,
    private readonly debounceMs: number,
    private readonly log: Logger,
    private readonly bucket: (actor: ProjectActor) => Bucket | undefined,
    private readonly before: (actor: ProjectActor) => void,
  ) {}

  /** Writes `actor`'s checkpoint under `key` after each change from now on. */
  watch(actor: ProjectActor, key: string, ttl?: number): void {
    this.places.set(actor, { key, ttl });
    actor.subscribe(() => this.changed(actor));
  }

  /** The key of a watched actor's checkpoint (also its global bucket's name). */
  key(actor: ProjectActor): string | undefined {
    return this.places.get(actor)?.key;
  }

  /** The actor or its bucket changed: its checkpoint is due. */
  changed(actor: ProjectActor): void {
    if (this.due.has(actor) || !this.places.has(actor)) return;
    this.due.set(
      actor,
      setTimeout(() => this.flush(actor), this.debounceMs),
    );
  }

  /** Writes the actor's checkpoint now if one is due. */
  flush(actor: ProjectActor): Promise<void> {
    this.before(actor);
    const timer = this.due.get(actor);
    const place = this.places.get(actor);
    if (!timer || !place) return Promise.resolve();
    clearTimeout(timer);
    this.due.delete(actor);
    return this.store
      .set(place.key, withoutHolds(actor, this.bucket(actor)), place.ttl)
      .catch((e) => this.log.warn({ err: String(e), key: place.key }, "writing a checkpoint failed"));
  }

  /** Writes every checkpoint due. */
  async flushAll(): Promise<void> {
    await Promise.all([...this.due.keys()].map((a) => this.flush(a)));
  }
}
