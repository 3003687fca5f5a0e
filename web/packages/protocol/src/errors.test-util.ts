import { ProtocolError, type ProtocolErrorKind } from './errors.js';

/** The ProtocolError kind f throws, 'none' if it returns; any other error is rethrown (a test failure). */
export function kindOf(f: () => unknown): ProtocolErrorKind | 'none' {
  try {
    f();
  } catch (err) {
    if (err instanceof ProtocolError) return err.kind;
    throw err;
  }
  return 'none';
}
