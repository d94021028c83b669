import type { SandboxAvailability } from './launcher.js';

/**
 * What `bash`'s network reaches, for `/health` and the start-up log. `host` means the host's own
 * network namespace: the internet, but also whatever listens on the host's loopback (this
 * service's API, a database trusting local connections) and abstract unix sockets; `own` is a
 * namespace of its own uplinked by slirp4netns (the internet, not the host's loopback). Falling
 * back to `host` is said plainly, so the default never fails open silently.
 */
export type BashNetwork = 'own' | 'host' | 'none';

export function bashNetwork(settings: { sandboxNetwork: boolean }, sandbox: Pick<SandboxAvailability, 'state' | 'slirpPath'>): BashNetwork {
  // With the sandbox unavailable `bash` refuses to run; with it disabled it runs as the service.
  if (sandbox.state === 'unavailable') return 'none';
  if (sandbox.state === 'disabled') return 'host';
  if (!settings.sandboxNetwork) return 'none';
  return sandbox.slirpPath === undefined ? 'host' : 'own';
}

/** The start-up warning for `host`, or nothing. */
export function hostNetworkWarning(
  settings: { sandboxNetwork: boolean; apiKeys: readonly unknown[] },
  sandbox: Pick<SandboxAvailability, 'state' | 'slirpPath' | 'hostNetworkReason'>,
): string | undefined {
  if (bashNetwork(settings, sandbox) !== 'host') return undefined;
  const why = sandbox.hostNetworkReason === undefined ? '' : ` (${sandbox.hostNetworkReason}; install slirp4netns for a network of its own)`;
  const api = settings.apiKeys.length === 0 ? "this service's own API asks no key (local mode), so a prompt-injected bash can approve its own approvals and start runs" : "this service's API still needs a key";
  return `bash shares the host's network (SANDBOX_NETWORK=true)${why}: it can reach services on 127.0.0.1 and abstract unix sockets; ${api}. Set SANDBOX_NETWORK=false, or API_KEYS, on a machine with loopback services`;
}
