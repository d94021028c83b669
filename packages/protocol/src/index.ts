export * from './common.js';
export * from './agents.js';
export * from './events.js';
export * from './conversations.js';
