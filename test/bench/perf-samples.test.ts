/** bench:perf's reading of `perf script`: samples by thread, JavaScript function (thunks skipped), kind and system call. */
import { expect, test } from "bun:test";
import { readSamples, summarize } from "../../bench/perf/samples.ts";

const BUN = "(/usr/lib/node_modules/bun/bin/bun.exe)";
const script = `7 
	         194a664 [unknown] ${BUN}
	              a7 JSC-Thunk: CallTrampoline (/tmp/jd/jitted-7-73.so)
	            1258 JSC-FTL: decodeTransaction#CgW8CH (/tmp/jd/jitted-7-4339.so)
	             6a8 JSC-DFG: start#CmBn9q (/tmp/jd/jitted-7-4019.so)

7 
	ffffffff8a2b3c4d tcp_sendmsg+0x1d ([kernel.kallsyms])
	ffffffff8a2b3c00 __x64_sys_sendto+0x10 ([kernel.kallsyms])
	         18562c4 __send (/usr/lib/x86_64-linux-gnu/libc.so.6)
	            15fe JSC-FTL: handle#ApaQ4C (/tmp/jd/jitted-7-4081.so)

7 
	             c1e JSC-FTL: start#Dd00aa (/tmp/jd/jitted-7-3482.so)
	            15fe JSC-FTL: #ApaQ4C (/tmp/jd/jitted-7-4081.so)

9 
	         1d12708 [unknown] ${BUN}
`;

test("samples are summed by thread, by the innermost function (native under it its own), by kind and by system call", () => {
  const s = summarize(
    readSamples(script),
    new Map([
      [7, "bun"],
      [9, "HeapHelper"],
    ]),
    7,
  );
  expect(s.samples).toBe(4);
  expect(s.threads).toEqual([
    ["bun", 3],
    ["HeapHelper", 1],
  ]);
  expect(s.main).toBe(3);
  expect(new Map(s.kinds)).toEqual(
    new Map([
      ["native (Bun, JavaScriptCore, libc)", 1],
      ["kernel", 1],
      ["compiled JavaScript", 1],
    ]),
  );
  // the thunk is skipped: the native code under it is decodeTransaction's; the kernel's send is handle's
  expect(new Map(s.self)).toEqual(
    new Map([
      ["decodeTransaction", 1],
      ["handle", 1],
      ["start", 1],
    ]),
  );
  // two tiers of start are one function; an unnamed one is (anonymous)
  expect(new Map(s.inclusive).get("start")).toBe(2);
  expect(new Map(s.inclusive).get("(anonymous)")).toBe(1);
  expect(s.kernel).toEqual([["sendto", 1]]);
});
