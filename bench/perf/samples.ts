/**
 * `perf script -F tid,ip,sym,dso` output (after `perf inject --jit`: JavaScriptCore's compiled functions
 * named `JSC-<tier>: name#id`) read into samples, and summed the ways bench:perf prints them: each
 * thread's share, and for the main thread its time by JavaScript function (with the native code it
 * called, which perf cannot name in Bun's stripped binary), by function with everything under it,
 * and the kernel's part by system call.
 */

export interface Frame {
  /** `[unknown]` (Bun's stripped code), a kernel or libc function, `JSC-FTL: name#id`... */
  sym: string;
  kind: "js" | "kernel" | "native";
}
export interface Sample {
  tid: number;
  /** Innermost first. */
  frames: Frame[];
}

const FRAME = /^\s*[0-9a-f]+\s+(.*?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)\s*$/;

/** Reads `perf script -F tid,ip,sym,dso`: a block per sample, its thread id, then a frame a line. */
export function readSamples(script: string): Sample[] {
  const out: Sample[] = [];
  for (const block of script.split("\n\n")) {
    const lines = block.split("\n").filter((l) => l.trim());
    const head = /^\s*(\d+)\s*$/.exec(lines[0] ?? "");
    if (!head) continue;
    const frames: Frame[] = [];
    for (const l of lines.slice(1)) {
      const m = FRAME.exec(l);
      if (!m) continue;
      const dso = m[2]!;
      const kind = dso.includes("kernel.kallsyms") ? "kernel" : /jitted-\d+-\d+\.so$/.test(dso) ? "js" : "native";
      frames.push({ sym: m[1]!, kind });
    }
    out.push({ tid: Number(head[1]), frames });
  }
  return out;
}

/**
 * A compiled JavaScript function's name (its tiers merged), or null for any other frame; JavaScriptCore's
 * thunks (call trampolines, bound functions, FTL thunks) are not functions of the code and count as native.
 */
export function jsName(f: Frame): string | null {
  const m = /^JSC-(\w+): (.*?)(?:#[A-Za-z0-9]+)?$/.exec(f.sym);
  if (f.kind !== "js" || !m || m[1]!.endsWith("Thunk")) return null;
  return m[2] || "(anonymous)";
}

const SYSCALL = /^__(?:x64|se)_sys_(\w+)$/;

/** What a kernel sample was doing: its system call, a page fault, or the rest (interrupts, the scheduler). */
function kernelWork(frames: Frame[]): string {
  for (const f of frames) {
    const m = SYSCALL.exec(f.sym);
    if (m) return m[1]!;
    if (f.sym === "asm_exc_page_fault" || f.sym === "exc_page_fault") return "(page fault)";
  }
  return "(interrupts, scheduling)";
}

export interface Summary {
  samples: number;
  threads: [string, number][];
  main: number;
  kinds: [string, number][];
  /** Self time by JavaScript function, native code under it counted as its own. */
  self: [string, number][];
  /** Samples with the function anywhere on the stack (once each). */
  inclusive: [string, number][];
  kernel: [string, number][];
}

const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

/** Sums the samples; `names` gives each thread id's name, `mainTid` is the JavaScript thread. */
export function summarize(samples: Sample[], names: Map<number, string>, mainTid: number): Summary {
  const threads = new Map<string, number>();
  const kinds = new Map<string, number>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const kernel = new Map<string, number>();
  let main = 0;
  for (const s of samples) {
    add(threads, names.get(s.tid) ?? String(s.tid));
    if (s.tid !== mainTid) continue;
    main++;
    const leaf = s.frames[0];
    const js = s.frames.map(jsName);
    const innermost = js.find((n) => n !== null) ?? "(no JavaScript on the stack: the event loop, the collector)";
    if (leaf?.kind === "kernel") {
      add(kinds, "kernel");
      add(kernel, kernelWork(s.frames));
    } else add(kinds, leaf?.kind === "js" ? "compiled JavaScript" : "native (Bun, JavaScriptCore, libc)");
    add(self, innermost);
    for (const n of new Set(js)) if (n) add(inclusive, n);
  }
  return {
    samples: samples.length,
    threads: sorted(threads),
    main,
    kinds: sorted(kinds),
    self: sorted(self),
    inclusive: sorted(inclusive),
    kernel: sorted(kernel),
  };
}
