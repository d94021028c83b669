#!/usr/bin/env node
import { runCli } from './cli.js';

// A reader that stops early (`mada --help | head -1`) is the end of the output, not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

const code = await runCli(process.argv);
process.exitCode = code;
// Idle keep-alive sockets must not hold the process open once the work is done.
setTimeout(() => process.exit(code), 1000).unref();
