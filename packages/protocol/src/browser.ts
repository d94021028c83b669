/*
 * What the browser console takes from the protocol at run time: plain functions and constants,
 * without zod, which the console does not need (it uses the schemas' types only) and whose
 * weight would more than double its bundle.
 */
export * from './audit-actions.js';
export * from './exact-text.js';
export * from './permission-modes.js';
export * from './run-statuses.js';
export * from './webhook-events.js';
