import { startLocalnet } from "./test/support/localnet.ts";
const t = await startLocalnet({ ledgerCloseMs: 0 });
for (const [body, ct] of [["{bad json", "application/json"], ['{"jsonrpc":"2.0","id":1,"method":"getHealth"}', "text/plain"], ['{"jsonrpc":"2.0","id":1,"method":"getHealth"}', ""], ['[{"jsonrpc":"2.0","id":1,"method":"getHealth"}]', "application/json"], ['{"jsonrpc":"2.0","id":1,"method":"getTransactions","params":{"startLedger":1,"pagination":{"limit":0}}}', "application/json"]]) {
  const r = await fetch(`${t.url}/rpc`, { method: "POST", headers: ct ? { "content-type": ct } : {}, body });
  console.log(r.status, r.headers.get("content-type"), (await r.text()).slice(0, 300));
}
await t.stop();
