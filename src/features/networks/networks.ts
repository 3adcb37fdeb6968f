/**
 * The networks a relay serves, by name: each one's passphrase, gateway (RPC, ledger watcher, fee
 * market), submit loop and channel pool, built in one place (src/boot/networks.ts) and looked up
 * here. A network the relay does not serve is NETWORK_NOT_SERVED (400: a retry cannot help); a
 * served one without channel accounts answers 503.
 */
import { RelayError, unavailable } from "../../kernel/errors.ts";
import type { Localnet } from "../../localnet/ledger.ts";
import type { Gateway } from "../../network/gateway.ts";
import type { NetworkName } from "../../stellar/networks.ts";
import type { Submitter } from "../../network/submitter.ts";
import type { ChannelPool } from "../pool/channel-pool.ts";

/** A served network: the parts built from its spec (`specOf(name)`). */
export interface Network {
  name: NetworkName;
  passphrase: string;
  /** RPC calls, the ledger watcher and the fee market. */
  gateway: Gateway;
  /** The submit loop (shared by sponsored transactions and the pool's own). */
  submitter: Submitter;
  /** Its channel accounts; none without a funder (sponsoring answers 503). */
  pool?: ChannelPool;
  /** The embedded network, when there is no upstream RPC. */
  localnet?: Localnet;
  /** Its upstream RPC URL; null: embedded (served under the relay's URL). */
  rpc: string | null;
}

export class Networks {
  private readonly byName: ReadonlyMap<NetworkName, Network>;

  constructor(networks: Network[]) {
    this.byName = new Map(networks.map((n) => [n.name, n]));
  }

  /** A served network; another is NETWORK_NOT_SERVED. */
  get(name: NetworkName): Network {
    const n = this.byName.get(name);
    if (n) return n;
    const served = this.names();
    throw new RelayError("NETWORK_NOT_SERVED", `this relay does not serve ${name}; it serves ${served.join(", ")}`, {
      network: name,
      served,
    });
  }

  /** A served network's channel pool; 503 when it has none. */
  pool(name: NetworkName): ChannelPool {
    const p = this.get(name).pool;
    if (!p) throw unavailable(`no channel accounts are configured for ${name}`, undefined, 30);
    return p;
  }

  find(name: NetworkName): Network | undefined {
    return this.byName.get(name);
  }

  all(): Network[] {
    return [...this.byName.values()];
  }

  names(): NetworkName[] {
    return [...this.byName.keys()];
  }

  /** The networks with a channel pool, by name (GET /metrics, the admin API's channels). */
  pools(): [NetworkName, ChannelPool][] {
    return this.all().flatMap((n) => (n.pool ? [[n.name, n.pool] as [NetworkName, ChannelPool]] : []));
  }
}
