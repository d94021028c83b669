export * from './common.js';
export * from './agents.js';
export * from './events.js';
export * from './conversations.js';
export * from './runs.js';
export * from './approvals.js';
export * from './checkpoints.js';
export * from './invisible-text.js';
