/**
 * What a stage allocates on the JavaScript heap, per request: the stage runs in a process of its own
 * with JavaScriptCore's GC log on (`BUN_JSC_logGC=1`), between two full collections; the heap's
 * growth from each collection's end to the next one's start, summed, is what the calls allocated
 * (what they freed at once included), less what the loop alone allocates (an await per call).
 * `bun bench/path/allocation.ts INDEX` is that process (`base`: the loop alone).
 */
import { stageList } from "./stages.ts";

const CALLS = 20_000;

/** KB allocated per request by stage `index` of stageList() (one call stands for `per` requests). */
export function allocatedKb(index: number, per: number): number {
  return (allocatedPerCall(String(index)) - (loop ??= allocatedPerCall("base"))) / per;
}
let loop: number | undefined;

/** KB the heap grew by per call of stage `which`, in a process of its own. */
function allocatedPerCall(which: string): number {
  const p = Bun.spawnSync([process.execPath, import.meta.path, which], {
    env: { ...process.env, BUN_JSC_logGC: "1" },
    stdout: "ignore",
    stderr: "pipe",
  });
  const log = p.stderr.toString();
  if (p.exitCode !== 0) throw new Error(`allocation of stage ${which}: exit ${p.exitCode}: ${log.slice(-500)}`);
  const start = log.indexOf("MARK start");
  const ends = [...log.slice(0, start).matchAll(/=> (\d+)kb, p=/g)];
  let last = Number(ends.at(-1)?.[1] ?? Number.NaN);
  let grown = 0;
  const after = log.slice(start);
  const stop = after.indexOf("MARK end");
  for (const m of after.matchAll(/START M (\d+)kb => \w+|=> (\d+)kb, p=/g)) {
    if (m[1]) {
      grown += Number(m[1]) - last;
      if (m.index! > stop) break; // the full collection after the calls: the heap they left
    } else last = Number(m[2]);
  }
  return grown / CALLS;
}

if (import.meta.main) {
  const which = process.argv[2]!;
  const s = which === "base" ? { fn: (i: number) => i } : (await stageList())[Number(which)]!;
  for (let i = 0; i < 1000; i++) await s.fn(i); // the code compiled, the caches filled
  Bun.gc(true);
  console.error("MARK start");
  for (let i = 0; i < CALLS; i++) await s.fn(i);
  console.error("MARK end");
  Bun.gc(true);
}
