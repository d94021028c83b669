export { buildApp, type AppDeps } from './app.js';
export { loadSettings, SettingsError, type Settings } from './settings.js';
