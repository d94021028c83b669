import { describe, expect, it } from 'vitest';
import { ago, uniqueShortIds } from '../../src/ui/table.js';

describe('uniqueShortIds', () => {
  it('shows 8 characters of ids that differ there, and as many more as two sharing a start need', () => {
    const ids = ['6698088f-0000-4000-8000-000000000001', '6698088f-1000-4000-8000-000000000002', '0badcafe-0000-4000-8000-000000000003', '6698088a-0000-4000-8000-000000000004'];
    const shown = uniqueShortIds(ids);
    expect(shown).toEqual(['6698088f-0', '6698088f-1', '0badcafe', '6698088a']);
    // Each shown prefix starts exactly one of the ids: typed back, it names that one.
    shown.forEach((prefix, index) => expect(ids.filter((id) => id.startsWith(prefix))).toEqual([ids[index]]));
  });

  it('keeps the whole id when another starts with it (never so of UUIDs), and the order given', () => {
    expect(uniqueShortIds(['abcdef0123', 'abcdef01'])).toEqual(['abcdef012', 'abcdef01']);
    expect(uniqueShortIds([])).toEqual([]);
  });
});

describe('ago', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  it('says how long ago in a word that fits a narrow column', () => {
    expect(ago('2026-03-01T11:59:30Z', now)).toBe('just now');
    expect(ago('2026-03-01T11:15:00Z', now)).toBe('45m ago');
    expect(ago('2026-02-28T13:00:00Z', now)).toBe('23h ago');
    expect(ago('2025-03-01T12:00:00Z', now)).toBe('365d ago');
  });
});
