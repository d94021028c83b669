import type * as postgres from './postgres.js';
import type * as sqlite from './sqlite.js';

/*
 * The one repository reads and writes both schemas through the PostgreSQL builder types
 * (dialect.ts). That is sound only while every table gives rows and accepts inserts of identical
 * TypeScript types in both dialects; these assertions stop the build the day they drift apart.
 */

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;

type TableNames = keyof typeof postgres & keyof typeof sqlite;
type RowsMatch = { [K in TableNames]: Same<(typeof postgres)[K]['$inferSelect'], (typeof sqlite)[K]['$inferSelect']> };
type InsertsMatch = { [K in TableNames]: Same<(typeof postgres)[K]['$inferInsert'], (typeof sqlite)[K]['$inferInsert']> };

export type SameTables = Assert<Same<keyof typeof postgres, keyof typeof sqlite>>;
export type SameRows = Assert<RowsMatch[TableNames]>;
export type SameInserts = Assert<InsertsMatch[TableNames]>;
