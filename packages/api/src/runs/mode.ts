import { PermissionMode } from '@mada/protocol';

/** A stored run's mode; only validated modes are ever stored, so anything else is a bug worth hearing of. */
export function modeOf(stored: string): PermissionMode {
  return PermissionMode.parse(stored);
}
