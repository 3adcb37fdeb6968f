/**
 * flock(2) through the C library (neither Node's nor Bun's fs has file locks). An flock belongs to
 * the open file description: it conflicts with every other descriptor, in this process or another,
 * and the kernel releases it when the last descriptor closes, also when the process is killed.
 */
import { dlopen, FFIType, read } from "bun:ffi";

export const LOCK_EX = 2;
export const LOCK_NB = 4;
export const LOCK_UN = 8;

/** The C library's names, tried in order (glibc, musl, macOS). */
const LIBRARIES =
  process.platform === "darwin"
    ? ["libc.dylib", "libSystem.B.dylib"]
    : ["libc.so.6", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`, "libc.so"];
const ERRNO = process.platform === "darwin" ? "__error" : "__errno_location";

type Libc = { flock(fd: number, op: number): number; errno(): number };
let libc: Libc | undefined;

function load(): Libc {
  const errors: string[] = [];
  for (const name of LIBRARIES) {
    try {
      const { symbols } = dlopen(name, {
        flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
        [ERRNO]: { args: [], returns: FFIType.ptr },
      });
      const where = symbols[ERRNO] as () => number | null;
      return {
        flock: (fd, op) => symbols.flock(fd, op) as number,
        errno: () => {
          const p = where();
          return p ? read.i32(p as never, 0) : -1;
        },
      };
    } catch (e) {
      errors.push(`${name}: ${(e as Error).message}`);
    }
  }
  throw new Error(`cannot load the C library for file locks (${errors.join("; ")})`);
}

/** Applies `op` to `fd`: 0 when done, else the errno (or -1 when it cannot be read). */
export function flock(fd: number, op: number): number {
  libc ??= load();
  return libc.flock(fd, op) === 0 ? 0 : libc.errno() || -1;
}

/** Whether flock's error means another descriptor holds the lock (EWOULDBLOCK). */
export const lockBusy = (errno: number): boolean => errno === (process.platform === "darwin" ? 35 : 11);
