import { describe, expect, it } from 'vitest';
import { addressFilter } from '../../src/util/address-hiding.js';

const hide = addressFilter(['http://ollama:11434', 'http://searxng.internal:8080']);

describe('the address filter for keyed users', () => {
  it('hides URLs, IP addresses with or without a port, and the configured host names', () => {
    expect(hide('Model runtime unreachable at http://10.1.2.3:11434/api (ECONNREFUSED)')).toBe('Model runtime unreachable at <internal address> (ECONNREFUSED)');
    expect(hide('connect ECONNREFUSED 127.0.0.1:11434')).toBe('connect ECONNREFUSED <internal address>');
    expect(hide('connect ECONNREFUSED ::1:8080')).toBe('connect ECONNREFUSED <internal address>');
    expect(hide('failed at [fd00::5]:80')).toBe('failed at <internal address>');
    expect(hide('getaddrinfo ENOTFOUND searxng.internal')).toBe('getaddrinfo ENOTFOUND <internal address>');
    expect(hide('socket hang up talking to ollama:11434')).toBe('socket hang up talking to <internal address>');
  });

  it('leaves ordinary words, times and code alone', () => {
    for (const text of ['Model "llama3" not found', 'took 12:30:45', 'std::vector failed', 'pull it with: ollama pull qwen2.5-coder:7b']) {
      expect(hide(text)).toBe(text);
    }
  });
});
