// The script-tag SDK re-exports the packages' whole runtime API: a page
// that loads /sdk/<version>/hostrelay.mjs can do whatever an npm install can.
import * as netcode from '@hostrelay/netcode';
import * as sdk from '@hostrelay/sdk';
import { version } from '@hostrelay/sdk/package.json';
import { describe, expect, it } from 'vitest';
import * as bundle from './index';

describe('web/bundle', () => {
  it('exports every runtime export of @hostrelay/sdk and @hostrelay/netcode, and the version', () => {
    const want = [...Object.keys(sdk), ...Object.keys(netcode), 'VERSION'].sort();
    expect(Object.keys(bundle).sort()).toEqual(want);
    expect(new Set(want).size).toBe(want.length); // no name in both packages
    expect(bundle.VERSION).toBe(version);
    expect(bundle.LobbyClient).toBe(sdk.LobbyClient);
    expect(bundle.NetHost).toBe(netcode.NetHost);
  });
});
