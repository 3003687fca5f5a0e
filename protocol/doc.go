// Package protocol defines hostrelay's lobby and signalling wire format: one
// MessagePack envelope per WebSocket binary frame, the message bodies it
// carries, the limits every peer must respect, and a bounded decoder that is
// safe to run on untrusted bytes.
//
// An envelope is a MessagePack map {"t": type, "id": request id, "b": body}.
// Requests carry a non-zero id; the reply (or an Error) echoes it. Events the
// server sends unprompted carry id 0, which is omitted on the wire.
//
// protocol imports nothing else of hostrelay, so a native client can depend
// on it alone. docs/protocol.md is the prose version of this package.
package protocol
