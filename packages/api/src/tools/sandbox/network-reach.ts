import type { SandboxState } from './launcher.js';

/**
 * What `bash`'s network reaches, for `/health` and the start-up log. `host` means the host's own
 * network namespace: the internet, but also whatever listens on the host's loopback (this
 * service's API, a database trusting local connections) and abstract unix sockets. No isolated
 * variant exists yet; saying `host` plainly is what keeps the default from failing open silently.
 */
export type BashNetwork = 'host' | 'none';

export function bashNetwork(settings: { sandboxNetwork: boolean }, state: SandboxState): BashNetwork {
  // With the sandbox unavailable `bash` refuses to run; with it disabled it runs as the service.
  if (state === 'unavailable') return 'none';
  if (state === 'disabled') return 'host';
  return settings.sandboxNetwork ? 'host' : 'none';
}

/** The start-up warning for `host`, or nothing. */
export function hostNetworkWarning(settings: { sandboxNetwork: boolean; apiKeys: readonly unknown[] }, state: SandboxState): string | undefined {
  if (bashNetwork(settings, state) !== 'host') return undefined;
  const api = settings.apiKeys.length === 0 ? "this service's own API asks no key (local mode), so a prompt-injected bash can approve its own approvals and start runs" : "this service's API still needs a key";
  return `bash shares the host's network (SANDBOX_NETWORK=true): it can reach services on 127.0.0.1 and abstract unix sockets; ${api}. Set SANDBOX_NETWORK=false, or API_KEYS, on a machine with loopback services`;
}
