// Package netcode speaks the wire format of the TypeScript @hostrelay/netcode
// (web/packages/netcode, docs/netcode.md "Inputs" and "Snapshots"): a Go
// client encodes its inputs and decodes the host's snapshots and deltas
// exactly as a browser tab does, so it can play a game whose host is a tab.
//
// It knows no game: a game is a Schema (its entity fields) and an input
// size; NetClient keeps the sequence numbers, redundancy and baselines.
// Every decoder is bounded by the bytes it is given and the schema's
// MaxEntities, and testdata/vectors.json, generated from the TypeScript
// implementation, pins both sides to the same bytes.
package netcode
