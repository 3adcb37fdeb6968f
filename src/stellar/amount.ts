/** Amounts: stroops (bigint) as the 7-decimal XLM strings of Horizon and the SDK's operation builders. */
export function formatXlm(stroops: bigint): string {
  const neg = stroops < 0n;
  const v = neg ? -stroops : stroops;
  return `${neg ? "-" : ""}${v / 10_000_000n}.${(v % 10_000_000n).toString().padStart(7, "0")}`;
}
