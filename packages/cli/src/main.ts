#!/usr/bin/env node
import { runCli } from './cli.js';

const code = await runCli(process.argv);
process.exitCode = code;
// Idle keep-alive sockets must not hold the process open once the work is done.
setTimeout(() => process.exit(code), 1000).unref();
