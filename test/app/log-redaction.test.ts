/** Redaction, the logs' second line of defence: secret fields are censored wherever a logger may meet them. */
import { expect, test } from "bun:test";
import { createLogger, flatLogger } from "../../src/kernel/log.ts";

function capture() {
  const lines: Record<string, unknown>[] = [];
  return { log: createLogger("info", { write: (s: string) => void lines.push(JSON.parse(s)) }), lines };
}
const SECRETS = ["secret", "secretKey", "apiKey", "authorization", "transaction"];

test("the logger censors each secret field at the top level and one level down", () => {
  const { log, lines } = capture();
  for (const f of SECRETS) log.info({ [f]: "top", body: { [f]: "nested", kept: 1 }, hash: "h" }, "m");
  expect(lines).toHaveLength(SECRETS.length);
  for (const [i, f] of SECRETS.entries())
    expect(lines[i]).toMatchObject({ [f]: "[redacted]", body: { [f]: "[redacted]", kept: 1 }, hash: "h", msg: "m" });
});

test("the access log's flat logger censors the secret fields and keeps the rest of the line", () => {
  const { log, lines } = capture();
  const access = flatLogger(log);
  for (const f of SECRETS) access.info({ [f]: "value", requestId: "r", status: 200 }, "request");
  for (const [i, f] of SECRETS.entries())
    expect(lines[i]).toEqual({
      level: 30,
      time: expect.any(Number),
      [f]: "[redacted]",
      requestId: "r",
      status: 200,
      msg: "request",
    });
  log.info({ body: { secret: "s" } }, "after"); // the parent keeps its own redaction
  expect(lines.at(-1)).toMatchObject({ body: { secret: "[redacted]" } });
});
