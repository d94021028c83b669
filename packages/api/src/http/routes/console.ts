import { existsSync, realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';
import { NotFoundError } from '../../errors.js';

/** Where `npm run build` puts the console (packages/web/dist), from this file in src/ or dist/ alike. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../../../web/dist/', import.meta.url));

/**
 * The console's own pages may load only the service's own files and talk only to it: no inline
 * script or style, nothing from another origin, no plugin, no framing. What the model, a tool or a
 * repository wrote reaches the page as text, and this keeps it from running even if it did not.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface ConsoleRoutesOptions {
  /** The built console; absent or unbuilt, `/app/` says how to build it. */
  dir?: string;
}

/** The browser console at `/app/`: its files, and its index.html for every page path of the app. */
export const consoleRoutes: FastifyPluginAsync<ConsoleRoutesOptions> = async (app, options) => {
  const dir = options.dir ?? CONSOLE_DIR;
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('content-security-policy', CONSOLE_CSP);
    reply.header('referrer-policy', 'no-referrer');
  });
  app.get('/app', { schema: { hide: true } }, (_request, reply) => reply.redirect('/app/', 302));
  if (!existsSync(join(dir, 'index.html'))) {
    app.get('/app/*', { schema: { hide: true } }, async () => {
      throw new NotFoundError('Console not built: run npm run build');
    });
    return;
  }
  // serve: false: only reply.sendFile, confined to `dir` (no `..`, no dotfiles). One route, the
  // same whether or not the console is built, answers every path: a built file under assets/,
  // else the app's page, which then shows the view the path names.
  // Its real path: a link in the built files is followed only to a file that is inside it too.
  const root = realpathSync(dir);
  await app.register(fastifyStatic, { root, serve: false, cacheControl: false });
  app.get('/app/*', { schema: { hide: true } }, async (request, reply) => {
    const path = (request.params as { '*': string })['*'];
    const file = path.startsWith('assets/') ? path : 'index.html';
    await assertInsideConsole(root, file);
    if (file === 'index.html') reply.header('cache-control', 'no-cache');
    return reply.sendFile(file);
  });
};

/**
 * 404 unless the file a console path names is inside the console's real directory once every link
 * on the way is resolved (sendFile then refuses `..` and dotfiles as before). @fastify/static
 * confines the path it is given but follows links: one planted in the built files (by an agent whose workspace holds this
 * checkout) would otherwise serve any file the service can read, to anyone, with no key.
 */
async function assertInsideConsole(root: string, path: string): Promise<void> {
  const real = await realpath(join(root, path)).catch(() => undefined);
  const rel = real === undefined ? '..' : relative(root, real);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new NotFoundError('Not found');
}
