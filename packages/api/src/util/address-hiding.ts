/** Replaces what a keyed user must not learn: where the runtime and the search engine live. */
export type AddressFilter = (text: string) => string;

const HIDDEN = '<internal address>';
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>()]+/gi;
const IPV4_PATTERN = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g;
const BRACKETED_IPV6_PATTERN = /\[[0-9a-f:.]*:[0-9a-f:.]*\](?::\d{1,5})?/gi;
/** Only compressed IPv6 (with `::`), so clock times and ratios stay untouched. */
const IPV6_PATTERN = /(?<![\w:])[0-9a-f]{0,4}(?::[0-9a-f]{0,4})*::[0-9a-f]{0,4}(?::[0-9a-f]{0,4})*(?![\w:])/gi;

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function hostsOf(urls: readonly string[]): string[] {
  const hosts = new Set<string>();
  for (const url of urls) {
    try {
      const parsed = new URL(url);
      const name = parsed.hostname.replace(/^\[|\]$/g, '');
      hosts.add(`${name}:${parsed.port || (parsed.protocol === 'https:' ? '443' : '80')}`);
      // A bare one-word name (`ollama`) is also an ordinary word ("ollama pull"): hidden only with its port.
      if (name.includes('.')) hosts.add(name);
    } catch {
      // A URL that does not parse names no host to hide.
    }
  }
  // Longest first, so `host:port` goes before the bare `host`.
  return [...hosts].sort((a, b) => b.length - a.length);
}

/**
 * Hides URLs, IP addresses and the configured services' host names. Local mode shows everything
 * (the user runs the runtime themselves); keyed mode gets this filter, and the log keeps the
 * unfiltered text.
 */
export function addressFilter(internalUrls: readonly string[]): AddressFilter {
  const hosts = hostsOf(internalUrls);
  const named = hosts.length === 0 ? null : new RegExp(`(?<![\\w.-])(?:${hosts.map(escape).join('|')})(?::\\d{1,5})?(?![\\w-])`, 'gi');
  return (text) => {
    let out = text.replace(URL_PATTERN, HIDDEN).replace(BRACKETED_IPV6_PATTERN, HIDDEN).replace(IPV4_PATTERN, HIDDEN);
    out = out.replace(IPV6_PATTERN, (match) => (match.includes('::') && match.length > 2 ? HIDDEN : match));
    return named ? out.replace(named, HIDDEN) : out;
  };
}

export const showAddresses: AddressFilter = (text) => text;
