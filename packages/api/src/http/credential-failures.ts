import type { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors.js';
import type { AuthFailureLimiter } from './auth-failures.js';
import { LOOPBACK_CLIENT, limitedAddress } from './client-address.js';
import { loopbackOwner } from './loopback-owner.js';

/**
 * Failed credentials of a request's client, whatever they were for (an API key, the metrics
 * token), counted against one limit: past it the client gets 429 for every credential, so none
 * can be guessed at the speed of the network.
 *
 * A client is its address (the forwarded one behind a trusted proxy: `request.ip`), and for a
 * loopback client also the local account that owns its socket. Every account on the machine
 * connects from loopback, so counting by address alone let any of them lock all the others out
 * with 30 bad keys a minute. The owner is looked up (in the kernel's socket tables) once per
 * connection, and only while some client has failed; where it cannot be told, loopback clients
 * share one count as before.
 */
export class CredentialFailures {
  private readonly owners = new WeakMap<Socket, string>();

  constructor(private readonly limiter: AuthFailureLimiter) {}

  /**
   * `identify(request)` once the client is known to be under the limit (429 otherwise); an
   * UnauthorizedError it throws counts as a failure.
   */
  guard<T>(request: FastifyRequest, identify: () => T): T {
    this.limiter.check(this.clientOf(request, false));
    try {
      return identify();
    } catch (error) {
      if (error instanceof UnauthorizedError) this.limiter.recordFailure(this.clientOf(request, true));
      throw error;
    }
  }

  /** guard() for an `identify` that looks the credential up (a stored key). */
  async guardAsync<T>(request: FastifyRequest, identify: () => Promise<T>): Promise<T> {
    this.limiter.check(this.clientOf(request, false));
    try {
      return await identify();
    } catch (error) {
      if (error instanceof UnauthorizedError) this.limiter.recordFailure(this.clientOf(request, true));
      throw error;
    }
  }

  private clientOf(request: FastifyRequest, failing: boolean): string {
    const address = limitedAddress(request.ip);
    const { socket } = request;
    // A forwarded loopback address says nothing about the sockets of this machine.
    const direct = request.ip === socket.remoteAddress;
    if (address !== LOOPBACK_CLIENT || !direct || (!failing && !this.limiter.anyFailures)) return address;
    let key = this.owners.get(socket);
    if (key === undefined) {
      const uid = loopbackOwner(socket);
      key = uid === undefined ? address : `${address} uid ${uid}`;
      this.owners.set(socket, key);
    }
    return key;
  }
}
