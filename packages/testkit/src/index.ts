export {};
export * from './scripted-model/index.js';
export * from './fake-searxng.js';
