export { runCli } from './cli.js';
export { ApiClient, type ApiClientOptions } from './api/client.js';
export { readJsonFrames, readSseData } from './stream/sse-reader.js';
