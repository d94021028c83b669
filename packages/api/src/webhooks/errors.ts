import { ConflictError, NotFoundError, UnprocessableError } from '../errors.js';

/** Also another user's webhook: nobody learns which ids exist. */
export class WebhookNotFoundError extends NotFoundError {
  constructor() {
    super('Webhook not found');
  }
}

export class WebhookLimitError extends ConflictError {
  constructor(max: number) {
    super(`Webhook limit reached (${max}): delete one first`);
  }
}

/** A URL the service will not post to; the detail says why. */
export class WebhookUrlError extends UnprocessableError {}
