import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFile } from '../scripts/lib/check-file.js';
import { createAjv, loadSchemaRegistry, SCHEMA_DIR } from '../scripts/lib/schema-registry.js';
import { selectSchema } from '../scripts/lib/schema-selection.js';
import { runScript } from './helpers/run-script.js';

const registry = loadSchemaRegistry();
const EXAMPLES = join(SCHEMA_DIR, 'examples');

type Json = Record<string, unknown>;
const readJson = (path: string): Json => JSON.parse(readFileSync(path, 'utf8')) as Json;
const listJson = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

/** The errors that explain a failure; Ajv adds an "if" error on top of whatever its "then" rejected. */
function causes(schema: string, data: unknown): { keyword: string; instancePath: string }[] {
  const validate = registry.validator(schema);
  validate(data);
  return (validate.errors ?? []).filter((e) => e.keyword !== 'if').map(({ keyword, instancePath }) => ({ keyword, instancePath }));
}

/**
 * Why each invalid example fails: the one schema keyword and the instance path. This table is
 * where the reasons are documented (schemas/README.md points here); a file without an entry fails.
 */
const INVALID_EXAMPLES: Record<string, { keyword: string; instancePath: string }> = {
  'district/invalid/missing-npc-count.json': { keyword: 'required', instancePath: '' },
  'district/invalid/extra-property.json': { keyword: 'additionalProperties', instancePath: '' },
  'district/invalid/two-segment-canonical-id.json': { keyword: 'pattern', instancePath: '/canonical_id' },
  'district/invalid/duplicate-locations.json': { keyword: 'uniqueItems', instancePath: '/locations' },
  'district/invalid/negative-npc-count.json': { keyword: 'minimum', instancePath: '/npc_count' },
  'district/invalid/capitalised-location.json': { keyword: 'pattern', instancePath: '/locations/1' },
  'location/invalid/district-id-as-location-id.json': { keyword: 'pattern', instancePath: '/id' },
  'location/invalid/unknown-kind.json': { keyword: 'enum', instancePath: '/kind' },
  'location/invalid/zero-capacity.json': { keyword: 'minimum', instancePath: '/capacity' },
  'location/invalid/duplicate-connections.json': { keyword: 'uniqueItems', instancePath: '/connections' },
  'npc-profile/invalid/friend-without-npc.json': { keyword: 'required', instancePath: '/relationships/0' },
  'npc-profile/invalid/friend-by-short-name.json': { keyword: 'pattern', instancePath: '/relationships/0/npc' },
  'npc-profile/invalid/faction-tie-naming-npc.json': { keyword: 'false schema', instancePath: '/relationships/3/npc' },
  'npc-profile/invalid/family-without-relation.json': { keyword: 'required', instancePath: '/relationships/1' },
  'npc-profile/invalid/no-traits.json': { keyword: 'minItems', instancePath: '/traits' },
  'dialogue-pool/invalid/no-lines.json': { keyword: 'minItems', instancePath: '/lines' },
  'dialogue-pool/invalid/zero-weight.json': { keyword: 'exclusiveMinimum', instancePath: '/lines/0/weight' },
  'dialogue-pool/invalid/fact-by-short-name.json': { keyword: 'pattern', instancePath: '/lines/1/requires_facts/0' },
  'monologue-pool/invalid/hour-twenty-four.json': { keyword: 'pattern', instancePath: '/active_hours/to' },
  'monologue-pool/invalid/negative-cooldown.json': { keyword: 'minimum', instancePath: '/cooldown_seconds' },
  'triangle/invalid/two-members.json': { keyword: 'minItems', instancePath: '/members' },
  'triangle/invalid/repeated-member.json': { keyword: 'uniqueItems', instancePath: '/members' },
  'triangle/invalid/tension-eleven.json': { keyword: 'maximum', instancePath: '/tension' },
  'routine/invalid/unknown-day.json': { keyword: 'enum', instancePath: '/days/1' },
  'routine/invalid/entry-without-location.json': { keyword: 'required', instancePath: '/entries/0' },
  'fact-catalog/invalid/truthful-as-text.json': { keyword: 'type', instancePath: '/facts/0/truthful' },
  'fact-catalog/invalid/missing-known-by.json': { keyword: 'required', instancePath: '/facts/1' },
  'fact-catalog/invalid/station-as-district-id.json': { keyword: 'pattern', instancePath: '/district_id' },
};

const examples = (kind: 'valid' | 'invalid'): string[] =>
  registry.names.flatMap((schema) => listJson(join(EXAMPLES, schema, kind)).map((file) => `${schema}/${kind}/${file}`));

