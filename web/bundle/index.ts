// The SDK for a page with no build step: @hostrelay/sdk and
// @hostrelay/netcode (and the parts of @hostrelay/protocol they re-export)
// as one module. The relay serves it at /sdk/<version>/hostrelay.mjs (ES
// module) and hostrelay.js (classic script, the global `HostRelay`), so a
// page's SDK always matches the server it talks to. web/bundle/build.ts
// builds it into static/sdk.
export * from '@hostrelay/sdk';
export * from '@hostrelay/netcode';
export { version as VERSION } from '@hostrelay/sdk/package.json';
