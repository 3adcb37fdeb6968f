import { expect, test } from "bun:test";
import { nextStatus, STATUSES, statusTable } from "../../actors/sponsor/submission.machine.ts";

test("the lifecycle: pending -> submitted -> success or failed; rejected and expired can be sent again", () => {
  expect(nextStatus("pending", "ACCEPTED")).toBe("submitted");
  expect(nextStatus("submitted", "SUCCEEDED")).toBe("success");
  expect(nextStatus("submitted", "FAILED")).toBe("failed");
  expect(nextStatus("pending", "REJECTED")).toBe("rejected");
  expect(nextStatus("submitted", "EXPIRED")).toBe("expired");
  expect(nextStatus("rejected", "SEND")).toBe("pending");
  expect(nextStatus("expired", "SEND")).toBe("pending");
  // the chain is believed over an earlier verdict
  expect(nextStatus("expired", "SUCCEEDED")).toBe("success");
  expect(nextStatus("rejected", "FAILED")).toBe("failed");
});

test("success and failed are final: no event moves them", () => {
  for (const e of ["SEND", "ACCEPTED", "SUCCEEDED", "FAILED", "REJECTED", "EXPIRED"] as const) {
    expect(nextStatus("success", e)).toBe("success");
    expect(nextStatus("failed", e)).toBe("failed");
  }
});

test("events that change nothing leave the status as it is; the table lists only changes", () => {
  expect(nextStatus("submitted", "ACCEPTED")).toBe("submitted");
  expect(nextStatus("pending", "SEND")).toBe("pending");
  expect(statusTable("ACCEPTED")).toEqual([["pending", "submitted"]]);
  for (const [from, to] of statusTable("REJECTED")) {
    expect(STATUSES).toContain(from);
    expect(to).toBe("rejected");
  }
});
