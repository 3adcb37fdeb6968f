/**
 * The relay's keys in PKCS#11 tokens (HSMs), opened before anything else starts: each network's funder
 * (`*_FUNDER_SIGNER`) and the token of the channels' keys (`CHANNEL_SIGNER`). Every token is logged in
 * to and every named key found now, so that a wrong PIN or a missing key ends the start at once, with
 * a message naming the setting, the token and the key, never the PIN.
 */
import type { Config } from "../config.ts";
import type { Logger } from "../kernel/log.ts";
import { Pkcs11Error, Pkcs11Token } from "../kernel/pkcs11/token.ts";
import { parsePkcs11Uri, type Pkcs11Uri } from "../kernel/pkcs11/uri.ts";
import type { NetworkName } from "../stellar/networks.ts";
import { TokenKeypair } from "../stellar/token-keypair.ts";
import { servedNetworks, settingsOf } from "./networks.ts";

export interface Signers {
  /** A network's funder key in a token, if its *_FUNDER_SIGNER is set. */
  funder(network: NetworkName): TokenKeypair | null;
  /** The token of the channels' keys (CHANNEL_SIGNER), if set. */
  channels: Pkcs11Token | null;
}

export async function openSigners(config: Config, log: Logger): Promise<Signers> {
  const tokens = new Map<string, Pkcs11Token>();
  const open = async (setting: string, uri: Pkcs11Uri): Promise<Pkcs11Token> => {
    const key = `${uri.modulePath}\n${uri.token}`;
    const known = tokens.get(key);
    if (known) return known;
    const token = await Pkcs11Token.open(uri).catch((e) => {
      throw e instanceof Pkcs11Error ? new Error(`${setting}: ${e.message}`) : e;
    });
    tokens.set(key, token);
    return token;
  };
  const funders = new Map<NetworkName, TokenKeypair>();
  for (const network of servedNetworks(config)) {
    const { signer: value, signerSetting: setting } = settingsOf(config, network);
    if (!value) continue;
    const uri = parsePkcs11Uri(setting, value, "object");
    const token = await open(setting, uri);
    try {
      funders.set(network, new TokenKeypair(token, token.key(uri.object!)));
    } catch (e) {
      throw e instanceof Pkcs11Error ? new Error(`${setting}: ${e.message}`) : e;
    }
    log.info(
      { network, signer: token.description, funder: funders.get(network)!.publicKey() },
      "funder key in a token",
    );
  }
  const channels = config.CHANNEL_SIGNER
    ? await open("CHANNEL_SIGNER", parsePkcs11Uri("CHANNEL_SIGNER", config.CHANNEL_SIGNER, "token"))
    : null;
  return { funder: (n) => funders.get(n) ?? null, channels };
}