describe('schema documents', () => {
  it('covers the eight data schemas SPEC.md names, plus the shared definitions', () => {
    expect([...registry.names].sort()).toEqual(
      ['dialogue-pool', 'district', 'fact-catalog', 'location', 'monologue-pool', 'npc-profile', 'routine', 'triangle'].sort(),
    );
    expect(registry.documents.has('common')).toBe(true);
  });

  it.each([...registry.documents.keys()])('%s is a valid draft 2020-12 schema with an $id', (name) => {
    const document = registry.documents.get(name)!;
    expect(document.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(document.$id).toBe(`https://mada.dev/schemas/${name}.schema.json`);
    const ajv = createAjv();
    expect(ajv.validateSchema(document), JSON.stringify(ajv.errors)).toBe(true);
  });

  it.each(registry.names)('%s compiles in strict mode and forbids unknown top-level properties', (name) => {
    expect(() => registry.validator(name)).not.toThrow();
    expect(registry.documents.get(name)!.additionalProperties).toBe(false);
  });
});

describe('examples', () => {
  it.each(registry.names)('%s has valid and invalid examples', (schema) => {
    expect(listJson(join(EXAMPLES, schema, 'valid')).length).toBeGreaterThan(0);
    expect(listJson(join(EXAMPLES, schema, 'invalid')).length).toBeGreaterThan(0);
  });

  it('documents the reason of every invalid example, and of no file that is missing', () => {
    expect(examples('invalid').sort()).toEqual(Object.keys(INVALID_EXAMPLES).sort());
  });

  it.each(examples('valid'))('%s passes', (file) => {
    expect(causes(file.split('/')[0]!, readJson(join(EXAMPLES, file)))).toEqual([]);
  });

  it.each(Object.entries(INVALID_EXAMPLES))('%s fails for its one documented reason', (file, reason) => {
    expect(causes(file.split('/')[0]!, readJson(join(EXAMPLES, file)))).toEqual([reason]);
  });
});

describe('district rules (SPEC.md section 2)', () => {
  const base = readJson(join(EXAMPLES, 'district/valid/lower-docks.json'));
  const withField = (field: string, value: unknown): Json => ({ ...base, [field]: value });
  const fields = ['canonical_id', 'display_name', 'system', 'station', 'district', 'description', 'locations', 'npc_count'];

  it('accepts the base example', () => {
    expect(causes('district', base)).toEqual([]);
  });

  it.each(fields)('requires %s', (field) => {
    const { [field]: _dropped, ...rest } = base;
    const validate = registry.validator('district');
    expect(validate(rest)).toBe(false);
    expect(validate.errors).toEqual([expect.objectContaining({ keyword: 'required', instancePath: '', params: { missingProperty: field } })]);
  });

  it('rejects a property SPEC.md does not list', () => {
    const validate = registry.validator('district');
    expect(validate({ ...base, population: 1200 })).toBe(false);
    expect(validate.errors).toEqual([
      expect.objectContaining({ keyword: 'additionalProperties', instancePath: '', params: { additionalProperty: 'population' } }),
    ]);
  });

  const patterns: [field: string, good: string[], bad: string[]][] = [
    ['canonical_id', ['kepler.meridian.lower-docks', 'a.b.c', 'a.b.-'], ['kepler.meridian', 'kepler.meridian.lower-docks.bay', 'Kepler.meridian.docks', 'kepler2.meridian.docks', 'kepler.mer-idian.docks', 'kepler.meridian.docks_2', 'kepler.meridian.']],
    ['system', ['kepler'], ['Kepler', 'kepler2', 'kep-ler', '']],
    ['station', ['meridian'], ['Meridian', 'meridian7', 'mer-idian', '']],
    ['district', ['lower-docks', 'docks'], ['lower_docks', 'Lower', 'docks2', '']],
  ];
  describe.each(patterns)('%s pattern', (field, good, bad) => {
    it.each(good)('accepts %j', (value) => expect(causes('district', withField(field, value))).toEqual([]));
    it.each(bad)('rejects %j', (value) => {
      expect(causes('district', withField(field, value))).toEqual([{ keyword: 'pattern', instancePath: `/${field}` }]);
    });
  });

  it.each(['bay-7', 'b', 'cargo-bay-07'])('accepts location name %j', (name) => {
    expect(causes('district', withField('locations', [name]))).toEqual([]);
  });

  it.each(['7-bay', '-bay', 'Bay', 'bay_7', 'bay 7', ''])('rejects location name %j', (name) => {
    expect(causes('district', withField('locations', ['bunkhouse', name]))).toEqual([{ keyword: 'pattern', instancePath: '/locations/1' }]);
  });

  it.each(['display_name', 'description'])('%s must not be empty', (field) => {
    expect(causes('district', withField(field, ''))).toEqual([{ keyword: 'minLength', instancePath: `/${field}` }]);
    expect(causes('district', withField(field, 'x'))).toEqual([]);
  });

  it('needs at least one location', () => {
    expect(causes('district', withField('locations', []))).toEqual([{ keyword: 'minItems', instancePath: '/locations' }]);
  });

  it('rejects a location listed twice', () => {
    expect(causes('district', withField('locations', ['bunkhouse', 'bunkhouse']))).toEqual([
      { keyword: 'uniqueItems', instancePath: '/locations' },
    ]);
  });

  it('rejects locations that are not an array of strings', () => {
    expect(causes('district', withField('locations', 'bunkhouse'))).toEqual([{ keyword: 'type', instancePath: '/locations' }]);
    expect(causes('district', withField('locations', [7]))).toEqual([{ keyword: 'type', instancePath: '/locations/0' }]);
  });

  it.each([0, 1, 250])('accepts npc_count %j', (count) => {
    expect(causes('district', withField('npc_count', count))).toEqual([]);
  });

  it('rejects a negative npc_count', () => {
    expect(causes('district', withField('npc_count', -1))).toEqual([{ keyword: 'minimum', instancePath: '/npc_count' }]);
  });

  it.each([1.5, '3', null, true])('rejects npc_count %j as not an integer', (count) => {
    expect(causes('district', withField('npc_count', count))).toEqual([{ keyword: 'type', instancePath: '/npc_count' }]);
  });

  it.each([[], 'district', null])('rejects a document that is not an object: %j', (data) => {
    expect(causes('district', data)).toEqual([{ keyword: 'type', instancePath: '' }]);
  });
});

describe('npc-profile friend pattern', () => {
  const base = readJson(join(EXAMPLES, 'npc-profile/valid/ada-voss.json'));
  const withTie = (tie: Json): Json => ({ ...base, relationships: [tie] });
  const bram = 'kepler.meridian.lower-docks.bram-okafor';

  it.each(['friend', 'rival', 'colleague', 'romantic'])('a %s tie names the person by full NPC id', (kind) => {
    expect(causes('npc-profile', withTie({ kind, npc: bram }))).toEqual([]);
    expect(causes('npc-profile', withTie({ kind }))).toEqual([{ keyword: 'required', instancePath: '/relationships/0' }]);
    expect(causes('npc-profile', withTie({ kind, npc: 'kepler.meridian.lower-docks' }))).toEqual([
      { keyword: 'pattern', instancePath: '/relationships/0/npc' },
    ]);
  });

  it('a person tie may not also name a faction', () => {
    expect(causes('npc-profile', withTie({ kind: 'friend', npc: bram, faction: 'dockers-union' }))).toEqual([
      { keyword: 'false schema', instancePath: '/relationships/0/faction' },
    ]);
  });

  it('a faction tie names the faction and no person', () => {
    expect(causes('npc-profile', withTie({ kind: 'faction', faction: 'dockers-union' }))).toEqual([]);
    expect(causes('npc-profile', withTie({ kind: 'faction' }))).toEqual([{ keyword: 'required', instancePath: '/relationships/0' }]);
  });

  it('only a family tie carries relation, and it must', () => {
    expect(causes('npc-profile', withTie({ kind: 'family', npc: bram, relation: 'cousin' }))).toEqual([]);
    expect(causes('npc-profile', withTie({ kind: 'friend', npc: bram, relation: 'cousin' }))).toEqual([
      { keyword: 'false schema', instancePath: '/relationships/0/relation' },
    ]);
  });

  it('rejects an impossible date for since', () => {
    expect(causes('npc-profile', withTie({ kind: 'friend', npc: bram, since: '2387-02-30' }))).toEqual([
      { keyword: 'format', instancePath: '/relationships/0/since' },
    ]);
  });
});

describe('schema selection', () => {
  const names = registry.names;

  it('prefers the --schema flag over everything else', () => {
    expect(selectSchema('/data/districts/docks.location.json', names, 'routine')).toBe('routine');
  });

  it('reads a .<schema>.json file name', () => {
    expect(selectSchema('/data/misc/docks.district.json', names)).toBe('district');
    expect(selectSchema('/data/misc/ada.npc-profile.json', names)).toBe('npc-profile');
  });

  it('uses the nearest directory named after a schema, singular or plural', () => {
    expect(selectSchema('/data/districts/docks.json', names)).toBe('district');
    expect(selectSchema('/data/fact-catalogs/docks.json', names)).toBe('fact-catalog');
    expect(selectSchema('/data/districts/location/valid/bar.json', names)).toBe('location');
  });

  it('gives no schema when no rule applies', () => {
    expect(selectSchema('/data/misc/docks.json', names)).toBeUndefined();
  });
});

describe('validate command', () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'mada-validate-'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  const put = (path: string, text: string): string => {
    const file = join(scratch, path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
    return file;
  };

  it('passes a valid file with exit 0 and an ok line', () => {
    const result = runScript('validate', ['schemas/examples/district/valid/lower-docks.json']);
    expect(result.status).toBe(0);
    expect(result.lines).toEqual(['ok schemas/examples/district/valid/lower-docks.json (district)', '1 file checked: 1 valid, 0 invalid']);
  });

  it('fails an invalid file with exit 1 and one line per error: file, pointer, message, keyword', () => {
    const result = runScript('validate', ['schemas/examples/district/invalid/negative-npc-count.json']);
    expect(result.status).toBe(1);
    expect(result.lines).toEqual([
      'schemas/examples/district/invalid/negative-npc-count.json: /npc_count: must be >= 0 [minimum]',
      '1 file checked: 0 valid, 1 invalid',
    ]);
  });

  it('reports every error of a file, the root as (root)', () => {
    const file = put('districts/many.json', JSON.stringify({ ...readJson(join(EXAMPLES, 'district/valid/lower-docks.json')), npc_count: -2, system: 'X', extra: 1 }));
    const result = runScript('validate', [file]);
    expect(result.status).toBe(1);
    expect(result.lines).toEqual(
      expect.arrayContaining([
        `${file}: (root): must NOT have additional properties: "extra" [additionalProperties]`,
        `${file}: /system: must match pattern "^[a-z]+$" [pattern]`,
        `${file}: /npc_count: must be >= 0 [minimum]`,
      ]),
    );
  });

  it('walks a directory, choosing each schema by its directory', () => {
    const result = runScript('validate', ['schemas/examples']);
    expect(result.status).toBe(1);
    const valid = examples('valid').length;
    const invalid = examples('invalid').length;
    expect(result.lines.at(-1)).toBe(`${valid + invalid} files checked: ${valid} valid, ${invalid} invalid`);
    expect(result.lines).toContain('ok schemas/examples/routine/valid/ada-workday.json (routine)');
  });

  it('passes when every file given is valid', () => {
    const result = runScript('validate', ['schemas/examples/district/valid', 'schemas/examples/location/valid']);
    expect(result.status).toBe(0);
    expect(result.lines.at(-1)).toBe('4 files checked: 4 valid, 0 invalid');
  });

  it('takes paths relative to the directory npm was run from', () => {
    const result = runScript('validate', ['examples/district/valid/green-ring.json'], { env: { INIT_CWD: SCHEMA_DIR } });
    expect(result.status).toBe(0);
    expect(result.lines[0]).toBe('ok examples/district/valid/green-ring.json (district)');
  });

  it('applies --schema to files no rule would match', () => {
    const file = put('misc/anything.json', readFileSync(join(EXAMPLES, 'district/valid/green-ring.json'), 'utf8'));
    expect(runScript('validate', ['--schema', 'district', file]).status).toBe(0);
    const result = runScript('validate', ['--schema', 'location', file]);
    expect(result.status).toBe(1);
    expect(result.lines[0]).toBe(`${file}: (root): must have required property 'id' [required]`);
  });

  it('reports a file no rule matches instead of guessing', () => {
    const file = put('misc/unknown.json', '{}');
    const result = runScript('validate', [file]);
    expect(result.status).toBe(1);
    expect(result.lines[0]).toMatch(new RegExp(`^${file}: no schema applies \\(.*--schema.*\\)$`));
  });

  it('reports a file that is not JSON with the position of the problem', () => {
    const file = put('districts/broken.json', '{\n  "canonical_id": "a.b.c",\n  oops\n}\n');
    const result = runScript('validate', [file]);
    expect(result.status).toBe(1);
    expect(result.lines[0]).toMatch(new RegExp(`^${file}: not valid JSON: .*\\(line 3, column 3\\)$`));
  });

  it('reports a file it cannot read', () => {
    const report = checkFile(scratch, 'district', registry);
    expect(report.problems).toEqual([{ pointer: '', message: expect.stringMatching(/^cannot read file: EISDIR/) }]);
  });

  it.each([
    ['no paths', [], /no files or directories given/],
    ['an unknown option', ['--fast', 'schemas/examples'], /Unknown option '--fast'/],
    ['an unknown schema', ['--schema', 'planet', 'schemas/examples'], /unknown schema "planet" \(schemas: .*district/],
    ['a path that does not exist', ['schemas/nowhere.json'], /no such file or directory: schemas\/nowhere\.json/],
    ['a directory without JSON files', ['scripts/lib'], /no JSON files found in scripts\/lib/],
  ])('exits 2 with the usage on stderr for %s', (_case, args, message) => {
    const result = runScript('validate', args);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('usage: npm run validate --');
  });
});
