import { it } from 'vitest';
import { createTestApp } from '../support/app.js';
import { openSocket, readUntilClosed } from '../support/raw-http.js';

async function raw(base: string, text: string): Promise<string> {
  const s = await openSocket(base);
  const done = readUntilClosed(s);
  s.end(text);
  const t = await Promise.race([done, new Promise<string>((r) => setTimeout(() => { s.destroy(); r('TIMEOUT'); }, 2000))]);
  return t.split('\r\n')[0] + ' | ' + t.slice(t.indexOf('\r\n\r\n') + 4).slice(0, 150);
}

it('probe raw', async () => {
  const t = await createTestApp();
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const out: string[] = [];
  const c = 'Connection: close\r\n';
  out.push('empty host ' + await raw(base, `GET /agents/ HTTP/1.1\r\nHost: \r\n${c}\r\n`));
  out.push('no host 1.1 ' + await raw(base, `GET /agents/ HTTP/1.1\r\n${c}\r\n`));
  out.push('host tab ' + await raw(base, `GET /agents/ HTTP/1.1\r\nHost:\t127.0.0.1\t\r\n${c}\r\n`));
  out.push('abs https ' + await raw(base, `GET https://evil.example:443/agents/ HTTP/1.1\r\nHost: localhost\r\n${c}\r\n`));
  out.push('CONNECT ' + await raw(base, `CONNECT evil.example:443 HTTP/1.1\r\nHost: localhost\r\n${c}\r\n`));
  out.push('asterisk OPTIONS ' + await raw(base, `OPTIONS * HTTP/1.1\r\nHost: localhost\r\n${c}\r\n`));
  out.push('invalid utf8 path ' + await raw(base, `GET /conversations/\xff\xfe HTTP/1.1\r\nHost: localhost\r\n${c}\r\n`));
  out.push('utf8 json invalid ' + await raw(base, `POST /conversations/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 30\r\n${c}\r\n{"agent_type":"task","title":"\xff\xfe"}`.slice(0, 200)));
  out.push('TE+CL ' + await raw(base, `POST /conversations/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n${c}\r\n0\r\n\r\n`));
  out.push('chunked big ' + await raw(base, `POST /conversations/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n${c}\r\n` + `100000\r\n` + 'a'.repeat(0x100000) + '\r\n' + '200000\r\n' + 'a'.repeat(0x200000) + '\r\n0\r\n\r\n'));
  out.push('gzip ' + await raw(base, `POST /conversations/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 21\r\n${c}\r\n{"agent_type":"task"}`));
  out.push('many headers ' + await raw(base, `GET /agents/ HTTP/1.1\r\nHost: localhost\r\n` + 'a: b\r\n'.repeat(3000) + c + '\r\n'));
  out.push('bad json ' + await raw(base, `POST /conversations/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 5\r\n${c}\r\n{"a":`));
  out.push('empty json ' + await raw(base, `POST /conversations/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 0\r\n${c}\r\n`));
  out.push('proto ' + await raw(base, `POST /conversations/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 56\r\n${c}\r\n{"agent_type":"task","constructor":{"prototype":{"x":1}}}`));
  out.push('text/plain revert ' + await raw(base, `POST /runs/00000000-0000-4000-8000-000000000000/revert HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n${c}\r\n`));
  out.push('form cancel ' + await raw(base, `POST /runs/00000000-0000-4000-8000-000000000000/cancel HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 0\r\n${c}\r\n`));
  out.push('text cancel ' + await raw(base, `POST /runs/00000000-0000-4000-8000-000000000000/cancel HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n${c}\r\nabc`));
  out.push('HEAD events ' + await raw(base, `HEAD /runs/00000000-0000-4000-8000-000000000000/events HTTP/1.1\r\nHost: localhost\r\n${c}\r\n`));
  out.push('metrics ' + (await raw(base, `GET /metrics HTTP/1.1\r\nHost: localhost\r\n${c}\r\n`)).slice(0, 40));
  console.log(out.join('\n'));
  const m = await fetch(base + '/metrics');
  console.log((await m.text()).split('\n').filter((l) => l.startsWith('http_requests')).join('\n'));
  await t.close();
}, 60000);
